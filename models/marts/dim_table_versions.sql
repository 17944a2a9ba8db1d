-- One row per version of a table's layout, every source: its columns (names, SQL types, key)
-- and the log positions between which it is in force. The layout in force at position P:
-- `(valid_from_position is null or valid_from_position <= P)
--  and (valid_to_position is null or P < valid_to_position)`.
-- Each source's int_<source>_table_versions_standardized feeds it. A table the log changes
-- that nothing in its capture describes (a Log Master extract without its control file, a
-- Db2 LUW table neither in the catalog export nor described by a log record) has one version
-- of layout_source 'unknown', without columns, so that every change finds its table.
with

versions as (
    {% for source in logmart_sources() -%}
        select
            source_system,
            capture,
            table_object_id,
            table_schema,
            table_name,
            version_number,
            valid_from_position,
            valid_to_position,
            ended_by,
            layout_source,
            columns,
            key_columns
        from {{ ref('int_' ~ source ~ '_table_versions_standardized') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

undescribed_tables as (
    select distinct
        changes.source_system,
        changes.capture,
        concat_ws('.', changes.table_schema, changes.table_name) as table_object_id,
        changes.table_schema,
        changes.table_name,  -- noqa: RF04
        1 as version_number,
        cast(null as string) as valid_from_position,
        cast(null as string) as valid_to_position,
        cast(null as string) as ended_by,
        'unknown' as layout_source,
        {{ table_version_columns(
            'cast(null as array<string>)', 'cast(null as array<string>)', 'array()'
        ) }} as columns,  -- noqa: RF04
        cast(array() as array<string>) as key_columns
    from {{ ref('fct_changes') }} as changes
    left anti join versions
        on
            changes.source_system = versions.source_system
            and changes.capture = versions.capture
            and changes.table_schema <=> versions.table_schema
            and changes.table_name = versions.table_name
),

every_version as (
    select * from versions
    union all
    select * from undescribed_tables
)

select
    concat_ws(':', source_system, capture, table_object_id, concat('v', version_number))
        as table_version_id,
    source_system,
    capture,
    table_object_id,
    table_schema,
    table_name,
    version_number,
    valid_from_position,
    valid_to_position,
    valid_to_position is null as is_current,
    ended_by,
    layout_source,
    case when columns is not null then size(columns) end as column_count,
    columns,
    {{ table_version_layout('columns') }} as column_layout,
    coalesce(key_columns, array()) as key_columns
from every_version

-- One row per version of a table's layout, every source: its columns (names, SQL types, key)
-- and the log positions between which it is in force. The layout in force at position P:
-- `(valid_from_position is null or valid_from_position <= P)
--  and (valid_to_position is null or P < valid_to_position)`.
-- Each source's int_<source>_table_versions_standardized feeds it.
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
from versions

-- Schema as of any position: every change of fct_changes finds exactly one version of its
-- table in dim_table_versions at its log position, and that version has every column of the
-- change's row images. Fails with one row per change that does not, saying how many
-- versions it found and which image columns the version lacks.
with

changes as (
    select
        change_id,
        source_system,
        capture,
        table_schema,
        table_name,
        log_position,
        map_keys(coalesce(after_image, before_image)) as image_columns
    from {{ ref('fct_changes') }}
),

versions as (
    select * from {{ ref('dim_table_versions') }}
),

matched as (
    select
        changes.change_id,
        changes.source_system,
        changes.table_name,
        changes.log_position,
        changes.image_columns,
        versions.table_version_id,
        transform(versions.columns, c -> c.column_name) as version_columns
    from changes
    left join versions
        on
            changes.source_system = versions.source_system
            and changes.capture = versions.capture
            and changes.table_schema <=> versions.table_schema
            and changes.table_name = versions.table_name
            and coalesce(changes.log_position >= versions.valid_from_position, true)
            and coalesce(changes.log_position < versions.valid_to_position, true)
),

found as (
    select
        change_id,
        source_system,
        table_name,
        log_position,
        count(table_version_id) as versions_found,
        array_except(
            first(image_columns), coalesce(first(version_columns, true), array())
        ) as columns_missing
    from matched
    group by change_id, source_system, table_name, log_position
)

select * from found
where versions_found != 1 or size(columns_missing) > 0

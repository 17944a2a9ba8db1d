-- solidDB table versions (int_soliddb_table_versions) in the contract of dim_table_versions:
-- positions as LOGADDRs in 40 hex digits (as fct_changes.log_position), null for the catalog
-- export's layout (in force from the start of the capture). A version begins at the SQL
-- record of the statement that made it; a DROP TABLE ends the version before it and makes
-- no version of its own. Statements that could not be applied (version_error) are not
-- versions.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

entries as (
    select
        *,
        lead(is_dropped) over (
            partition by capture, rel_id order by valid_from_logaddr
        ) as next_is_dropped
    from {{ ref('int_soliddb_table_versions') }}
    where version_error is null
),

standardized as (
    select
        source_system,
        capture,
        concat('RELID=', rel_id) as table_object_id,
        table_schema,
        table_name,
        row_number() over (
            partition by capture, rel_id order by valid_from_logaddr
        ) as version_number,
        nullif(valid_from_logaddr, '') as valid_from_position,
        valid_to_logaddr as valid_to_position,
        case
            when next_is_dropped then 'drop'
            when valid_to_logaddr is not null then 'new_version'
        end as ended_by,
        origin as layout_source,
        {{ table_version_columns(
            'column_names', "transform(column_names, n -> column_types[n])", 'key_columns'
        ) }} as columns,  -- noqa: RF04
        key_columns
    from entries
    where not is_dropped
)

select * from standardized

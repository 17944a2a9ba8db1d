-- Log Master table versions (DTBI records, their columns from DLCI) in the contract of
-- dim_table_versions. A table with one version uses it for every change of the extract (as
-- the row image decoder does), whatever its CREATERBA/DROPRBA say; with several, a version is
-- in force from its CREATERBA to the next version's CREATERBA or its own DROPRBA.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

layouts as (
    select * from {{ ref('int_logmaster_table_layouts') }}
),

bounded as (
    select
        *,
        case
            when version_count > 1 and not {{ is_zero_position('createrba') }} then createrba
        end as created_at,
        case
            when version_count > 1 and not {{ is_zero_position('droprba') }} then droprba
        end as dropped_at,
        row_number() over (
            partition by capture, dbid, tbobid order by sequencenumber
        ) as version_number
    from layouts
),

next_versions as (
    select
        *,
        lead(created_at) over (
            partition by capture, dbid, tbobid order by sequencenumber
        ) as next_created_at
    from bounded
),

versions as (
    select
        'db2zos' as source_system,
        capture,
        concat('DBID=', dbid, ',OBID=', tbobid) as table_object_id,
        table_schema,
        table_name,
        version_number,
        created_at as valid_from_position,
        least(dropped_at, next_created_at) as valid_to_position,  -- least skips nulls
        case
            when dropped_at <= coalesce(next_created_at, dropped_at) then 'drop'
            when next_created_at is not null then 'new_version'
        end as ended_by,
        'control_file' as layout_source,
        {{ table_version_columns('column_names', 'column_types', 'key_columns') }}
            as columns,  -- noqa: RF04
        key_columns
    from next_versions
)

select * from versions

-- Db2 LUW table versions (int_db2luw_table_versions) in the contract of dim_table_versions:
-- positions as LSNs in 16 hex digits (the first digits of fct_changes.log_position), null
-- for the layout in force from the start of the capture. A table created inside the capture
-- (initialize-table record) has no version before its creation: the catalog export's layout
-- the decoder keeps for the positions before it is left out. A committed DROP TABLE ends
-- the version in force at it. A data partition's versions are left out: its rows are its
-- table's, whose own versions describe them (docs/db2luw.md interpretation 21).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

versions as (
    select
        *,
        lead(layout_source) over (
            partition by capture, table_space_identifier, table_identifier
            order by version_number
        ) as next_layout_source
    from {{ ref('int_db2luw_table_versions') }}
    where layout_error is null and master_table_identifier is null
),

drops as (
    select
        capture,
        table_space_identifier,
        table_identifier,
        lsn
    from {{ ref('int_db2luw_catalog_events_extracted') }}
    where event_kind = 'ddl_drop_table' and is_committed
),

kept as (
    select * from versions
    where not (layout_source = 'catalog' and coalesce(next_layout_source, '') = 'initialize_table')
),

ended as (
    select
        kept.capture,
        kept.table_space_identifier,
        kept.table_identifier,
        kept.version_number,
        min(drops.lsn) as dropped_lsn
    from kept
    inner join drops
        on
            kept.capture = drops.capture
            and kept.table_space_identifier = drops.table_space_identifier
            and kept.table_identifier = drops.table_identifier
            and kept.valid_from_lsn < drops.lsn
            and (kept.valid_to_lsn is null or kept.valid_to_lsn > drops.lsn)
    group by
        kept.capture, kept.table_space_identifier, kept.table_identifier, kept.version_number
),

standardized as (
    select
        'db2luw' as source_system,
        kept.capture,
        concat(
            'TBSPACEID=', kept.table_space_identifier, ',TABLEID=', kept.table_identifier
        ) as table_object_id,
        kept.table_schema,
        kept.table_name,
        row_number() over (
            partition by kept.capture, kept.table_space_identifier, kept.table_identifier
            order by kept.version_number
        ) as version_number,
        case
            when kept.valid_from_lsn >= 0 then lpad(hex(kept.valid_from_lsn), 16, '0')
        end as valid_from_position,
        lpad(hex(coalesce(ended.dropped_lsn, kept.valid_to_lsn)), 16, '0') as valid_to_position,
        case
            when ended.dropped_lsn is not null then 'drop'
            when kept.valid_to_lsn is not null then 'new_version'
        end as ended_by,
        kept.layout_source,
        {{ table_version_columns('kept.column_names', 'kept.column_types', 'kept.key_columns') }}
            as columns,  -- noqa: RF04
        kept.key_columns
    from kept
    left join ended
        on
            kept.capture = ended.capture
            and kept.table_space_identifier = ended.table_space_identifier
            and kept.table_identifier = ended.table_identifier
            and kept.version_number = ended.version_number
)

select * from standardized

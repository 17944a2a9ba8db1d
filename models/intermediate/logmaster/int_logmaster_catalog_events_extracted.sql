-- Log Master records that are not row changes: catalog objects (CO), exchanges (E), Db2
-- commands (CM) and status changes (SC), kept with their DATA for the DDL mart.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

changes as (
    select
        changes.*,
        change_types.change_kind as event_kind
    from {{ ref('int_logmaster_changes_reassembled') }} as changes
    inner join {{ ref('logmaster_change_types') }} as change_types
        on changes.change_type = change_types.change_type
    where changes.reassembly_error is null and not change_types.is_row_change
),

table_names as (
    select
        capture,
        dbid,
        tbobid,
        max(table_schema) as table_schema,
        max(table_name) as table_name
    from {{ ref('int_logmaster_table_layouts') }}
    group by capture, dbid, tbobid
),

named as (
    select
        concat('db2zos:', changes.raw_file, ':', changes.raw_offset) as event_id,
        changes.source_system,
        changes.capture,
        changes.raw_file,
        changes.raw_offset,
        changes.raw_records,
        changes.change_type as source_change_type,
        changes.event_kind,
        coalesce(table_names.table_schema, changes.tableowner) as table_schema,
        coalesce(table_names.table_name, changes.tablename) as table_name,
        changes.dbid,
        changes.tbobid,
        {{ logmaster_transaction_id('changes.uorid', 'changes.memberid') }} as transaction_id,
        changes.uordisp,
        changes.logrecdisp,
        changes.uorcommitlrsn,
        changes.loglrsn,
        changes.logrba,
        changes.log_timestamp as event_ts,
        changes.uorcommittimestamp as commit_ts,
        changes.authid,
        changes.data,
        hex(changes.data) as data_hex
    from changes
    left join table_names
        on
            changes.capture = table_names.capture
            and changes.dbid = table_names.dbid
            and changes.tbobid = table_names.tbobid
)

select * from named

-- solidDB DDL events in the contract of fct_schema_changes: one row per DDL statement. solidDB
-- logs a statement as a DDL record (RECID 13: LOGRECID and INFO) and an SQL record (RECID 6:
-- its text) of the same transaction and statement (STMTTRXID); the n-th DDL record of a
-- statement is paired with its n-th SQL record and is the event, with that text. An SQL
-- record without a DDL record is an event of its own. The kind comes from the LOGRECID (seed
-- soliddb_ddl_logrecids), an ALTER TABLE's from its text. The table's column layout before
-- and after comes from the table's versions (a version begins at the statement's SQL record).
-- An index event names the table of its RELID. Statements of CAPTURE_OFF transactions are
-- left out, as their changes are left out of fct_changes (their layouts still count). A
-- truncate is also a change in fct_changes, with the same id.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

events as (
    select
        *,
        row_number() over (
            partition by capture, transaction_id, stmttrxid, record_kind
            order by log_position
        ) as place_in_statement
    from {{ ref('int_soliddb_catalog_events_extracted') }}
    where not is_capture_off_transaction
),

ddl_records as (
    select * from events
    where record_kind = 'ddl'
),

sql_records as (
    select * from events
    where record_kind = 'sql'
),

paired as (
    select
        coalesce(ddl_records.event_id, sql_records.event_id) as event_id,
        coalesce(ddl_records.capture, sql_records.capture) as capture,
        coalesce(ddl_records.relid, sql_records.relid) as relid,
        coalesce(ddl_records.table_schema, sql_records.table_schema) as table_schema,
        coalesce(ddl_records.table_name, sql_records.table_name) as table_name,
        ddl_records.ddl_operation,
        ddl_records.object_type,
        ddl_records.ddl_info,
        ddl_records.ddl_logrecid,
        sql_records.sql_text,
        sql_records.sql_kind,
        sql_records.log_position as sql_log_position,
        coalesce(ddl_records.source_change_type, sql_records.source_change_type)
            as source_change_type,
        coalesce(ddl_records.transaction_id, sql_records.transaction_id) as transaction_id,
        coalesce(ddl_records.transaction_disposition, sql_records.transaction_disposition)
            as transaction_disposition,
        coalesce(ddl_records.commit_position, sql_records.commit_position) as commit_position,
        coalesce(ddl_records.log_position, sql_records.log_position) as log_position,
        coalesce(ddl_records.raw_file, sql_records.raw_file) as raw_file,
        coalesce(ddl_records.raw_offset, sql_records.raw_offset) as raw_offset
    from ddl_records
    full outer join sql_records
        on
            ddl_records.capture = sql_records.capture
            and ddl_records.transaction_id = sql_records.transaction_id
            and ddl_records.stmttrxid = sql_records.stmttrxid
            and ddl_records.place_in_statement = sql_records.place_in_statement
),

versions as (
    select
        capture,
        table_object_id,
        table_schema,
        table_name,
        valid_from_position,
        valid_to_position,
        {{ table_version_layout('columns') }} as column_layout
    from {{ ref('int_soliddb_table_versions_standardized') }}
),

standardized as (
    select
        paired.event_id as schema_change_id,
        'soliddb' as source_system,
        paired.capture,
        -- an index names its table by RELID: the table's name in force at the event
        coalesce(paired.table_schema, indexed_tables.table_schema) as table_schema,
        coalesce(paired.table_name, indexed_tables.table_name) as table_name,
        case
            when paired.ddl_operation = 'rename_table' then paired.ddl_info
            when paired.object_type != 'table' then paired.ddl_info
            when paired.ddl_operation is null then {{ ddl_statement_object('paired.sql_text') }}
        end as object_name,
        case
            when paired.ddl_operation = 'alter_table' or paired.ddl_operation is null
                then case paired.sql_kind
                    when 'create_table' then 'create_table'
                    when 'drop_table' then 'drop_table'
                    when 'rename_table' then 'rename_table'
                    when 'truncate_table' then 'truncate'
                    when 'add_column' then 'add_column'
                    when 'drop_column' then 'drop_column'
                    when 'rename_column' then 'rename_column'
                    when 'modify_column' then 'alter_column'
                    when 'add_primary_key' then 'alter_table'
                    else
                        coalesce(
                            nullif({{ ddl_statement_kind('paired.sql_text') }}, 'other_ddl'),
                            if(paired.ddl_operation = 'alter_table', 'alter_table', 'other_ddl')
                        )
                end
            when paired.ddl_operation = 'truncate_table' then 'truncate'
            else paired.ddl_operation
        end as change_kind,
        paired.source_change_type,
        old_versions.column_layout as old_definition,
        new_versions.column_layout as new_definition,
        paired.sql_text,
        case
            when paired.ddl_logrecid is not null and paired.ddl_operation is null
                then concat('LOGRECID ', paired.ddl_logrecid, ', INFO ', paired.ddl_info)
        end as details,
        paired.transaction_id,
        coalesce(paired.transaction_disposition, 'in_flight') as disposition,
        coalesce(paired.transaction_disposition, 'in_flight') as transaction_disposition,
        paired.commit_position,
        cast(null as timestamp) as commit_ts,
        paired.log_position,
        cast(null as timestamp) as event_ts,
        cast(null as string) as authid,
        paired.raw_file,
        paired.raw_offset
    from paired
    left join versions as old_versions
        on
            paired.capture = old_versions.capture
            and concat('RELID=', paired.relid) = old_versions.table_object_id
            and paired.sql_log_position = old_versions.valid_to_position
    left join versions as new_versions
        on
            paired.capture = new_versions.capture
            and concat('RELID=', paired.relid) = new_versions.table_object_id
            and paired.sql_log_position = new_versions.valid_from_position
    left join versions as indexed_tables
        on
            paired.capture = indexed_tables.capture
            and concat('RELID=', paired.relid) = indexed_tables.table_object_id
            and paired.object_type = 'index'
            and coalesce(indexed_tables.valid_from_position, '') <= paired.log_position
            and coalesce(paired.log_position < indexed_tables.valid_to_position, true)
)

select * from standardized

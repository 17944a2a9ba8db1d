-- solidDB DDL records (RECID 13: create/drop/rename/alter/truncate table, create/drop index,
-- view, sequence, counter) and the SQL text of DDL statements (RECID 6), decoded, with the
-- table they are about and their transaction, for the DDL mart. A table DDL record names its
-- table by the layout of its RELID in force just before it, else by its INFO; an SQL record by
-- its statement. Records that could not be decoded, or whose statement could not be applied to
-- the table layouts, are not here: they are quarantined.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

statements as (
    select * from {{ ref('int_soliddb_schema_records_decoded') }}
    where statement_error is null
),

table_versions as (
    select * from {{ ref('int_soliddb_table_versions') }}
),

apply_failures as (
    select
        capture,
        valid_from_logaddr as logaddr_hex
    from table_versions
    where version_error is not null and origin = 'sql'
),

applied as (
    select statements.*
    from statements
    left anti join apply_failures
        on
            statements.capture = apply_failures.capture
            and statements.logaddr_hex = apply_failures.logaddr_hex
),

layouts_before as (
    select
        applied.source_file,
        applied.raw_offset,
        table_versions.table_schema,
        table_versions.table_name
    from applied
    inner join table_versions
        on
            applied.capture = table_versions.capture
            and applied.relid = table_versions.rel_id
            and applied.logaddr_hex > table_versions.valid_from_logaddr
            and (
                table_versions.valid_to_logaddr is null
                or applied.logaddr_hex <= table_versions.valid_to_logaddr
            )
    where table_versions.version_error is null and not table_versions.is_dropped
),

grouped as (
    select * from {{ ref('int_soliddb_records_grouped') }}
),

ddl_operations as (
    select * from {{ ref('soliddb_ddl_logrecids') }}
),

named as (
    select
        concat('soliddb:', applied.source_file, ':', applied.raw_offset) as event_id,
        applied.source_system,
        applied.capture,
        applied.source_file as raw_file,
        applied.raw_offset,
        array(
            named_struct(
                'source_file', applied.source_file,
                'raw_offset', applied.raw_offset,
                'record_length', applied.record_length
            )
        ) as raw_records,
        -- what happened
        applied.recid,
        applied.record_kind,
        applied.recname as source_change_type,
        case
            when applied.record_kind = 'sql' then concat('sql_', applied.sql_kind)
            else coalesce(ddl_operations.ddl_operation, concat('logrecid_', applied.ddl_logrecid))
        end as event_kind,
        applied.ddl_logrecid,
        ddl_operations.ddl_operation,
        ddl_operations.object_type,
        applied.ddl_info,
        applied.sql_text,
        applied.sql_kind,
        -- on which table
        applied.relid,
        case
            when applied.record_kind = 'sql' then applied.sql_table_schema
            when ddl_operations.object_type != 'table' then null
            when layouts_before.table_name is not null then layouts_before.table_schema
            when instr(applied.ddl_info, '.') > 0
                -- INFO up to its last dot ("fully qualified table name")
                then regexp_extract(applied.ddl_info, '^(.*)[.][^.]*$', 1)
        end as table_schema,
        case
            when applied.record_kind = 'sql' then applied.sql_table_name
            when ddl_operations.object_type != 'table' then null
            when layouts_before.table_name is not null then layouts_before.table_name
            else substring_index(applied.ddl_info, '.', -1)
        end as table_name,
        -- in which transaction (null when the record carries no TRXID)
        applied.trxid,
        applied.stmttrxid,
        grouped.transaction_id,
        grouped.transaction_disposition,
        coalesce(grouped.is_capture_off_transaction, false) as is_capture_off_transaction,
        grouped.commit_position,
        applied.logaddr_hex as log_position
    from applied
    left join layouts_before
        on
            applied.source_file = layouts_before.source_file
            and applied.raw_offset = layouts_before.raw_offset
    left join grouped
        on
            applied.source_file = grouped.source_file
            and applied.raw_offset = grouped.raw_offset
    left join ddl_operations
        on applied.ddl_logrecid = ddl_operations.logrecid
)

select * from named

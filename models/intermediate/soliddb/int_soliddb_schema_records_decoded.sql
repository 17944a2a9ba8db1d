-- DDL (RECID 13) and SQL (RECID 6) records with their DATA decoded by the registered UDF
-- logmart_soliddb_statement: the DDL record's LOGRECID and INFO, the SQL statement's text and
-- what it does to a table layout. statement_error says why a record could not be decoded.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

schema_records as (
    select * from {{ ref('stg_soliddb__sys_log') }}
    where record_kind in ('ddl', 'sql') and is_decoded and has_logaddr
),

decoded as (
    select
        *,
        logmart_soliddb_statement(
            recid, data, '{{ var("soliddb_char_codec") }}'
        ) as payload
    from schema_records
),

flattened as (
    select
        decoded.source_system,
        decoded.capture,
        decoded.source_file,
        decoded.raw_offset,
        decoded.record_length,
        decoded.recid,
        decoded.recname,
        decoded.record_kind,
        decoded.trxid,
        decoded.stmttrxid,
        decoded.relid,
        decoded.flags,
        decoded.logaddr,
        decoded.logaddr_hex,
        decoded.data,
        decoded.payload.logrecid as ddl_logrecid,
        decoded.payload.info as ddl_info,
        decoded.payload.sql_text,
        decoded.payload.sql_kind,
        decoded.payload.table_schema as sql_table_schema,
        decoded.payload.table_name as sql_table_name,
        case
            when decoded.payload.error is not null
                then concat(
                    decoded.payload.error,
                    ' (', decoded.recname, ' at LOGADDR ', decoded.logaddr_hex, ')'
                )
        end as statement_error
    from decoded
)

select * from flattened

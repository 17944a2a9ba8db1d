-- Db2 LUW records that describe or change objects rather than rows: DOM create/drop table and
-- index, truncate, reorg, activate not logged initially; DMS initialize table, add/drop/alter
-- column, alter table attribute, rename, partition state; RDS DDL statements; and their undos.
-- Kept with their decoded fields and the table names from the catalog, for the DDL mart.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

ddl_records as (
    select * from {{ ref('stg_db2luw__ddl_records') }}
),

transactions as (
    select * from {{ ref('int_db2luw_transactions_resolved') }}
),

table_names as (
    -- the table that had the ids at each LSN (ids are reused after DROP TABLE)
    select
        capture,
        table_space_identifier,
        table_identifier,
        valid_from_lsn,
        valid_to_lsn,
        table_schema,
        table_name  -- noqa: RF04
    from {{ ref('int_db2luw_table_versions') }}
),

named as (
    select
        -- identity and provenance
        ddl_records.source_system,
        ddl_records.capture,
        ddl_records.source_file as raw_file,
        ddl_records.raw_offset,
        -- what happened
        ddl_records.function_name as source_change_type,
        ddl_records.kind as event_kind,
        ddl_records.component,
        ddl_records.function_identifier,
        ddl_records.record_type_name,
        table_names.table_schema,
        ddl_records.table_space_identifier,
        ddl_records.table_identifier,
        ddl_records.object_table_space_identifier,
        ddl_records.object_identifier,
        ddl_records.object_type,
        -- transaction
        ddl_records.tid as transaction_id,
        transactions.transaction_disposition,
        transactions.commit_position,
        transactions.commit_ts,
        transactions.authid,
        ddl_records.lsn,
        ddl_records.lsn_hex as log_position,
        -- details by record type
        ddl_records.file_create_lsn,
        ddl_records.old_columns,
        ddl_records.new_columns,
        ddl_records.column_id,
        ddl_records.altered_attributes,
        ddl_records.attributes_on,
        ddl_records.data_partition_identifier,
        ddl_records.partition_action_name,
        ddl_records.index_token,
        ddl_records.index_root_page,
        ddl_records.statement_text_left,
        ddl_records.statement_text_length,
        ddl_records.statement_text,
        ddl_records.note,
        concat('db2luw:', ddl_records.source_file, ':', ddl_records.raw_offset) as event_id,
        array(
            named_struct(
                'source_file', ddl_records.source_file,
                'raw_offset', ddl_records.raw_offset,
                'record_length', ddl_records.record_length
            )
        ) as raw_records,
        coalesce(
            table_names.table_name,
            concat(
                'TBSPACEID=', ddl_records.table_space_identifier,
                ',TABLEID=', ddl_records.table_identifier
            )
        ) as table_name,  -- noqa: RF04
        coalesce(transactions.transaction_disposition = 'committed', false) as is_committed,
        hex(ddl_records.payload) as payload_hex
    from ddl_records
    left join table_names
        on
            ddl_records.capture = table_names.capture
            and ddl_records.table_space_identifier = table_names.table_space_identifier
            and ddl_records.table_identifier = table_names.table_identifier
            and ddl_records.lsn >= table_names.valid_from_lsn
            and (table_names.valid_to_lsn is null or ddl_records.lsn < table_names.valid_to_lsn)
    left join transactions
        on
            ddl_records.capture = transactions.capture
            and ddl_records.tid = transactions.tid
)

select * from named

-- Db2 LUW row changes in logmart's change contract (the columns of fct_changes), one row per
-- changed row, from int_db2luw_changes_compensated (records paired into changes, reversed
-- changes flagged) and the end of each transaction (int_db2luw_transactions_resolved):
-- * 'committed', 'aborted', or 'in_flight' when the capture holds no commit/abort for the
--   transaction (every change of it);
-- * a change a compensation record reverses is 'savepoint_rollback' in a committed
--   transaction and 'aborted' like the rest of an aborted one.
-- change_seq numbers a transaction's changes over its log stream (macro log_stream) by LSN,
-- then the row of an insert multiple.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

changes as (
    select * from {{ ref('int_db2luw_changes_compensated') }}
),

transactions as (
    select * from {{ ref('int_db2luw_transactions_resolved') }}
),

standardized as (
    select
        -- identity and provenance
        changes.source_system,
        changes.capture,
        changes.source_file as raw_file,
        changes.raw_offset,
        changes.raw_records,
        -- what changed
        changes.table_schema,
        changes.table_name,  -- noqa: RF04
        changes.operation,  -- noqa: RF04
        changes.change_kind,
        changes.source_change_type,
        changes.before_image,
        changes.after_image,
        changes.key_columns,
        changes.column_types,
        changes.decode_warnings,
        -- transaction (TID) and order: committed transactions by commit_position (LFS, LSN
        -- of the commit record); inside one, by LSN (then the row of an insert multiple)
        changes.tid as transaction_id,
        transactions.commit_position,
        transactions.commit_ts,
        -- who
        transactions.authid,
        -- Db2 LUW specifics
        changes.lsn,
        changes.table_space_identifier,
        changes.table_identifier,
        changes.is_reversed,
        changes.row_in_record,
        -- not in Db2 LUW log records (only the commit record has a time)
        cast(null as timestamp) as change_ts,
        cast(null as timestamp) as begin_ts,
        cast(null as string) as plan_name,
        cast(null as string) as correlation_id,
        cast(null as string) as connection_id,
        cast(null as string) as connection_type,
        concat(
            'db2luw:', changes.source_file, ':', changes.raw_offset,
            case when changes.is_multiple then concat(':', changes.row_in_record) else '' end
        ) as change_id,
        case
            when coalesce(transactions.transaction_disposition, 'in_flight') = 'in_flight'
                then 'in_flight'
            when changes.is_reversed and transactions.transaction_disposition = 'committed'
                then 'savepoint_rollback'
            else transactions.transaction_disposition
        end as disposition,
        coalesce(transactions.transaction_disposition, 'in_flight') as transaction_disposition,
        concat(changes.lsn_hex, '.', lpad(cast(changes.row_in_record as string), 5, '0'))
            as log_position,
        -- values the log does not carry (udfs/unavailable.py), beside each image
        changes.before_unavailable,
        changes.after_unavailable,
        changes.generated_by
    from changes
    left join transactions
        on
            changes.capture = transactions.capture
            and changes.tid = transactions.tid
),

sequenced as (
    select
        *,
        row_number() over (
            partition by source_system, {{ log_stream('capture') }}, transaction_id
            order by log_position, raw_file, raw_offset
        ) as change_seq
    from standardized
)

select * from sequenced

-- Every record that belongs to a transaction (TRX_START, row, DDL, SQL and COMMIT records that
-- read cleanly and carry a TRXID and a LOGADDR) with the transaction it belongs to and that
-- transaction's disposition. TRXIDs restart (after a server restart, say): a TRX_START, or the
-- first record after the TRXID's COMMIT, starts a new incarnation "<trxid>#<n>". solidDB logs
-- no aborts: a transaction without COMMIT is in_flight, or aborted once its TRXID is reused.
-- Records group over every capture of the log stream, in LOGADDR order: a transaction open at
-- the end of one capture and committed in the next is one transaction, committed.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

transaction_records as (
    select
        source_system,
        {{ log_stream('capture') }} as log_stream,
        capture,
        source_file,
        raw_offset,
        record_length,
        recid,
        recname,
        record_kind,
        trxid,
        stmttrxid,
        relid,
        flags,
        is_capture_off,
        logaddr_hex
    from {{ ref('stg_soliddb__sys_log') }}
    where
        is_decoded
        and has_logaddr
        and trxid is not null
        and record_kind not in ('nop', 'empty', 'unknown')
),

with_previous as (
    select
        *,
        lag(record_kind) over (
            partition by log_stream, trxid order by logaddr_hex, source_file, raw_offset
        ) as previous_kind
    from transaction_records
),

incarnations as (
    select
        *,
        sum(
            if(record_kind = 'trx_start' or coalesce(previous_kind, 'commit') = 'commit', 1, 0)
        ) over (
            partition by log_stream, trxid
            order by logaddr_hex, source_file, raw_offset
            rows between unbounded preceding and current row
        ) as incarnation
    from with_previous
),

transactions as (
    select
        log_stream,
        trxid,
        incarnation,
        bool_or(record_kind = 'trx_start') as has_trx_start,
        bool_or(record_kind = 'trx_start' and is_capture_off) as is_capture_off_transaction,
        max(if(record_kind = 'commit', logaddr_hex, null)) as commit_position,
        min(logaddr_hex) as begin_position
    from incarnations
    group by log_stream, trxid, incarnation
),

dispositions as (
    select
        *,
        case
            when incarnation = 1 then cast(trxid as string)
            else concat(trxid, '#', incarnation)
        end as transaction_id,
        case
            when commit_position is not null then 'committed'
            when incarnation < max(incarnation) over (partition by log_stream, trxid)
                then 'aborted'
            else 'in_flight'
        end as transaction_disposition
    from transactions
),

grouped as (
    select
        incarnations.source_system,
        incarnations.log_stream,
        incarnations.capture,
        incarnations.source_file,
        incarnations.raw_offset,
        incarnations.record_length,
        incarnations.recid,
        incarnations.recname,
        incarnations.record_kind,
        incarnations.trxid,
        incarnations.stmttrxid,
        incarnations.relid,
        incarnations.flags,
        incarnations.logaddr_hex,
        incarnations.incarnation,
        dispositions.transaction_id,
        dispositions.transaction_disposition,
        dispositions.has_trx_start,
        dispositions.is_capture_off_transaction,
        dispositions.begin_position,
        dispositions.commit_position
    from incarnations
    inner join dispositions
        on
            incarnations.log_stream = dispositions.log_stream
            and incarnations.trxid = dispositions.trxid
            and incarnations.incarnation = dispositions.incarnation
)

select * from grouped

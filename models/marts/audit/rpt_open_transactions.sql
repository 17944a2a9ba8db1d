-- Transactions still open (in flight) at the end of each log stream (its last capture), every
-- source: who, since when, how much they changed, and for how long they had been open when
-- the log read ends (the last time the stream shows). A DBA's "what was running when the log
-- was cut". One open at the end of a capture and committed in the next is not open.
with

transactions as (
    select * from {{ ref('fct_transactions') }}
),

stream_ends as (
    select
        source_system,
        log_stream,
        max(coalesce(change_ts, commit_ts, begin_ts)) as capture_end_ts
    from {{ ref('fct_changes') }}
    group by source_system, log_stream
),

open_transactions as (
    select
        transactions.source_system,
        transactions.log_stream,
        transactions.capture,
        transactions.transaction_id,
        transactions.begin_ts,
        stream_ends.capture_end_ts,
        (unix_micros(stream_ends.capture_end_ts) - unix_micros(transactions.begin_ts))
        / 1000000.0 as open_seconds,
        transactions.change_count,
        transactions.insert_count,
        transactions.update_count,
        transactions.delete_count,
        transactions.truncate_count,
        transactions.tables_touched,
        transactions.authid,
        transactions.plan_name,
        transactions.correlation_id,
        transactions.connection_id
    from transactions
    left join stream_ends
        on
            transactions.source_system = stream_ends.source_system
            and transactions.log_stream = stream_ends.log_stream
    where transactions.disposition = 'in_flight'
)

select * from open_transactions

-- Transactions still open (in flight) at the end of each capture, every source: who, since
-- when, how much they changed, and for how long they had been open when the capture ended
-- (the last time the capture shows). A DBA's "what was running when the log was cut".
with

transactions as (
    select * from {{ ref('fct_transactions') }}
),

capture_ends as (
    select
        source_system,
        capture,
        max(coalesce(change_ts, commit_ts, begin_ts)) as capture_end_ts
    from {{ ref('fct_changes') }}
    group by source_system, capture
),

open_transactions as (
    select
        transactions.source_system,
        transactions.capture,
        transactions.transaction_id,
        transactions.begin_ts,
        capture_ends.capture_end_ts,
        (unix_micros(capture_ends.capture_end_ts) - unix_micros(transactions.begin_ts))
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
    left join capture_ends
        on
            transactions.source_system = capture_ends.source_system
            and transactions.capture = capture_ends.capture
    where transactions.disposition = 'in_flight'
)

select * from open_transactions

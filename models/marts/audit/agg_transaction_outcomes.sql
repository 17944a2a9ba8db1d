-- Transactions by outcome per day, every source, and the rollback rate: aborted / (committed
-- + aborted); in-flight ones have no outcome yet. The day is the commit day, else the day the
-- transaction began; null when the source logs no times (solidDB).
with

transactions as (
    select * from {{ ref('fct_transactions') }}
),

outcomes as (
    select
        source_system,
        capture,
        to_date(coalesce(commit_ts, begin_ts)) as outcome_date,
        count(*) as transaction_count,
        count_if(disposition = 'committed') as committed_count,
        count_if(disposition = 'aborted') as aborted_count,
        count_if(disposition = 'in_flight') as in_flight_count,
        sum(change_count) as change_count,
        sum(savepoint_rollback_count) as savepoint_rolled_back_changes,
        sum(reversed_count) as reversed_changes
    from transactions
    group by source_system, capture, to_date(coalesce(commit_ts, begin_ts))
)

select
    *,
    aborted_count / nullif(committed_count + aborted_count, 0) as rollback_rate
from outcomes

-- How big and how long transactions are, every source: transactions per size bucket
-- (changes) and duration bucket (begin to commit), by outcome.
with

transactions as (
    select
        *,
        unix_micros(commit_ts) - unix_micros(begin_ts) as duration_micros
    from {{ ref('fct_transactions') }}
),

bucketed as (
    select
        source_system,
        capture,
        disposition,
        change_count,
        duration_micros,
        case
            when change_count = 1 then 1
            when change_count <= 5 then 2
            when change_count <= 20 then 3
            when change_count <= 100 then 4
            when change_count <= 1000 then 5
            else 6
        end as size_bucket_order,
        case
            when duration_micros is null then 6
            when duration_micros < 1000000 then 1
            when duration_micros < 10000000 then 2
            when duration_micros < 60000000 then 3
            when duration_micros < 600000000 then 4
            else 5
        end as duration_bucket_order
    from transactions
),

profiled as (
    select
        source_system,
        capture,
        disposition,
        size_bucket_order,
        duration_bucket_order,
        element_at(
            array('1', '2-5', '6-20', '21-100', '101-1000', '>1000'), size_bucket_order
        ) as size_bucket,
        element_at(
            array('<1s', '1-10s', '10-60s', '1-10min', '>10min', 'unknown'),
            duration_bucket_order
        ) as duration_bucket,
        count(*) as transaction_count,
        sum(change_count) as change_count,
        max(duration_micros) / 1000000.0 as max_duration_seconds
    from bucketed
    group by
        source_system,
        capture,
        disposition,
        size_bucket_order,
        duration_bucket_order
)

select * from profiled

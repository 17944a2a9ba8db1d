-- Changes per hour, table, operation and user, every source: what a dashboard plots over
-- time. The hour is the change's own time, else its transaction's commit time; null when the
-- source logs neither (solidDB), so those changes are still counted.
with

changes as (
    select * from {{ ref('fct_changes') }}
),

counted as (
    select
        source_system,
        capture,
        date_trunc('HOUR', coalesce(change_ts, commit_ts)) as change_hour,
        table_schema,
        table_name,
        operation,
        authid,
        count(*) as change_count,
        count_if(disposition = 'committed') as committed_changes,
        count_if(disposition in ('aborted', 'savepoint_rollback', 'reversed'))
            as rolled_back_changes,
        count_if(disposition = 'in_flight') as in_flight_changes
    from changes
    group by
        source_system,
        capture,
        date_trunc('HOUR', coalesce(change_ts, commit_ts)),
        table_schema,
        table_name,
        operation,
        authid
)

select * from counted

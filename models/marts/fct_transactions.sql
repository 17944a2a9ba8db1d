-- One row per transaction (unit of recovery), every source. A transaction is identified by its
-- log stream and id: one still open at the end of a capture and committed in the next capture
-- of the stream is one row, with the changes of both.
with

changes as (
    select * from {{ ref('fct_changes') }}
),

transactions as (
    select
        source_system,
        log_stream,
        -- the capture of its first change, and every capture holding its changes
        min_by(capture, change_seq) as capture,
        array_sort(collect_set(capture)) as captures,
        transaction_id,
        -- A commit or abort seen in any record settles the transaction; else it is in flight.
        case
            when count_if(transaction_disposition = 'committed') > 0 then 'committed'
            when count_if(transaction_disposition = 'aborted') > 0 then 'aborted'
            else 'in_flight'
        end as disposition,
        min(coalesce(begin_ts, change_ts)) as begin_ts,
        max(commit_ts) as commit_ts,
        max(commit_position) as commit_position,
        count(*) as change_count,
        count_if(operation = 'insert') as insert_count,
        count_if(operation = 'update') as update_count,
        count_if(operation = 'delete') as delete_count,
        count_if(operation = 'truncate') as truncate_count,
        count_if(disposition = 'savepoint_rollback') as savepoint_rollback_count,
        count_if(disposition = 'reversed') as reversed_count,
        array_sort(
            collect_set(concat_ws('.', table_schema, table_name))
        ) as tables_touched,
        min(authid) as authid,
        min(plan_name) as plan_name,
        min(correlation_id) as correlation_id,
        min(connection_id) as connection_id
    from changes
    group by source_system, log_stream, transaction_id
)

select * from transactions

-- One row per transaction (unit of recovery) the log shows, every source: with row changes
-- (fct_changes), with only DDL or catalog changes (fct_schema_changes: a CREATE TABLE and its
-- initialize-table record), or with neither (a source's own transaction records: Db2 LUW
-- commits and aborts, solidDB transaction records). A transaction is identified by its log
-- stream and id: one still open at the end of a capture and committed in the next capture of
-- the stream is one row, with the changes of both.
with

changes as (
    select * from {{ ref('fct_changes') }}
),

schema_changes as (
    select * from {{ ref('fct_schema_changes') }}
),

change_transactions as (
    select
        source_system,
        log_stream,
        transaction_id,
        -- the capture of its first change, and every capture holding its changes
        min_by(capture, change_seq) as capture,
        array_sort(collect_set(capture)) as captures,
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
        min(connection_id) as connection_id,
        -- Log Master's word on the transaction's completeness (null: the source says nothing)
        bool_or(incomplete_transaction) as incomplete_transaction,
        bool_or(incomplete_dependency) as incomplete_dependency,
        bool_or(has_compensation) as has_compensation
    from changes
    group by source_system, log_stream, transaction_id
),

transaction_records as (
    -- every other sign of a transaction in the log: its DDL and catalog changes, and the
    -- transaction records of sources that list them (int_<source>_transaction_records)
    select
        source_system,
        log_stream,
        capture,
        transaction_id,
        transaction_disposition,
        event_ts,
        commit_ts,
        commit_position,
        authid,
        true as is_schema_change
    from schema_changes
    where transaction_id is not null
    {%- for source in logmart_sources() %}
        union all
        select
            source_system,
            log_stream,
            capture,
            transaction_id,
            transaction_disposition,
            cast(null as timestamp) as event_ts,
            commit_ts,
            commit_position,
            authid,
            false as is_schema_change
        from {{ ref('int_' ~ source ~ '_transaction_records') }}
    {%- endfor %}
),

listed_transactions as (
    select
        source_system,
        log_stream,
        transaction_id,
        min(capture) as capture,
        array_sort(collect_set(capture)) as captures,
        case
            when count_if(transaction_disposition = 'committed') > 0 then 'committed'
            when count_if(transaction_disposition = 'aborted') > 0 then 'aborted'
            else 'in_flight'
        end as disposition,
        min(event_ts) as begin_ts,
        max(commit_ts) as commit_ts,
        max(commit_position) as commit_position,
        count_if(is_schema_change) as schema_change_count,
        min(authid) as authid
    from transaction_records
    group by source_system, log_stream, transaction_id
),

transactions as (
    select
        coalesce(changed.source_system, listed.source_system) as source_system,
        coalesce(changed.log_stream, listed.log_stream) as log_stream,
        coalesce(changed.capture, listed.capture) as capture,
        array_sort(array_union(
            coalesce(changed.captures, array()), coalesce(listed.captures, array())
        )) as captures,
        coalesce(changed.transaction_id, listed.transaction_id) as transaction_id,
        case
            when 'committed' in (changed.disposition, listed.disposition) then 'committed'
            when 'aborted' in (changed.disposition, listed.disposition) then 'aborted'
            else 'in_flight'
        end as disposition,
        -- least() skips nulls: the earlier of its first change and its first DDL
        least(changed.begin_ts, listed.begin_ts) as begin_ts,
        coalesce(changed.commit_ts, listed.commit_ts) as commit_ts,
        coalesce(changed.commit_position, listed.commit_position) as commit_position,
        coalesce(changed.change_count, 0) as change_count,
        coalesce(changed.insert_count, 0) as insert_count,
        coalesce(changed.update_count, 0) as update_count,
        coalesce(changed.delete_count, 0) as delete_count,
        coalesce(changed.truncate_count, 0) as truncate_count,
        coalesce(changed.savepoint_rollback_count, 0) as savepoint_rollback_count,
        coalesce(changed.reversed_count, 0) as reversed_count,
        coalesce(listed.schema_change_count, 0) as schema_change_count,
        coalesce(changed.tables_touched, array()) as tables_touched,
        coalesce(changed.authid, listed.authid) as authid,
        changed.plan_name,
        changed.correlation_id,
        changed.connection_id,
        changed.incomplete_transaction,
        changed.incomplete_dependency,
        changed.has_compensation
    from change_transactions as changed
    full outer join listed_transactions as listed
        on
            changed.source_system = listed.source_system
            and changed.log_stream = listed.log_stream
            and changed.transaction_id = listed.transaction_id
)

select * from transactions

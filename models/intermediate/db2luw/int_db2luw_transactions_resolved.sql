-- One row per Db2 LUW transaction (TID) of a capture: how it ended. A commit (normal commit or
-- local pending list) or an abort record ends it; a transaction whose records all carry the
-- singular-transaction flag (0x0010) ends with its last record (no commit/abort record
-- follows); anything else is still in flight when the log read ends. TIDs are unique in a
-- database's log, so a transaction is resolved over every capture of its log stream: one open
-- at the end of one capture and committed in the next is committed in both rows.
-- commit_position is the commit record's LFS then LSN, 16 hex digits each: its text order is
-- commit order (LFS orders commits across log streams, LSN inside one).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

records as (
    select
        *,
        {{ log_stream('capture') }} as log_stream
    from {{ ref('stg_db2luw__log_records') }}
    where is_decoded and tid is not null
),

events as (
    select
        *,
        {{ log_stream('capture') }} as log_stream
    from {{ ref('stg_db2luw__transaction_events') }}
),

record_spans as (
    -- one pass over the records: the captures holding a record of the transaction, and its
    -- span over the records other than its end (commit, abort)
    select
        log_stream,
        tid,
        collect_set(capture) as captures,
        min(case when kind not in ('commit', 'abort') then lsn end) as first_lsn,
        max_by(
            case when kind not in ('commit', 'abort') then named_struct('lsn', lsn, 'lfs', lfs) end,
            case when kind not in ('commit', 'abort') then lsn end
        ) as last_record,
        bool_and(case when kind not in ('commit', 'abort') then singular_transaction end)
            as is_singular
    from records
    group by log_stream, tid
),

ends as (
    select
        log_stream,
        tid,
        collect_set(capture) as captures,
        max_by(
            named_struct(
                'event_kind', event_kind,
                'lsn', lsn,
                'lfs', lfs,
                'commit_ts', commit_ts,
                'authid', authid,
                'source_file', source_file,
                'raw_offset', raw_offset
            ),
            lsn
        ) as end_event
    from events
    group by log_stream, tid
),

transactions as (
    -- each transaction of a log stream once, with every capture holding a record or an end
    -- event of it
    select
        record_spans.first_lsn,
        record_spans.last_record,
        record_spans.is_singular,
        ends.end_event,
        coalesce(record_spans.tid, ends.tid) as tid,
        array_union(
            coalesce(record_spans.captures, array()), coalesce(ends.captures, array())
        ) as captures
    from record_spans
    full outer join ends
        on
            record_spans.log_stream = ends.log_stream
            and record_spans.tid = ends.tid
),

resolved as (
    select
        transactions.first_lsn,
        transactions.end_event.event_kind as end_kind,
        transactions.end_event.lsn as end_lsn,
        transactions.end_event.commit_ts,
        transactions.end_event.authid,
        transactions.end_event.source_file as end_source_file,
        transactions.end_event.raw_offset as end_raw_offset,
        exploded.capture,
        transactions.tid,
        case
            when transactions.end_event.event_kind = 'commit' then 'committed'
            when transactions.end_event.event_kind = 'abort' then 'aborted'
            when transactions.is_singular then 'committed'
            else 'in_flight'
        end as transaction_disposition,
        case
            when transactions.end_event.event_kind = 'commit'
                then concat(
                    lpad(hex(transactions.end_event.lfs), 16, '0'),
                    lpad(hex(transactions.end_event.lsn), 16, '0')
                )
            when transactions.end_event.event_kind is null and transactions.is_singular
                then concat(
                    lpad(hex(transactions.last_record.lfs), 16, '0'),
                    lpad(hex(transactions.last_record.lsn), 16, '0')
                )
        end as commit_position
    from transactions
        lateral view explode(transactions.captures) exploded as capture
)

select * from resolved

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

captures as (
    -- every capture holding a record of the transaction
    select distinct
        capture,
        log_stream,
        tid
    from records
    union
    select distinct
        capture,
        log_stream,
        tid
    from events
),

record_spans as (
    select
        log_stream,
        tid,
        min(lsn) as first_lsn,
        max_by(named_struct('lsn', lsn, 'lfs', lfs), lsn) as last_record,
        bool_and(singular_transaction) as is_singular
    from records
    where kind not in ('commit', 'abort')
    group by log_stream, tid
),

ends as (
    select
        log_stream,
        tid,
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

resolved as (
    select
        record_spans.first_lsn,
        ends.end_event.event_kind as end_kind,
        ends.end_event.lsn as end_lsn,
        ends.end_event.commit_ts,
        ends.end_event.authid,
        ends.end_event.source_file as end_source_file,
        ends.end_event.raw_offset as end_raw_offset,
        captures.capture,
        captures.tid,
        case
            when ends.end_event.event_kind = 'commit' then 'committed'
            when ends.end_event.event_kind = 'abort' then 'aborted'
            when record_spans.is_singular then 'committed'
            else 'in_flight'
        end as transaction_disposition,
        case
            when ends.end_event.event_kind = 'commit'
                then concat(
                    lpad(hex(ends.end_event.lfs), 16, '0'),
                    lpad(hex(ends.end_event.lsn), 16, '0')
                )
            when ends.end_event.event_kind is null and record_spans.is_singular
                then concat(
                    lpad(hex(record_spans.last_record.lfs), 16, '0'),
                    lpad(hex(record_spans.last_record.lsn), 16, '0')
                )
        end as commit_position
    from captures
    left join record_spans
        on
            captures.log_stream = record_spans.log_stream
            and captures.tid = record_spans.tid
    left join ends
        on
            captures.log_stream = ends.log_stream
            and captures.tid = ends.tid
)

select * from resolved

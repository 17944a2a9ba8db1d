-- Transaction manager records: normal commit and local pending list (both end a transaction
-- that committed) and normal abort, with the commit time and the authid.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

records as (
    select * from {{ ref('stg_db2luw__log_records') }}
    where is_decoded and kind in ('commit', 'abort')
),

events as (
    select
        -- provenance
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        -- transaction
        tid,
        kind as event_kind,
        record_type_name,
        -- position
        lsn,
        lsn_hex,
        lfs,
        lfs_hex,
        -- when and who
        commit_ts,
        commit_time_text,
        authid
    from records
)

select * from events

-- Files found under the raw folder, so that a file with no records still shows in the
-- reconciliation, and a copy of another file shows as one.
with

source as (
    select * from {{ source('logmart', 'files') }}
),

renamed as (
    select
        -- ids
        source_system,
        log_stream,
        capture,
        source_file,
        -- what it is
        file_kind,
        size_bytes,
        content_hash,
        duplicate_of,
        duplicate_of is not null as is_duplicate,
        -- loading
        load_key,
        loaded_at,
        timestamp_micros(cast(modified_ns div 1000 as bigint)) as modified_at
    from source
)

select * from renamed

-- Captures found under the raw folder, with the fingerprint of what their decoded rows depend
-- on: the incremental models recompute a capture only when its fingerprint changes.
with

source as (
    select * from {{ source('logmart', 'captures') }}
),

renamed as (
    select
        -- ids
        source_system,
        log_stream,
        capture,
        -- contents
        file_count,
        size_bytes,
        -- what decoded rows depend on
        fingerprint,
        code_version,
        raw_version
    from source
)

select * from renamed

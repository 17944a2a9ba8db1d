-- Files found under the raw folder, so that a file with no records still shows in the
-- reconciliation.
with

source as (
    select * from {{ source('logmart', 'files') }}
),

renamed as (
    select
        source_system,
        capture,
        source_file,
        file_kind,
        size_bytes
    from source
)

select * from renamed

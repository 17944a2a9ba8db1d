-- The rows of the base snapshots, values rendered as the marts render row images.
with

source as (
    select * from {{ source('logmart', 'snapshot_rows') }}
),

renamed as (
    select
        -- ids
        source_system,
        log_stream,
        source_file,
        row_number,
        -- the row
        row_image
    from source
)

select * from renamed

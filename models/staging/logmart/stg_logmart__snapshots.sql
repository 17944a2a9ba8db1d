-- Base snapshots under the raw folder (docs/snapshots.md): what each side file says and
-- whether the loader could read the unload.
with

source as (
    select * from {{ source('logmart', 'snapshots') }}
),

renamed as (
    select
        -- ids
        source_system,
        log_stream,
        capture,
        source_file,
        side_file,
        -- what it is
        file_format,
        table_schema,
        table_name,
        snapshot_position as given_position,
        taken_at,
        columns,
        row_count,
        -- why it cannot be used (null: it was read)
        problem
    from source
)

select * from renamed

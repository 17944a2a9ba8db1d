-- The catalog export's data types (SYSCAT.DATATYPES rows of the optional datatypes.csv), one
-- row per CSV data row: a distinct type's source type, length and scale (docs/db2luw.md
-- interpretation 21).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

source as (
    select * from {{ source('db2luw', 'catalog_datatypes') }}
),

renamed as (
    select
        -- provenance
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        line_number,
        decode_error,
        -- type
        typeschema,
        typename,
        sourceschema,
        sourcename,
        metatype,
        length,
        scale,
        -- derived
        decode_error is null as is_decoded
    from source
)

select * from renamed

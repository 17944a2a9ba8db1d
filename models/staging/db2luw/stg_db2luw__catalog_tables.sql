-- The catalog export's tables (SYSCAT.TABLES rows of tables.csv), one row per CSV data row.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

source as (
    select * from {{ source('db2luw', 'catalog_tables') }}
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
        -- table
        tabschema,
        tabname,
        tbspaceid,
        tableid,
        compression,
        datacapture,
        colcount,
        type as table_type,
        -- derived
        decode_error is null as is_decoded,
        coalesce(compression in ('V', 'B'), false) as has_value_compression
    from source
)

select * from renamed

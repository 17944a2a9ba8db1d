-- The catalog export's columns (SYSCAT.COLUMNS rows of columns.csv), one row per CSV data row.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

source as (
    select * from {{ source('db2luw', 'catalog_columns') }}
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
        -- column
        tabschema,
        tabname,
        colname,
        colno,
        typename,
        length,
        scale,
        nulls,
        compress,
        inline_length,
        codepage,
        keyseq,
        typeschema,
        -- derived
        decode_error is null as is_decoded,
        coalesce(nulls = 'Y', false) as is_nullable
    from source
)

select * from renamed

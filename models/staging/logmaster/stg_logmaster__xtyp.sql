-- XTYP: file information (the extract's code pages).
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'XTYP' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- file
        xtyp.filetype,
        xtyp.version,
        xtyp.sysid,
        xtyp.sqldelimiter,
        xtyp.mixed,
        xtyp.decimalpoint,
        -- code pages
        xtyp.ebcdicsbcsccsid,
        xtyp.ebcdicdbcsccsid,
        xtyp.ebcdicmixedccsid,
        xtyp.asciisbcsccsid,
        xtyp.asciidbcsccsid,
        xtyp.asciimixedccsid,
        xtyp.unicodesbcsccsid,
        xtyp.unicodedbcsccsid,
        xtyp.unicodemixedccsid
    from source
)

select * from renamed

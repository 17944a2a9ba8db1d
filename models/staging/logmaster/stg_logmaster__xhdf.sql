-- XHDF: the LLDF header layout the control file describes, one row per header field.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'XHDF' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- field
        xhdf.fieldname,
        xhdf.fieldtype,
        xhdf.unsigned = 'U' as is_unsigned,
        xhdf.fieldlength,
        xhdf.fieldoffset
    from source
)

select * from renamed

-- DLDS: data set information.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'DLDS' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- data set
        dlds.datasetname,
        dlds.recfm,
        dlds.dateformat,
        dlds.expandvar,
        dlds.segmented,
        dlds.ddlobjects,
        dlds.lobsincluded,
        dlds.xmlincluded
    from source
)

select * from renamed

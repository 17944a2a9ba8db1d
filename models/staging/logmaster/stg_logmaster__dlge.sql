-- DLGE: where the log the extract was read from ends.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'DLGE' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- log end
        dlge.endrba,
        dlge.dependentrba,
        dlge.endtime as endtime_text,
        cast(left(dlge.endtime, 26) as timestamp) as endtime
    from source
)

select * from renamed

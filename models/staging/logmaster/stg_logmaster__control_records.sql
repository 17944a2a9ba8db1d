-- Every control record, known type or not: kept and counted, never dropped.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
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
        -- record
        record_type,
        decode_error,
        decode_error is null as is_decoded,
        coalesce(
            record_type in ('XTYP', 'XHDF', 'DLDS', 'DLGE', 'DTBI', 'DLCI'), false
        ) as is_known_type
    from source
)

select * from renamed

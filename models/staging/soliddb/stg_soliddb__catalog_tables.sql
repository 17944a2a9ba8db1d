-- SYS_TABLES rows of each capture's catalog export, typed.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

source as (
    select * from {{ source('soliddb', 'catalog_tables') }}
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
        decode_error,
        decode_error is null as is_decoded,
        -- table (SYS_TABLES.ID is what SYS_LOG.RELID holds)
        cast(id as bigint) as rel_id,
        table_name,
        schema as table_schema
    from source
)

select * from renamed

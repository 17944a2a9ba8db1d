-- The catalog export's data partitions (SYSCAT.DATAPARTITIONS rows of the optional
-- datapartitions.csv), one row per CSV data row: a partition's (TBSPACEID, PARTITIONOBJECTID)
-- are the ids its row records carry (docs/db2luw.md interpretation 21).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

source as (
    select * from {{ source('db2luw', 'catalog_datapartitions') }}
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
        -- partition
        tabschema,
        tabname,
        datapartitionname,
        datapartitionid,
        tbspaceid,
        partitionobjectid,
        -- derived
        decode_error is null as is_decoded
    from source
)

select * from renamed

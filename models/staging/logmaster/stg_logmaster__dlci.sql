-- DLCI: one row per column of a table's logical log row image.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'DLCI' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- table
        dlci.sysid,
        cast(conv(dlci.dbid, 16, 10) as int) as dbid,
        cast(conv(dlci.tbobid, 16, 10) as int) as tbobid,
        dlci.sequencenumber,
        cast(dlci.version as int) as version,
        -- column
        dlci.llcolumnnum,
        left(dlci.columnname, coalesce(dlci.columnnamelen, 128)) as columnname,
        dlci.llcolumntype,
        dlci.llcolumnlen,
        coalesce(dlci.llscale, 0) as llscale,
        dlci.llnulls,
        dlci.llcolumnpos,
        dlci.llcolumnsubtype,
        -- key
        coalesce(dlci.keyseq, 0) as keyseq,
        dlci.keyordering,
        -- sizes
        dlci.db2rowbytes,
        dlci.fldprocbytes,
        dlci.loglogbytes
    from source
)

select * from renamed

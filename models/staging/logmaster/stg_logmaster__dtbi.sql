-- DTBI: one row per table (and version) with changes in the extract.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

source as (
    select * from {{ source('logmaster', 'control_records') }}
    where record_type = 'DTBI' and decode_error is null
),

renamed as (
    select
        -- provenance
        capture,
        source_file,
        raw_offset,
        -- ids (CHAR(4) hexadecimal in the record, numbers here to match LLDF's BIN(2))
        dtbi.sysid,
        cast(conv(dtbi.dbid, 16, 10) as int) as dbid,
        cast(conv(dtbi.psid, 16, 10) as int) as psid,
        cast(conv(dtbi.tbobid, 16, 10) as int) as tbobid,
        dtbi.dbid as dbid_hex,
        dtbi.tbobid as tbobid_hex,
        dtbi.objecttype,
        dtbi.sequencenumber,
        dtbi.version,
        -- shape
        dtbi.db2numcol,
        dtbi.db2maxrowlen,
        dtbi.llnumcol,
        dtbi.llmaxrowlen,
        dtbi.rowtype,
        dtbi.encodingscheme,
        dtbi.lobsincluded,
        dtbi.xmlincluded,
        -- life (RBA or LRSN, 20 hex digits; all zeros = not recorded)
        dtbi.createrba,
        dtbi.droprba,
        -- names, cut to their stated lengths
        left(dtbi.editprocname, coalesce(dtbi.editprocnamelen, 24)) as editprocname,
        left(dtbi.dbname, coalesce(dtbi.dbnamelen, 24)) as dbname,
        left(dtbi.tsname, coalesce(dtbi.tsnamelen, 24)) as tsname,
        left(dtbi.tableowner, coalesce(dtbi.tableownerlen, 128)) as tableowner,
        dtbi.shortowner,
        left(dtbi.tablename, coalesce(dtbi.tablenamelen, 128)) as tablename,
        dtbi.shortname,
        dtbi.untranownerflag = 'Y' as has_untranslatable_owner,
        left(dtbi.unitableowner, coalesce(dtbi.unitableownerlen, 128)) as unitableowner,
        dtbi.untrannameflag = 'Y' as has_untranslatable_name,
        left(dtbi.unitablename, coalesce(dtbi.unitablenamelen, 128)) as unitablename
    from source
)

select * from renamed

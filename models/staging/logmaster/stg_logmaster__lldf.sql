-- LLDF: every data file record (data change record or one segment of one), header typed.
with

source as (
    select * from {{ source('logmaster', 'data_records') }}
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
        -- object
        cast(length as int) as header_length,
        systemid,
        cast(dbid as int) as dbid,
        cast(psid as int) as psid,
        cast(tbobid as int) as tbobid,
        cast(tbownerlen as int) as tbownerlen,
        cast(tbnamelen as int) as tbnamelen,
        dbname,
        tsname,
        tableowner,
        tablename,
        cast(partnum as int) as partnum,
        cast(memberid as int) as memberid,
        rid,
        pagenumfmt,
        -- change
        change_type,
        sqltype,
        logrecdisp,
        sqlsrctype,
        logbytes,
        cast(logdelta as int) as logdelta,
        cast(anomalyrowid as int) as anomalyrowid,
        anomalytype,
        anomalyrba,
        sqlrirba,
        -- log positions (20 hex digits: text order is log order)
        loglrsn,
        logrba,
        -- unit of recovery
        uorid,
        uoridlrsn,
        uordisp,
        uorcommitlrsn,
        uorcommitpoint,
        incompletetrans,
        incompletedep,
        uorhascomp,
        -- who
        connectiontype,
        connectid,
        correlationid,
        authid,
        plan,
        luwnetworkid,
        luwname,
        luwinstanceno,
        cast(luwsequenceno as int) as luwsequenceno,
        -- timestamps (text keeps every fractional digit logged)
        `timestamp` as log_timestamp_text,
        cast(left(`timestamp`, 26) as timestamp) as log_timestamp,
        uortimestamp as uortimestamp_text,
        cast(left(uortimestamp, 26) as timestamp) as uortimestamp,
        uorcommittimestamp as uorcommittimestamp_text,
        cast(left(uorcommittimestamp, 26) as timestamp) as uorcommittimestamp,
        -- segments and DATA
        cast(seglen as int) as seglen,
        cast(totalsegs as int) as totalsegs,
        cast(segnum as int) as segnum,
        substring(record_bytes, data_offset + 1, data_length) as data_slice
    from source
)

select * from renamed

-- LLDF: every data file record (data change record or one segment of one), header typed.
-- A record read twice in one extract (the same UORID, LOGRBA, LRSN, RID, change type and
-- segment: overlapping extracts, a data file copied twice) is kept once: the later copies
-- name the first in repeats_record and are not decoded (they are quarantined).
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{#- The key of a record, and what stands for a null in it: no header field takes that value
    (hex text, two-letter change types, unsigned numbers), so null matches null and nothing
    else, as <=> would. Plain `=` on plain columns lets Spark push a reader's capture filter
    into the aggregate and drop the join for a reader that takes no column of it
    (int_logmaster_records_read's query on 1M records: 0.8 s without it, 3.3-7.5 s with it;
    docs/performance.md). -#}
{%- set record_key = {
    'uorid': "'?'",
    'logrba': "'?'",
    'loglrsn': "'?'",
    'memberid': '-1',
    'rid': "'?'",
    'change_type': "'?'",
    'dbid': '-1',
    'psid': '-1',
    'tbobid': '-1',
    'segnum': '-1'
} %}
with

source as (
    select * from {{ source('logmaster', 'data_records') }}
),

repeated_records as (
    -- the keys of records read more than once (usually none) and their first copy in file
    -- order: an aggregate over the key columns, not a window over whole records
    select
        capture,
        {% for key, stand_in in record_key.items() -%}
            coalesce({{ key }}, {{ stand_in }}) as {{ key }}_key,
        {% endfor -%}
        min(named_struct('source_file', source_file, 'raw_offset', raw_offset)) as first_copy
    from source
    where decode_error is null
    group by
        capture, uorid_key, logrba_key, loglrsn_key, memberid_key, rid_key, change_type_key,
        dbid_key, psid_key, tbobid_key, segnum_key
    having count(*) > 1
),

copies as (
    -- the repeated keys (usually none; one row per key read twice) are broadcast, so the
    -- records are joined where they are read and never shuffled: a shuffle of every record,
    -- bytes and images, cost each of the view's three readers seconds at 1M records
    select /*+ broadcast(repeated_records) */
        source.*,
        concat(source.source_file, ' offset ', source.raw_offset) as this_copy,
        case
            when source.decode_error is null and repeated_records.first_copy is not null
                then concat(
                    repeated_records.first_copy.source_file,
                    ' offset ',
                    repeated_records.first_copy.raw_offset
                )
        end as first_copy
    from source
    left join repeated_records
        on
            -- capture: never null (the loader names every record's capture)
            source.capture = repeated_records.capture
            {% for key, stand_in in record_key.items() -%}
                and coalesce(source.{{ key }}, {{ stand_in }}) = repeated_records.{{ key }}_key
            {% endfor %}
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
        nullif(first_copy, this_copy) as repeats_record,
        decode_error is null and coalesce(first_copy = this_copy, true) as is_decoded,
        -- row images decoded while the file was read (one-segment records of a table with a
        -- layout; udfs/logmaster/batch_rows.py), and the digest of the layout they were read with
        image_digest,
        before_values as inline_before_values,
        after_values as inline_after_values,
        image_warnings as inline_image_warnings,
        image_error as inline_image_error,
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
    from copies
)

select * from renamed

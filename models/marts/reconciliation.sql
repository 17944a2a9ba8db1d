-- Per file: records read = records decoded + records quarantined. "Decoded" counts records
-- found in an output (a control record, a row change, a catalog event), independently of the
-- raw count, so a record lost on the way breaks the equation (and the dbt test). `problem`
-- says what is wrong with the file or its capture as a whole (a file the capture lacks, a
-- file no record could be read from), which no record can carry; a copy of another file
-- (`duplicate_of`) reads no record of its own and is not a problem.
with

files as (
    select * from {{ ref('stg_logmart__files') }}
),

named_files as (
    select
        *,
        regexp_extract(source_file, '[^/]+$', 0) as file_name
    from files
),

capture_contents as (
    select
        source_system,
        capture,
        count_if(file_kind = 'control') as control_files,
        count_if(file_kind = 'data') as data_files,
        count_if(file_kind in ('log', 'parquet', 'csv', 'jsonl')) as log_files
    from files
    group by source_system, capture
),

data_sets as (
    -- Log Master: the data sets each control file's DLDS records list
    {%- if 'logmaster' in logmart_sources() %}
        select
            dlds.capture,
            dlds.source_file,
            trim(dlds.datasetname) as data_set,
            named_files.source_file is not null as is_found
        from {{ ref('stg_logmaster__dlds') }} as dlds
        left join named_files
            on
                named_files.source_system = 'db2zos'
                and dlds.capture = named_files.capture
                and upper(trim(dlds.datasetname)) = upper(named_files.file_name)
    {%- else %}
        select
            cast(null as string) as capture,
            cast(null as string) as source_file,
            cast(null as string) as data_set,
            false as is_found
        where false
    {%- endif %}
),

missing_data_sets as (
    -- DLDS data sets without a file of that name; when no name matches at all (files
    -- renamed on download) only a shortfall in the number of data files counts.
    select
        data_sets.source_file,
        array_join(array_sort(collect_list(
            case when not data_sets.is_found then data_sets.data_set end
        )), ', ') as missing,
        count_if(not data_sets.is_found) as missing_count,
        count_if(data_sets.is_found) as found_count,
        count(*) as listed_count,
        max(capture_contents.data_files) as data_files
    from data_sets
    inner join capture_contents
        on
            capture_contents.source_system = 'db2zos'
            and data_sets.capture = capture_contents.capture
    group by data_sets.source_file
),

log_sequence as (
    -- Db2 LUW capture files named S<7 digits>.log: a number skipped is a file missing.
    select
        source_file,
        file_name,
        lag(file_name) over (partition by capture order by file_name) as previous_name,
        cast(regexp_extract(upper(file_name), '^S([0-9]{7})[.]LOG$', 1) as int) - lag(
            cast(regexp_extract(upper(file_name), '^S([0-9]{7})[.]LOG$', 1) as int)
        ) over (partition by capture order by file_name) - 1 as skipped
    from named_files
    where
        source_system = 'db2luw'
        and file_kind = 'log'
        and upper(file_name) rlike '^S[0-9]{7}[.]LOG$'
),

records_read as (
    select
        source_system,
        source_file,
        count(*) as records_read
    from (
        {% for source in logmart_sources() -%}
            select
                source_system,
                source_file
            from {{ ref('int_' ~ source ~ '_records_read') }}
            {% if not loop.last %}union all{% endif %}
        {% endfor %}
    ) as raw_records
    group by source_system, source_file
),

accounted as (
    select
        source_system,
        source_file,
        count(distinct case when outcome != 'quarantined' then raw_offset end)
            as records_decoded,
        count(distinct case when outcome = 'quarantined' then raw_offset end)
            as records_quarantined
    from (
        {% for source in logmart_sources() -%}
            select
                source_system,
                source_file,
                raw_offset,
                outcome
            from {{ ref('int_' ~ source ~ '_records_accounted') }}
            {% if not loop.last %}union all{% endif %}
        {% endfor %}
    ) as outcomes
    group by source_system, source_file
),

reconciled as (
    select
        files.source_system,
        files.capture,
        files.source_file,
        files.file_kind,
        files.size_bytes,
        files.duplicate_of,
        coalesce(records_read.records_read, 0) as records_read,
        coalesce(accounted.records_decoded, 0) as records_decoded,
        coalesce(accounted.records_quarantined, 0) as records_quarantined
    from files
    left join records_read
        on
            files.source_system = records_read.source_system
            and files.source_file = records_read.source_file
    left join accounted
        on
            files.source_system = accounted.source_system
            and files.source_file = accounted.source_file
),

problems as (
    select
        reconciled.*,
        case
            when reconciled.file_kind in ('ignored', 'other')
                then 'not read: logmart reads only the files docs/operations.md lists here'
            -- a base snapshot is read by the snapshot loader: its problems are in quarantine
            when reconciled.file_kind in ('snapshot', 'snapshot_side') then null
            -- a byte-for-byte copy is read once, from the file it copies: not a problem
            when reconciled.duplicate_of is not null then null
            when
                reconciled.records_read = 0
                and reconciled.size_bytes > 0
                and reconciled.file_kind != 'empty'
                then concat(
                    'no record could be read from its ', reconciled.size_bytes, ' bytes: ',
                    'check that the file is complete and of the kind its name says'
                )
            when
                missing_data_sets.missing_count > 0
                and (
                    missing_data_sets.found_count > 0
                    or missing_data_sets.data_files < missing_data_sets.listed_count
                )
                then concat(
                    'the control file lists data set(s) ', missing_data_sets.missing,
                    ' that the extract folder lacks (', missing_data_sets.data_files,
                    ' data file(s) for ', missing_data_sets.listed_count,
                    ' data sets): their changes are missing; copy them in and build again'
                )
            when reconciled.file_kind = 'data' and capture_contents.control_files = 0
                then concat(
                    'the extract has no control file (the one with XTYP, DTBI and DLCI ',
                    'records): no table layout is known, so no row change decodes; copy it ',
                    'into the extract folder and build again'
                )
            when log_sequence.skipped > 0
                then concat(
                    log_sequence.skipped, ' .log file(s) missing before it (the names go from ',
                    log_sequence.previous_name, ' to ', log_sequence.file_name,
                    '): records of transactions that span them are missing; copy them in ',
                    'and build again'
                )
            when
                reconciled.file_kind in ('catalog', 'catalog_tables', 'catalog_columns')
                and capture_contents.log_files = 0
                then concat(
                    'the capture has a catalog export but no log file (',
                    case
                        when reconciled.source_system = 'db2luw' then '*.log' else 'sys_log*.*'
                    end,
                    '): nothing to decode; copy the capture files in'
                )
        end as problem
    from reconciled
    left join capture_contents
        on
            reconciled.source_system = capture_contents.source_system
            and reconciled.capture = capture_contents.capture
    left join missing_data_sets
        on reconciled.source_file = missing_data_sets.source_file
    left join log_sequence
        on reconciled.source_file = log_sequence.source_file
)

select
    *,
    records_read = records_decoded + records_quarantined as is_reconciled
from problems

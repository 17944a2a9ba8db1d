-- What Log Master's own rules say is wrong with a file of an extract, which no record can
-- carry (marts.reconciliation takes `problem` after the rules every source shares): data sets
-- the control file's DLDS records list that the extract folder lacks, or data files without
-- a control file.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

files as (
    select
        *,
        regexp_extract(source_file, '[^/]+$', 0) as file_name
    from {{ ref('stg_logmart__files') }}
    where source_system = 'db2zos'
),

extract_contents as (
    select
        capture,
        count_if(file_kind = 'control') as control_files,
        count_if(file_kind = 'data') as data_files
    from files
    group by capture
),

data_sets as (
    -- the data sets each control file's DLDS records list, and whether a file has that name
    select
        dlds.capture,
        dlds.source_file,
        trim(dlds.datasetname) as data_set,
        files.source_file is not null as is_found
    from {{ ref('stg_logmaster__dlds') }} as dlds
    left join files
        on
            dlds.capture = files.capture
            and upper(trim(dlds.datasetname)) = upper(files.file_name)
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
        max(extract_contents.data_files) as data_files
    from data_sets
    inner join extract_contents
        on data_sets.capture = extract_contents.capture
    group by data_sets.source_file
),

problems as (
    select
        files.source_system,
        files.source_file,
        case
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
            when files.file_kind = 'data' and extract_contents.control_files = 0
                then concat(
                    'the extract has no control file (the one with XTYP, DTBI and DLCI ',
                    'records): no table layout is known, so no row change decodes; copy it ',
                    'into the extract folder and build again'
                )
        end as problem
    from files
    left join extract_contents
        on files.capture = extract_contents.capture
    left join missing_data_sets
        on files.source_file = missing_data_sets.source_file
)

select * from problems
where problem is not null

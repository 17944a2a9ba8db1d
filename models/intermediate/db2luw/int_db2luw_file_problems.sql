-- What Db2 LUW's own rules say is wrong with a file of a capture, which no record can carry
-- (marts.reconciliation takes `problem` after the rules every source shares): a .log file
-- missing from the S<7 digits>.log numbering, or a catalog export without a log file.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

files as (
    select
        *,
        regexp_extract(source_file, '[^/]+$', 0) as file_name
    from {{ ref('stg_logmart__files') }}
    where source_system = 'db2luw'
),

capture_contents as (
    select
        capture,
        count_if(file_kind = 'log') as log_files
    from files
    group by capture
),

log_sequence as (
    -- capture files named S<7 digits>.log: a number skipped is a file missing
    select
        source_file,
        file_name,
        lag(file_name) over (partition by capture order by file_name) as previous_name,
        cast(regexp_extract(upper(file_name), '^S([0-9]{7})[.]LOG$', 1) as int) - lag(
            cast(regexp_extract(upper(file_name), '^S([0-9]{7})[.]LOG$', 1) as int)
        ) over (partition by capture order by file_name) - 1 as skipped
    from files
    where
        file_kind = 'log'
        and upper(file_name) rlike '^S[0-9]{7}[.]LOG$'
),

problems as (
    select
        files.source_system,
        files.source_file,
        case
            when log_sequence.skipped > 0
                then concat(
                    log_sequence.skipped, ' .log file(s) missing before it (the names go from ',
                    log_sequence.previous_name, ' to ', log_sequence.file_name,
                    '): records of transactions that span them are missing; copy them in ',
                    'and build again'
                )
            when files.file_kind = 'catalog' and capture_contents.log_files = 0
                then concat(
                    'the capture has a catalog export but no log file (*.log): nothing to ',
                    'decode; copy the capture files in'
                )
        end as problem
    from files
    left join capture_contents
        on files.capture = capture_contents.capture
    left join log_sequence
        on files.source_file = log_sequence.source_file
)

select * from problems
where problem is not null

-- What solidDB's own rules say is wrong with a file of a capture, which no record can carry
-- (marts.reconciliation takes `problem` after the rules every source shares): a catalog
-- export without a SYS_LOG export.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

files as (
    select * from {{ ref('stg_logmart__files') }}
    where source_system = 'soliddb'
),

capture_contents as (
    select
        capture,
        count_if(file_kind in ('parquet', 'csv', 'jsonl')) as log_files
    from files
    group by capture
),

problems as (
    select
        files.source_system,
        files.source_file,
        case
            when
                files.file_kind in ('catalog_tables', 'catalog_columns')
                and capture_contents.log_files = 0
                then concat(
                    'the capture has a catalog export but no log file (sys_log*.*): nothing ',
                    'to decode; copy the capture files in'
                )
        end as problem
    from files
    left join capture_contents
        on files.capture = capture_contents.capture
)

select * from problems
where problem is not null

-- Every row read from a solidDB export (SYS_LOG rows and catalog rows), read cleanly or not:
-- the left side of the reconciliation.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

sys_log_rows as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_soliddb__sys_log') }}
),

catalog_table_rows as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_soliddb__catalog_tables') }}
),

catalog_column_rows as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_soliddb__catalog_columns') }}
)

select * from sys_log_rows
union all
select * from catalog_table_rows
union all
select * from catalog_column_rows

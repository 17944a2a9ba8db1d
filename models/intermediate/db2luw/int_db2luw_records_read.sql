-- Every record read from a Db2 LUW capture (log records and catalog export rows), decoded or
-- not: the left side of the reconciliation.
with

log_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__log_records') }}
),

catalog_tables as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__catalog_tables') }}
),

catalog_columns as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__catalog_columns') }}
),

catalog_datapartitions as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__catalog_datapartitions') }}
),

catalog_datatypes as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__catalog_datatypes') }}
)

select * from log_records
union all
select * from catalog_tables
union all
select * from catalog_columns
union all
select * from catalog_datapartitions
union all
select * from catalog_datatypes

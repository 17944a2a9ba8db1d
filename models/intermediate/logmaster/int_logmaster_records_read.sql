-- Every record read from a Log Master file (control and data), decoded or not: the left side
-- of the reconciliation.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

control_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_logmaster__control_records') }}
),

data_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_logmaster__lldf') }}
)

select * from control_records
union all
select * from data_records

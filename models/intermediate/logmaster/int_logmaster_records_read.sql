-- Every record read from a Log Master file (control and data), decoded or not: the left side
-- of the reconciliation.
-- Incremental by capture (macros/incremental.sql): a record belongs to its capture alone, so a
-- build lists only the records of new or changed extracts.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('db2zos', '') }}"
) }}
{#- one query on an incremental run, for both inputs -#}
{%- set capture_filter = captures_to_build_filter('db2zos', '') %}
with

captures as (
    {{ captures_to_build('db2zos', '') }}
),

control_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_logmaster__control_records') }}
    where {{ capture_filter }}
),

data_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_logmaster__lldf') }}
    where {{ capture_filter }}
),

records as (
    select * from control_records
    union all
    select * from data_records
)

select
    records.*,
    captures.capture_fingerprint
from records
inner join captures
    on records.capture = captures.capture

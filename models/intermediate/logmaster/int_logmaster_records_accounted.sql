-- Where every Log Master record read ended up, one row per record: a decoded control record,
-- part of a row change, part of a catalog event, or quarantined. Reconciliation counts these
-- independently of the raw tables, so a record lost on the way shows as a gap.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

control_records as (
    select
        source_file,
        raw_offset,
        'control_record' as outcome
    from {{ ref('stg_logmaster__control_records') }}
    where is_decoded
),

changes as (
    select
        raw_records,
        'row_change' as outcome
    from {{ ref('int_logmaster_changes_standardized') }}
),

catalog_events as (
    select
        raw_records,
        'catalog_event' as outcome
    from {{ ref('int_logmaster_catalog_events_extracted') }}
),

change_records as (
    select
        output_record.source_file,
        output_record.raw_offset,
        outputs.outcome
    from (
        select * from changes
        union all
        select * from catalog_events
    ) as outputs
        lateral view explode(outputs.raw_records) exploded as output_record
),

quarantined as (
    select
        source_file,
        raw_offset,
        'quarantined' as outcome
    from {{ ref('int_logmaster_records_quarantined') }}
),

accounted as (
    select * from control_records
    union all
    select * from change_records
    union all
    select * from quarantined
)

select
    'db2zos' as source_system,
    source_file,
    raw_offset,
    outcome
from accounted

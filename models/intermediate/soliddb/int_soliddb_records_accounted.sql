-- Where every solidDB row read ended up, one row per row: a NOP row, a transaction event
-- (TRX_START, COMMIT), part of a row change (in fct_changes), part of a change of a CAPTURE_OFF
-- transaction (decoded, not propagated), a catalog event (DDL, SQL text), a catalog row, or
-- quarantined. Reconciliation counts these independently of the raw tables.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

nop_rows as (
    select
        source_file,
        raw_offset,
        'nop' as outcome
    from {{ ref('stg_soliddb__sys_log') }}
    where is_decoded and record_kind in ('nop', 'empty')
),

transaction_events as (
    select
        source_file,
        raw_offset,
        'transaction_event' as outcome
    from {{ ref('int_soliddb_records_grouped') }}
    where record_kind in ('trx_start', 'commit')
),

propagated_changes as (
    select
        raw_records,
        'row_change' as outcome
    from {{ ref('int_soliddb_changes_standardized') }}
    where operation != 'truncate'  -- a truncate's DDL record is a catalog event
),

capture_off_changes as (
    select
        raw_records,
        'capture_off_change' as outcome
    from {{ ref('int_soliddb_changes_paired') }}
    where
        is_capture_off_transaction
        and decode_error is null
        and operation != 'truncate'
),

catalog_events as (
    select
        raw_records,
        'catalog_event' as outcome
    from {{ ref('int_soliddb_catalog_events_extracted') }}
),

output_records as (
    select
        output_record.source_file,
        output_record.raw_offset,
        outputs.outcome
    from (
        select * from propagated_changes
        union all
        select * from capture_off_changes
        union all
        select * from catalog_events
    ) as outputs
        lateral view explode(outputs.raw_records) exploded as output_record
),

catalog_rows as (
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_soliddb__catalog_tables') }}
    where is_decoded
    union all
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_soliddb__catalog_columns') }}
    where is_decoded
),

quarantined as (
    select
        source_file,
        raw_offset,
        'quarantined' as outcome
    from {{ ref('int_soliddb_records_quarantined') }}
),

accounted as (
    select * from nop_rows
    union all
    select * from transaction_events
    union all
    select * from output_records
    union all
    select * from catalog_rows
    union all
    select * from quarantined
)

select
    'soliddb' as source_system,
    source_file,
    raw_offset,
    outcome
from accounted

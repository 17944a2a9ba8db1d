-- Where every Db2 LUW record read ended up, one row per record and outcome: part of a row
-- change, a catalog event, a transaction event (commit/abort), a compensation record, a row
-- record that is not a user row (internal record type 0, catalog table), a record kept only in
-- staging (out-of-row start, LOB data, log manager record types logmart does not decode), a
-- catalog export row, or quarantined. The reconciliation counts these independently of the
-- raw tables, so a record lost on the way shows as a gap.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

records as (
    select * from {{ ref('stg_db2luw__log_records') }}
    where is_decoded
),

functions as (
    select * from {{ ref('db2luw_function_ids') }}
),

record_kinds as (
    -- one pass over the records for the outcomes their kind alone gives: a compensation
    -- record, a row record of a catalog table (not a user row), a record kept only in staging
    select
        records.source_file,
        records.raw_offset,
        filter(
            array(
                case when functions.outcome = 'compensation' then 'compensation' end,
                case
                    when functions.outcome = 'row_change' and records.catalog_table
                        then 'not_user_row'
                end,
                case
                    when
                        functions.outcome = 'log_only'
                        or records.component = 'lob'
                        or records.record_type_name = 'unknown'
                        then 'staging_only'
                end
            ),
            kind -> kind is not null
        ) as outcomes
    from records
    left join functions
        on
            records.component = functions.component
            and records.function_identifier = functions.function_identifier
),

classified_records as (
    select
        record_kinds.source_file,
        record_kinds.raw_offset,
        kind_outcome.outcome
    from record_kinds
        lateral view explode(record_kinds.outcomes) kind_outcome as outcome
),

output_records as (
    select
        output_record.source_file,
        output_record.raw_offset,
        outputs.outcome
    from (
        select
            raw_records,
            'row_change' as outcome
        from {{ ref('int_db2luw_changes_standardized') }}
        union all
        select
            raw_records,
            'catalog_event' as outcome
        from {{ ref('int_db2luw_catalog_events_extracted') }}
    ) as outputs
        lateral view explode(outputs.raw_records) exploded as output_record
),

transaction_events as (
    select
        source_file,
        raw_offset,
        'transaction_event' as outcome
    from {{ ref('stg_db2luw__transaction_events') }}
),

not_user_rows as (
    select
        source_file,
        raw_offset,
        'not_user_row' as outcome
    from {{ ref('int_db2luw_row_images_decoded') }}
    where decode_error is null and not is_user_row
),

catalog_rows as (
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_db2luw__catalog_tables') }}
    where is_decoded
    union all
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_db2luw__catalog_columns') }}
    where is_decoded
    union all
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_db2luw__catalog_datapartitions') }}
    where is_decoded
    union all
    select
        source_file,
        raw_offset,
        'catalog_row' as outcome
    from {{ ref('stg_db2luw__catalog_datatypes') }}
    where is_decoded
),

quarantined as (
    select
        source_file,
        raw_offset,
        'quarantined' as outcome
    from {{ ref('int_db2luw_records_quarantined') }}
),

accounted as (
    select * from output_records
    union all
    select * from transaction_events
    union all
    select * from classified_records
    union all
    select * from not_user_rows
    union all
    select * from catalog_rows
    union all
    select * from quarantined
)

select distinct
    'db2luw' as source_system,
    source_file,
    raw_offset,
    outcome
from accounted

-- Every Log Master record that could not be decoded, one row per record, with the stage that
-- rejected it and the reason: the header (framing, layout), a record read twice, segment
-- reassembly, an unknown change type, or the row images.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

control_records as (
    select * from {{ ref('stg_logmaster__control_records') }}
),

data_records as (
    select * from {{ ref('stg_logmaster__lldf') }}
),

reassembled as (
    select * from {{ ref('int_logmaster_changes_reassembled') }}
),

row_images as (
    -- the changes whose images did not decode (a table by capture: the images are ephemeral)
    select * from {{ ref('int_logmaster_row_images_failed') }}
),

change_types as (
    select * from {{ ref('logmaster_change_types') }}
),

control_failures as (
    select
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        coalesce(record_type, 'control record') as record_type,
        'decode' as stage,
        decode_error as reason
    from control_records
    where not is_decoded
),

change_failures as (
    select
        reassembled.raw_records,
        concat('LLDF ', reassembled.change_type) as record_type,
        case
            when reassembled.reassembly_error is not null then 'segments'
            else 'change_type'
        end as stage,
        coalesce(
            reassembled.reassembly_error,
            concat(
                'CHANGE TYPE ''', reassembled.change_type,
                ''' is not one logmart knows; see seeds/logmaster_change_types.csv'
            )
        ) as reason
    from reassembled
    left join change_types
        on reassembled.change_type = change_types.change_type
    where reassembled.reassembly_error is not null or change_types.change_type is null
),

image_failures as (
    select
        raw_records,
        concat('LLDF ', change_type) as record_type,
        'row_image' as stage,
        decode_error as reason
    from row_images
    where decode_error is not null
),

later_failures as (
    -- records that decoded but whose change failed later (segments, change type, images)
    select
        failed_record.source_file,
        failed_record.raw_offset,
        failures.record_type,
        failures.stage,
        failures.reason
    from (
        select * from change_failures
        union all
        select * from image_failures
    ) as failures
        lateral view explode(failures.raw_records) exploded as failed_record
),

data_failures as (
    -- one pass over the data records: those that did not decode (or repeat another), and
    -- those a later stage rejected. No broadcast hint on the failures: with a wrong setting
    -- every image of a capture fails, as many failures as records
    select
        data_records.capture,
        data_records.source_file,
        data_records.raw_offset,
        data_records.record_length,
        data_records.record_bytes,
        case
            when data_records.is_decoded then later_failures.record_type
            when data_records.repeats_record is null then 'LLDF'
            else concat('LLDF ', data_records.change_type)
        end as record_type,
        case
            when data_records.is_decoded then later_failures.stage
            when data_records.repeats_record is null then 'decode'
            else 'repeat'
        end as stage,
        case
            when data_records.is_decoded then later_failures.reason
            else coalesce(
                data_records.decode_error,
                concat(
                    'repeats the record at ', data_records.repeats_record,
                    ' (UORID ', data_records.uorid, ', LOGRBA ', data_records.logrba,
                    ', segment ', coalesce(data_records.segnum, 1), '): the extract holds ',
                    'the same record twice (overlapping extracts or a data file copied ',
                    'twice); the first copy is used'
                )
            )
        end as reason
    from data_records
    left join later_failures
        on
            data_records.source_file = later_failures.source_file
            and data_records.raw_offset = later_failures.raw_offset
    where not data_records.is_decoded or later_failures.source_file is not null
),

all_failures as (
    select * from control_failures
    union all
    select * from data_failures
)

select
    'db2zos' as source_system,
    capture,
    source_file,
    raw_offset,
    record_length,
    record_bytes,
    record_type,
    stage,
    reason
from all_failures

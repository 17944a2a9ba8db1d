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
    select * from {{ ref('int_logmaster_row_images_decoded') }}
),

change_types as (
    select * from {{ ref('logmaster_change_types') }}
),

undecoded_control as (
    select
        source_file,
        raw_offset,
        coalesce(record_type, 'control record') as record_type,
        'decode' as stage,
        decode_error as reason
    from control_records
    where not is_decoded
),

undecoded_data as (
    select
        source_file,
        raw_offset,
        case
            when repeats_record is null then 'LLDF' else concat('LLDF ', change_type)
        end as record_type,
        case when repeats_record is null then 'decode' else 'repeat' end as stage,
        coalesce(
            decode_error,
            concat(
                'repeats the record at ', repeats_record, ' (UORID ', uorid, ', LOGRBA ', logrba,
                ', segment ', coalesce(segnum, 1), '): the extract holds the same record twice ',
                '(overlapping extracts or a data file copied twice); the first copy is used'
            )
        ) as reason
    from data_records
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

exploded_failures as (
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

all_failures as (
    select * from undecoded_control
    union all
    select * from undecoded_data
    union all
    select * from exploded_failures
),

failed_data_records as (
    -- the bytes of the failed records only: a semi join with the (few) failures, so the
    -- records that decoded are scanned but never shuffled
    select
        data_records.capture,
        data_records.source_file,
        data_records.raw_offset,
        data_records.record_length,
        data_records.record_bytes
    from data_records
    left semi join all_failures
        on
            data_records.source_file = all_failures.source_file
            and data_records.raw_offset = all_failures.raw_offset
),

with_bytes as (
    select
        'db2zos' as source_system,
        coalesce(failed_data_records.capture, control_records.capture) as capture,
        all_failures.source_file,
        all_failures.raw_offset,
        coalesce(failed_data_records.record_length, control_records.record_length)
            as record_length,
        coalesce(failed_data_records.record_bytes, control_records.record_bytes)
            as record_bytes,
        all_failures.record_type,
        all_failures.stage,
        all_failures.reason
    from all_failures
    left join failed_data_records
        on
            all_failures.source_file = failed_data_records.source_file
            and all_failures.raw_offset = failed_data_records.raw_offset
    left join control_records
        on
            all_failures.source_file = control_records.source_file
            and all_failures.raw_offset = control_records.raw_offset
)

select * from with_bytes

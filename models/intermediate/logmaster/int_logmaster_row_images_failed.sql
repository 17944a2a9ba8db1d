-- The Log Master row changes whose images did not decode, and why: what the quarantine takes
-- at stage row_image. Incremental by capture (macros/incremental.sql), as the settlement: a
-- build decodes the images of new or changed extracts only, where the quarantine over the
-- whole stream would decode every extract again (int_logmaster_row_images_decoded is
-- ephemeral). Each extract it computed has one row with no failure, so that its partition
-- says it was computed when nothing in it failed.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('db2zos', decode_settings('logmaster')) }}"
) }}
with

captures as (
    {{ captures_to_build('db2zos', decode_settings('logmaster')) }}
),

failed_changes as (
    select
        capture,
        raw_records,
        change_type,
        decode_error,
        capture_fingerprint
    from {{ ref('int_logmaster_row_images_decoded') }}
    where
        decode_error is not null
        and {{ captures_to_build_filter('db2zos', decode_settings('logmaster')) }}
),

computed_captures as (
    select
        capture,
        cast(null as array<struct<source_file: string, raw_offset: bigint, record_length: bigint>>)
            as raw_records,
        cast(null as string) as change_type,
        cast(null as string) as decode_error,
        capture_fingerprint
    from captures
)

select * from failed_changes
union all
select * from computed_captures

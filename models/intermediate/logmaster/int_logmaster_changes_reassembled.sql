-- One row per logical change. A segmented change (TOTALSEGS > 1) is rebuilt from its
-- segments: each is a full LLDF record whose DATA slice is one piece of DATA, in SEGNUM order
-- (README interpretation 7). A change with a missing or repeated segment keeps no DATA and
-- says why in reassembly_error; its records are quarantined downstream.
-- A view over much data: its readers (the row images, decoded incrementally by capture; the
-- catalog events; the quarantine) compute it with their own filters pushed into the raw
-- scan. As a table it was a second write and read of every change and its images
-- (docs/performance.md, "2026-11-28, afternoon"). A table over little data (var
-- logmart_small_data, set by logmart's dbt runs: udfs.session.small_data_run): there the
-- readers' time is planning, and Spark copies this view's plan, two views of the records
-- deep, at every second reference of a CTE over it (docs/performance.md, "2026-11-30").
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(materialized='table' if var('logmart_small_data', false) else 'view') }}
{%- set columns = logmaster_change_columns() %}
with

records as (
    select * from {{ ref('stg_logmaster__lldf') }}
    where is_decoded
),

whole_records as (
    select
        {% for column in columns -%}
            {{ column }},
        {% endfor -%}
        source_file as raw_file,
        raw_offset,
        data_slice as data,
        array(
            named_struct(
                'source_file', source_file,
                'raw_offset', raw_offset,
                'record_length', record_length
            )
        ) as raw_records,
        cast(null as string) as reassembly_error,
        image_digest,
        inline_before_values,
        inline_after_values,
        inline_image_warnings,
        inline_image_error
    from records
    where coalesce(totalsegs, 0) <= 1
),

segment_groups as (
    select
        capture,
        memberid,
        uorid,
        loglrsn,
        logrba,
        dbid,
        psid,
        tbobid,
        rid,
        change_type,
        max(totalsegs) as expected_segments,
        min_by(
            named_struct(
                {% for column in columns -%}
                    '{{ column }}', {{ column }},
                {% endfor -%}
                'raw_file', source_file,
                'raw_offset', raw_offset
            ),
            segnum
        ) as first_segment,
        array_sort(
            collect_list(
                named_struct(
                    'segnum', segnum,
                    'source_file', source_file,
                    'raw_offset', raw_offset,
                    'record_length', record_length,
                    'data', data_slice
                )
            )
        ) as segments
    from records
    where totalsegs > 1
    group by capture, memberid, uorid, loglrsn, logrba, dbid, psid, tbobid, rid, change_type
),

checked_groups as (
    select
        *,
        transform(segments, s -> s.segnum) as segment_numbers,
        sequence(1, expected_segments) as wanted_numbers
    from segment_groups
),

reassembled_records as (
    select
        {% for column in columns -%}
            first_segment.{{ column }},
        {% endfor -%}
        first_segment.raw_file,
        first_segment.raw_offset,
        case
            when segment_numbers = wanted_numbers
                then aggregate(segments, cast('' as binary), (acc, s) -> concat(acc, s.data))
        end as data,
        transform(
            segments,
            s -> named_struct(
                'source_file', s.source_file,
                'raw_offset', s.raw_offset,
                'record_length', s.record_length
            )
        ) as raw_records,
        case
            when segment_numbers = wanted_numbers then null
            when size(array_except(wanted_numbers, segment_numbers)) > 0
                then concat(
                    'missing segment(s) ',
                    array_join(array_except(wanted_numbers, segment_numbers), ', '),
                    ' of ', expected_segments,
                    ' (UORID ', uorid, ', LOGRBA ', logrba, ')'
                )
            when size(segment_numbers) > size(array_distinct(segment_numbers))
                then concat(
                    'segment(s) ',
                    array_join(
                        array_distinct(
                            filter(
                                segment_numbers,
                                n -> size(filter(segment_numbers, m -> m = n)) > 1
                            )
                        ),
                        ', '
                    ),
                    ' appear more than once (UORID ', uorid, ', LOGRBA ', logrba, ')'
                )
            else concat(
                'segment numbers ', array_join(segment_numbers, ', '),
                ' do not match TOTALSEGS ', expected_segments
            )
        end as reassembly_error,
        -- a reassembled record's images are decoded by the UDF
        cast(null as string) as image_digest,
        cast(null as array<string>) as inline_before_values,
        cast(null as array<string>) as inline_after_values,
        cast(null as array<string>) as inline_image_warnings,
        cast(null as string) as inline_image_error
    from checked_groups
),

all_changes as (
    select * from whole_records
    union all
    select * from reassembled_records
)

select * from all_changes

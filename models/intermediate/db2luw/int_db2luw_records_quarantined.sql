-- Every Db2 LUW record (or catalog CSV row) that could not be decoded, one row per record,
-- with the stage that rejected it (the quarantine mart's shared names) and the reason:
-- decode (framing: a file that does not fit the framing/byteorder settings, or is cut short;
-- the record's own bytes; a db2ReadLog sqlcode; a catalog row), repeat (the same LSN read
-- twice: the later copies), record_kind (a data manager
-- function id logmart does not know: it may be a change, so it is not dropped silently) or
-- row_image (no table layout at the record's LSN, or an image that does not fit it).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

records as (
    select * from {{ ref('stg_db2luw__log_records') }}
),

known_functions as (
    select distinct
        component,
        function_identifier
    from {{ ref('db2luw_function_ids') }}
),

row_images as (
    select * from {{ ref('int_db2luw_row_images_decoded') }}
),

catalog_rows as (
    {% for catalog in db2luw_catalog_files() -%}
        select
            source_system,
            capture,
            source_file,
            raw_offset,
            record_length,
            record_bytes,
            decode_error
        from {{ ref('stg_db2luw__catalog_' ~ catalog) }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

image_failures as (
    select distinct
        source_file,
        raw_offset,
        concat('normal ', component, ' ', function_name) as record_type,
        decode_error as reason
    from row_images
    where decode_error is not null
),

record_failures as (
    -- one pass over the log records: those that did not decode (or repeat another), those of
    -- a function id logmart does not know (it may be a change: not dropped silently), and
    -- those whose row image failed. The three exclude each other: row images are decoded
    -- from decoded records of known functions only
    select
        records.source_system,
        records.capture,
        records.source_file,
        records.raw_offset,
        records.record_length,
        records.record_bytes,
        case
            when not records.is_decoded
                then coalesce(records.record_type_name, 'db2ReadLog record')
            when image_failures.source_file is not null then image_failures.record_type
            else concat(records.record_type_name, ' ', records.component)
        end as record_type,
        case
            when not records.is_decoded and records.repeats_record is null then 'decode'
            when not records.is_decoded then 'repeat'
            when image_failures.source_file is not null then 'row_image'
            else 'record_kind'
        end as stage,
        case
            when not records.is_decoded
                then coalesce(
                    records.decode_error,
                    concat(
                        'repeats the record at ', records.repeats_record, ' (LSN ',
                        records.lsn_hex, '): the capture holds the same log record twice ',
                        '(overlapping captures or a file copied twice); the first copy is used'
                    )
                )
            when image_failures.source_file is not null then image_failures.reason
            else concat(
                upper(records.component), ' function ', records.function_identifier,
                ' (LSN ', records.lsn_hex, ', TID ', records.tid,
                ') is not one logmart decodes; see seeds/db2luw_function_ids.csv'
            )
        end as reason
    from records
    left join known_functions
        on
            records.component = known_functions.component
            and records.function_identifier = known_functions.function_identifier
    left join image_failures
        on
            records.source_file = image_failures.source_file
            and records.raw_offset = image_failures.raw_offset
    where
        not records.is_decoded
        or (
            records.is_decoded
            and records.component in ('dms', 'dom', 'rds')
            and known_functions.function_identifier is null
        )
        or image_failures.source_file is not null
),

catalog_failures as (
    select
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        'catalog row' as record_type,
        'decode' as stage,
        decode_error as reason
    from catalog_rows
    where decode_error is not null
)

select * from record_failures
union all
select * from catalog_failures

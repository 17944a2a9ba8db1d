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

functions as (
    select * from {{ ref('db2luw_function_ids') }}
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

undecoded_records as (
    select
        source_file,
        raw_offset,
        coalesce(record_type_name, 'db2ReadLog record') as record_type,
        case when repeats_record is null then 'decode' else 'repeat' end as stage,  -- noqa: RF04
        coalesce(
            decode_error,
            concat(
                'repeats the record at ', repeats_record, ' (LSN ', lsn_hex,
                '): the capture holds the same log record twice (overlapping captures or a ',
                'file copied twice); the first copy is used'
            )
        ) as reason
    from records
    where not is_decoded
),

unknown_functions as (
    select
        records.source_file,
        records.raw_offset,
        concat(records.record_type_name, ' ', records.component) as record_type,
        'record_kind' as stage,  -- noqa: RF04
        concat(
            upper(records.component), ' function ', records.function_identifier,
            ' (LSN ', records.lsn_hex, ', TID ', records.tid,
            ') is not one logmart decodes; see seeds/db2luw_function_ids.csv'
        ) as reason
    from records
    left join functions
        on
            records.component = functions.component
            and records.function_identifier = functions.function_identifier
    where
        records.is_decoded
        and records.component in ('dms', 'dom', 'rds')
        and functions.function_identifier is null
),

image_failures as (
    select distinct
        source_file,
        raw_offset,
        concat('normal ', component, ' ', function_name) as record_type,
        'row_image' as stage,  -- noqa: RF04
        decode_error as reason
    from row_images
    where decode_error is not null
),

catalog_failures as (
    select
        source_file,
        raw_offset,
        'catalog row' as record_type,
        'decode' as stage,  -- noqa: RF04
        decode_error as reason
    from catalog_rows
    where decode_error is not null
),

failed_records as (
    select * from undecoded_records
    union all
    select * from unknown_functions
    union all
    select * from image_failures
),

with_bytes as (
    select
        records.source_system,
        records.capture,
        failed_records.source_file,
        failed_records.raw_offset,
        records.record_length,
        records.record_bytes,
        failed_records.record_type,
        failed_records.stage,
        failed_records.reason
    from failed_records
    inner join records
        on
            failed_records.source_file = records.source_file
            and failed_records.raw_offset = records.raw_offset
),

failed_catalog_rows as (
    select
        catalog_rows.source_system,
        catalog_rows.capture,
        catalog_failures.source_file,
        catalog_failures.raw_offset,
        catalog_rows.record_length,
        catalog_rows.record_bytes,
        catalog_failures.record_type,
        catalog_failures.stage,
        catalog_failures.reason
    from catalog_failures
    inner join catalog_rows
        on
            catalog_failures.source_file = catalog_rows.source_file
            and catalog_failures.raw_offset = catalog_rows.raw_offset
)

select * from with_bytes
union all
select * from failed_catalog_rows

{{ config(materialized='view') }}
-- Every record logmart could not decode, every source: where it is (file, offset), its
-- bytes, which stage rejected it, why, and what to do. The build goes on without it
-- (`logmart build --strict` fails on the first one instead).
with

quarantined as (
    {% for source in logmart_sources() -%}
        select
            source_system,
            capture,
            source_file,
            raw_offset,
            record_length,
            record_bytes,
            record_type,
            stage,
            reason
        from {{ ref('int_' ~ source ~ '_records_quarantined') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

advised as (
    select
        *,
        case stage
            when 'decode'
                then concat(
                    'the reason says what the bytes should have been; replace the file with a ',
                    'complete binary copy, or fix the setting it names, and build again'
                )
            when 'repeat'
                then concat(
                    'nothing is lost (the first copy is used); keep each part of the log in ',
                    'one file of the capture to silence this'
                )
            when 'segments'
                then concat(
                    'copy every data file of the extract in, complete, and build again; the ',
                    'change is left out until then'
                )
            when 'row_image'
                then concat(
                    'check that the control file / catalog export belongs to this capture ',
                    '(same extract, taken at the end of the capture) and that the code page ',
                    'settings fit; then build again'
                )
            when 'change_type'
                then concat(
                    'a change type logmart does not know: send the record (source_file, ',
                    'raw_offset, record_bytes) to the logmart maintainers'
                )
            when 'record_kind'
                then concat(
                    'a record type logmart does not know: send the record (source_file, ',
                    'raw_offset, record_bytes) to the logmart maintainers'
                )
            else concat(
                'the record cannot be placed or applied; check the export is complete and ',
                'in log order, then build again'
            )
        end as what_to_do
    from quarantined
)

select * from advised

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
    union all
    -- a base snapshot that cannot be used (docs/snapshots.md): its table's history starts
    -- from the log alone
    select
        source_system,
        capture,
        source_file,
        cast(null as bigint) as raw_offset,
        cast(null as int) as record_length,
        cast(null as binary) as record_bytes,
        'snapshot' as record_type,
        'snapshot' as stage,
        problem as reason
    from {{ ref('int_logmart_snapshots_resolved') }}
    where snapshot_status = 'rejected'
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
            when 'snapshot'
                then concat(
                    'the reason says what to fix in the snapshot or its side file ',
                    '(docs/snapshots.md); until then the history of its table starts ',
                    'from the log alone'
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

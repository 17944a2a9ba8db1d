-- Db2 LUW row changes (int_db2luw_changes_paired) with whether a compensation record reverses
-- them. A compensation record (undo insert/delete/update, 110-112, 131, 166, 168) reverses the
-- row record of its transaction whose lso_previous is the compensation record's undo-next LSO
-- (ARIES: a CLR's undo-next is the prevLSO of the record it undoes), written before it. A
-- change is reversed when one of its records is (either record of a paired update); a
-- truncate is not a row record and is never reversed. Compensation records are not changes.
-- A TID is one transaction over every capture of its log stream (macro log_stream).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

changes as (
    select * from {{ ref('int_db2luw_changes_paired') }}
),

functions as (
    select * from {{ ref('db2luw_function_ids') }}
    where outcome in ('row_change', 'compensation')
),

records as (
    select
        records.capture,
        records.source_file,
        records.raw_offset,
        records.tid,
        records.lsn,
        records.lso_previous,
        records.compensation_lso,
        functions.outcome
    from {{ ref('stg_db2luw__log_records') }} as records
    inner join functions
        on
            records.component = functions.component
            and records.function_identifier = functions.function_identifier
    where records.is_decoded
),

reversed_records as (
    select
        row_records.source_file,
        row_records.raw_offset
    from records as row_records
    left semi join records as compensations
        on
            {{ log_stream('row_records.capture') }} = {{ log_stream('compensations.capture') }}
            and row_records.tid = compensations.tid
            and row_records.lso_previous = compensations.compensation_lso
            and row_records.lsn < compensations.lsn
            and compensations.outcome = 'compensation'
    where row_records.outcome = 'row_change'
),

change_records as (
    select
        source_file,
        raw_offset,
        row_in_record,
        explode(raw_records) as change_record
    from changes
),

reversed_changes as (
    select distinct
        change_records.source_file,
        change_records.raw_offset,
        change_records.row_in_record
    from change_records
    left semi join reversed_records
        on
            change_records.change_record.source_file = reversed_records.source_file
            and change_records.change_record.raw_offset = reversed_records.raw_offset
),

compensated as (
    select
        changes.*,
        reversed_changes.source_file is not null as is_reversed
    from changes
    left join reversed_changes
        on
            changes.source_file = reversed_changes.source_file
            and changes.raw_offset = reversed_changes.raw_offset
            and changes.row_in_record = reversed_changes.row_in_record
)

select * from compensated

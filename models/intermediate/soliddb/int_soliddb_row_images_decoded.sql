-- Every row record (INSERT, UPDATE, DELETE_FULL, UPDATE_BEFOREIMAGE) that read cleanly, with
-- the layout of its table (RELID) in force at its LOGADDR and its DATA decoded by the registered
-- UDF logmart_soliddb_row (values in column order, zipped here with the column names).
-- decode_error says why a record could not be decoded.
-- Incremental by capture (macros/incremental.sql): a build decodes only new or changed
-- captures; layouts come from each capture's own catalog export and logged DDL.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('soliddb', decode_settings('soliddb')) }}"
) }}
with

captures as (
    {{ captures_to_build('soliddb', decode_settings('soliddb')) }}
),

row_records as (
    select * from {{ ref('stg_soliddb__sys_log') }}
    where
        is_row_record
        and is_decoded
        and has_logaddr
        and {{ captures_to_build_filter('soliddb', decode_settings('soliddb')) }}
),

versions as (
    select * from {{ ref('int_soliddb_table_versions') }}
    where
        version_error is null
        and {{ captures_to_build_filter('soliddb', decode_settings('soliddb')) }}
),

versioned as (
    select
        row_records.source_system,
        row_records.capture,
        row_records.source_file,
        row_records.raw_offset,
        row_records.record_length,
        row_records.recid,
        row_records.recname,
        row_records.record_kind,
        row_records.trxid,
        row_records.stmttrxid,
        row_records.relid,
        row_records.flags,
        row_records.logaddr_hex,
        row_records.data,
        versions.valid_from_logaddr as layout_valid_from,
        versions.table_schema,
        versions.table_name,
        versions.column_names,
        versions.key_columns,
        versions.column_types,
        versions.layout_json,
        versions.is_dropped,
        captures.capture_fingerprint
    from row_records
    inner join captures
        on row_records.capture = captures.capture
    left join versions
        on
            row_records.capture = versions.capture
            and row_records.relid = versions.rel_id
            and row_records.logaddr_hex > versions.valid_from_logaddr
            and (
                versions.valid_to_logaddr is null
                or row_records.logaddr_hex <= versions.valid_to_logaddr
            )
),

decoded as (
    select
        *,
        logmart_soliddb_row(data, layout_json) as decoded_row
    from versioned
),

zipped as (
    select
        decoded.* except (data, layout_json, decoded_row),
        case
            when decoded.decoded_row.values is not null
                then map_from_arrays(decoded.column_names, decoded.decoded_row.values)
        end as row_values,
        case
            when decoded.decoded_row.null_reasons is not null
                then map_filter(
                    map_from_arrays(decoded.column_names, decoded.decoded_row.null_reasons),
                    (column_name, reason) -> reason is not null
                )
        end as null_reasons,
        case
            when decoded.relid is null
                then concat(
                    'the row record has no RELID (', decoded.recname,
                    ' at LOGADDR ', decoded.logaddr_hex, ')'
                )
            when decoded.layout_valid_from is null
                then concat(
                    'no table layout for RELID ', decoded.relid, ' at LOGADDR ',
                    decoded.logaddr_hex, ': the table is not in the catalog export and no ',
                    'CREATE TABLE for it is logged earlier; export SYS_TABLES and SYS_COLUMNS ',
                    'when the capture starts'
                )
            when decoded.is_dropped
                then concat(
                    'table RELID ', decoded.relid, ' (', decoded.table_schema, '.',
                    decoded.table_name, ') was dropped before LOGADDR ', decoded.logaddr_hex
                )
            when decoded.decoded_row.error is not null
                then concat(
                    decoded.decoded_row.error, ' (', decoded.recname, ' of ',
                    decoded.table_schema, '.', decoded.table_name,
                    ' at LOGADDR ', decoded.logaddr_hex, ')'
                )
        end as decode_error
    from decoded
)

select * from zipped

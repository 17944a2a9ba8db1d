-- Every version of every table layout of a capture, from the catalog export (the baseline,
-- in force from the start of the capture) and the CREATE/ALTER/RENAME/DROP TABLE text solidDB
-- logs (RECID 6; in force after the statement's LOGADDR), built by the registered UDF
-- logmart_soliddb_layout_history once per capture. A row record at LOGADDR L uses the version
-- with valid_from_logaddr < L <= valid_to_logaddr. A logged statement that could not be applied
-- makes no version: it is a row with version_error (and its SQL record is quarantined).
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

catalog_tables as (
    select
        capture,
        collect_list(
            named_struct('id', rel_id, 'table_name', table_name, 'schema', table_schema)
        ) as catalog_rows
    from {{ ref('stg_soliddb__catalog_tables') }}
    where is_decoded
    group by capture
),

catalog_columns as (
    select
        capture,
        collect_list(
            named_struct(
                'rel_id', rel_id,
                'column_name', column_name,
                'column_number', column_number,
                'data_type', data_type,
                'data_type_number', data_type_number,
                'char_max_length', char_max_length,
                'numeric_precision', numeric_precision,
                'numeric_scale', numeric_scale,
                'nullable', nullable
            )
        ) as catalog_rows
    from {{ ref('stg_soliddb__catalog_columns') }}
    where is_decoded
    group by capture
),

schema_records as (
    select
        capture,
        collect_list(
            named_struct(
                'recid', recid,
                'trxid', trxid,
                'stmttrxid', stmttrxid,
                'relid', relid,
                'flags', flags,
                'logaddr', logaddr,
                'data', data
            )
        ) as log_records
    from {{ ref('int_soliddb_schema_records_decoded') }}
    group by capture
),

captures as (
    select capture from catalog_tables
    union
    select capture from catalog_columns
    union
    select capture from schema_records
),

histories as (
    select
        captures.capture,
        logmart_soliddb_layout_history(
            catalog_tables.catalog_rows,
            catalog_columns.catalog_rows,
            schema_records.log_records,
            '{{ var("soliddb_char_codec") }}',
            '{{ var("soliddb_wchar_codec") }}'
        ) as entries
    from captures
    left join catalog_tables
        on captures.capture = catalog_tables.capture
    left join catalog_columns
        on captures.capture = catalog_columns.capture
    left join schema_records
        on captures.capture = schema_records.capture
),

entries as (
    select
        histories.capture,
        entry.rel_id,
        entry.valid_from_logaddr,
        entry.origin,
        entry.table_schema,
        entry.table_name,
        entry.column_names,
        entry.key_columns,
        map_from_arrays(entry.column_names, entry.column_types) as column_types,
        entry.layout_json,
        entry.is_dropped,
        entry.error as version_error
    -- outer, then the filter: an inner explode makes Spark filter on the UDF's result first
    -- (size > 0), which runs the UDF twice
    from histories
        lateral view outer posexplode(histories.entries) exploded_entries as entry_position, entry
    where exploded_entries.entry_position is not null
),

all_entries as (
    -- versions and failures in one pass over entries (a second reference to it would run the
    -- UDF again): a failure has no end and no number; the windows number the versions alone
    select
        capture,
        rel_id,
        valid_from_logaddr,
        case
            when version_error is null
                then lead(valid_from_logaddr) over (
                    partition by capture, rel_id, version_error is null
                    order by valid_from_logaddr
                )
        end as valid_to_logaddr,
        case
            when version_error is null
                then row_number() over (
                    partition by capture, rel_id, version_error is null
                    order by valid_from_logaddr
                )
        end as version_number,
        origin,
        table_schema,
        table_name,
        column_names,
        key_columns,
        column_types,
        layout_json,
        is_dropped,
        version_error
    from entries
)

select
    'soliddb' as source_system,
    *
from all_entries

-- Every solidDB row read that could not be decoded, one row per row, with the stage that
-- rejected it and the reason: reading the export (bad hex, LOGADDR not 20 bytes, a number that
-- is not one), a row exported twice (its later copies), an unknown RECID, no LOGADDR or TRXID
-- to place it, its DDL/SQL payload, or its row image (no layout, DATA that does not fit the
-- layout). Catalog rows too.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

sys_log as (
    select * from {{ ref('stg_soliddb__sys_log') }}
),

undecoded_rows as (
    select
        source_file,
        raw_offset,
        case when repeats_record is null then 'decode' else 'repeat' end as stage,
        coalesce(
            decode_error,
            concat(
                'repeats ', repeats_record, ' (LOGADDR ', logaddr_hex,
                '): the capture holds the same SYS_LOG row twice (polls whose ranges overlap ',
                'or an export copied twice); the first copy is used'
            )
        ) as reason
    from sys_log
    where not is_decoded
),

unknown_records as (
    select
        source_file,
        raw_offset,
        'record_kind' as stage,
        case
            when recid is null
                then concat(
                    'RECID is missing but FLAGS is ', flags,
                    ', not 0: the row is neither a record nor a NOP'
                )
            else concat(
                'RECID ', recid, ' is not a SYS_LOG record id logmart knows ',
                '(see seeds/soliddb_recids.csv)'
            )
        end as reason
    from sys_log
    where is_decoded and record_kind = 'unknown'
),

unplaced_records as (
    select
        source_file,
        raw_offset,
        case when has_logaddr then 'transaction' else 'log_position' end as stage,
        case
            when not has_logaddr
                then concat(
                    recname, ' has no LOGADDR: it cannot be placed in log order'
                )
            else concat(
                recname, ' at LOGADDR ', logaddr_hex,
                ' has no TRXID: it cannot be placed in a transaction'
            )
        end as reason
    from sys_log
    where
        is_decoded
        and record_kind not in ('nop', 'empty', 'unknown')
        and (
            not has_logaddr
            or (trxid is null and record_kind not in ('ddl', 'sql'))
        )
),

statement_failures as (
    select
        statements.source_file,
        statements.raw_offset,
        'statement' as stage,
        coalesce(
            statements.statement_error,
            concat(
                versions.version_error,
                ': the table layouts go on without this statement'
            )
        ) as reason
    from {{ ref('int_soliddb_schema_records_decoded') }} as statements
    left join {{ ref('int_soliddb_table_versions') }} as versions
        on
            statements.capture = versions.capture
            and statements.logaddr_hex = versions.valid_from_logaddr
            and versions.origin = 'sql'
            and versions.version_error is not null
    where statements.statement_error is not null or versions.version_error is not null
),

change_failures as (
    select
        failed_record.source_file,
        failed_record.raw_offset,
        'row_image' as stage,
        changes.decode_error as reason
    from {{ ref('int_soliddb_changes_paired') }} as changes
        lateral view explode(changes.raw_records) exploded as failed_record
    where changes.decode_error is not null
),

sys_log_failures as (
    select * from undecoded_rows
    union all
    select * from unknown_records
    union all
    select * from unplaced_records
    union all
    select * from statement_failures
    union all
    select * from change_failures
),

sys_log_quarantined as (
    select
        sys_log.source_system,
        sys_log.capture,
        sys_log_failures.source_file,
        sys_log_failures.raw_offset,
        sys_log.record_length,
        sys_log.record_bytes,
        coalesce(sys_log.recname, 'SYS_LOG row') as record_type,
        sys_log_failures.stage,
        sys_log_failures.reason
    from sys_log_failures
    inner join sys_log
        on
            sys_log_failures.source_file = sys_log.source_file
            and sys_log_failures.raw_offset = sys_log.raw_offset
),

catalog_table_failures as (
    select
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        'SYS_TABLES row' as record_type,
        'decode' as stage,
        decode_error as reason
    from {{ ref('stg_soliddb__catalog_tables') }}
    where not is_decoded
),

catalog_column_failures as (
    select
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        'SYS_COLUMNS row' as record_type,
        'decode' as stage,
        decode_error as reason
    from {{ ref('stg_soliddb__catalog_columns') }}
    where not is_decoded
)

select * from sys_log_quarantined
union all
select * from catalog_table_failures
union all
select * from catalog_column_failures

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

later_failures as (
    select * from statement_failures
    union all
    select * from change_failures
),

row_failures as (
    -- one pass over the rows: those that did not decode (or repeat another), of an unknown
    -- RECID, that cannot be placed, and those a later stage rejected (statement, row image)
    select
        sys_log.source_system,
        sys_log.capture,
        sys_log.source_file,
        sys_log.raw_offset,
        sys_log.record_length,
        sys_log.record_bytes,
        coalesce(sys_log.recname, 'SYS_LOG row') as record_type,
        filter(
            array(
                case
                    when not sys_log.is_decoded
                        then named_struct(
                            'stage',
                            if(sys_log.repeats_record is null, 'decode', 'repeat'),
                            'reason',
                            coalesce(
                                sys_log.decode_error,
                                concat(
                                    'repeats ', sys_log.repeats_record,
                                    ' (LOGADDR ', sys_log.logaddr_hex,
                                    '): the capture holds the same SYS_LOG row twice ',
                                    '(polls whose ranges overlap or an export copied ',
                                    'twice); the first copy is used'
                                )
                            )
                        )
                end,
                case
                    when sys_log.is_decoded and sys_log.record_kind = 'unknown'
                        then named_struct(
                            'stage', 'record_kind',
                            'reason',
                            case
                                when sys_log.recid is null
                                    then concat(
                                        'RECID is missing but FLAGS is ', sys_log.flags,
                                        ', not 0: the row is neither a record nor a NOP'
                                    )
                                else concat(
                                    'RECID ', sys_log.recid,
                                    ' is not a SYS_LOG record id logmart knows ',
                                    '(see seeds/soliddb_recids.csv)'
                                )
                            end
                        )
                end,
                case
                    when
                        sys_log.is_decoded
                        and sys_log.record_kind not in ('nop', 'empty', 'unknown')
                        and (
                            not sys_log.has_logaddr
                            or (
                                sys_log.trxid is null
                                and sys_log.record_kind not in ('ddl', 'sql')
                            )
                        )
                        then named_struct(
                            'stage',
                            if(sys_log.has_logaddr, 'transaction', 'log_position'),
                            'reason',
                            if(
                                not sys_log.has_logaddr,
                                concat(
                                    sys_log.recname,
                                    ' has no LOGADDR: it cannot be placed in log order'
                                ),
                                concat(
                                    sys_log.recname, ' at LOGADDR ', sys_log.logaddr_hex,
                                    ' has no TRXID: it cannot be placed in a transaction'
                                )
                            )
                        )
                end,
                case
                    when later_failures.source_file is not null
                        then named_struct(
                            'stage', later_failures.stage,
                            'reason', later_failures.reason
                        )
                end
            ),
            failure -> failure is not null
        ) as failures
    from sys_log
    left join later_failures
        on
            sys_log.source_file = later_failures.source_file
            and sys_log.raw_offset = later_failures.raw_offset
),

sys_log_quarantined as (
    select
        row_failures.source_system,
        row_failures.capture,
        row_failures.source_file,
        row_failures.raw_offset,
        row_failures.record_length,
        row_failures.record_bytes,
        row_failures.record_type,
        exploded.failure.stage,
        exploded.failure.reason
    from row_failures
        lateral view explode(row_failures.failures) exploded as failure
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

-- SYS_LOG: every row read from a capture's exports, typed, with its record kind and its FLAGS
-- bits named. Rows that did not read cleanly are kept (is_decoded false). A row exported twice
-- in one capture (the same LOGADDR: polls that overlap, a file copied twice) is kept once: the
-- later copies name the first in repeats_record and are not decoded (they are quarantined).
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

sys_log as (
    select * from {{ source('soliddb', 'sys_log') }}
),

repeated_rows as (
    -- the LOGADDRs read more than once (usually none) and their first copy in file order:
    -- an aggregate over the key columns, not a window over whole rows
    select
        capture,
        logaddr,
        min(named_struct('source_file', source_file, 'raw_offset', raw_offset)) as first_copy
    from sys_log
    where decode_error is null and length(logaddr) = 20
    group by capture, logaddr
    having count(*) > 1
),

source as (
    -- the repeated keys are broadcast, so the rows are joined where they are read and never
    -- shuffled (stg_logmaster__lldf)
    select /*+ broadcast(repeated_rows) */
        sys_log.*,
        case
            when sys_log.decode_error is null and length(sys_log.logaddr) = 20
                then coalesce(
                    concat(
                        repeated_rows.first_copy.source_file,
                        ' row ',
                        repeated_rows.first_copy.raw_offset
                    ),
                    concat(sys_log.source_file, ' row ', sys_log.raw_offset)
                )
        end as first_copy
    from sys_log
    left join repeated_rows
        on
            -- plain = (capture is never null): Spark then drops the join for a reader that
            -- takes none of its columns (stg_logmaster__lldf)
            sys_log.capture = repeated_rows.capture
            and sys_log.logaddr = repeated_rows.logaddr
),

record_ids as (
    select * from {{ ref('soliddb_recids') }}
),

renamed as (
    select
        -- provenance
        source.source_system,
        source.capture,
        source.source_file,
        source.raw_offset,
        source.record_length,
        source.record_bytes,
        source.decode_error,
        nullif(source.first_copy, concat(source.source_file, ' row ', source.raw_offset))
            as repeats_record,
        source.decode_error is null
        and coalesce(
            source.first_copy, concat(source.source_file, ' row ', source.raw_offset)
        ) = concat(source.source_file, ' row ', source.raw_offset) as is_decoded,
        -- record (FLAGS 0 and no RECID: a NOP row; a RECID not in the seed: unknown)
        source.recid,
        coalesce(source.recname, record_ids.recname) as recname,
        case
            when coalesce(source.flags, 0) = 0 and coalesce(source.recid, 0) = 0
                then if(source.decode_error is null, 'nop', 'unknown')
            else coalesce(record_ids.record_kind, 'unknown')
        end as record_kind,
        coalesce(record_ids.is_row_record, false) as is_row_record,
        -- ids
        source.trxid,
        source.stmttrxid,
        source.relid,
        -- flags
        source.flags,
        case
            when coalesce(source.flags, 0) = 0 then array('NOP')
            else
                transform(
                    filter(sequence(0, 31), bit -> (shiftright(source.flags, bit) & 1) = 1),
                    bit -> case bit
                        when 0 then 'DATA'
                        when 1 then 'SHUTDOWN'
                        when 6 then 'CAPTURE_OFF'
                        else concat('BIT', bit)
                    end
                )
        end as flag_names,
        coalesce((source.flags & 1) != 0, false) as has_data_flag,
        coalesce((source.flags & 2) != 0, false) as is_shutdown,
        coalesce((source.flags & 64) != 0, false) as is_capture_off,
        -- log position (20 bytes; the hex sorts as the bytes do)
        source.logaddr,
        source.logaddr_hex,
        coalesce(length(source.logaddr) = 20, false) as has_logaddr,
        -- payload
        source.data,
        source.textdata
    from source
    left join record_ids
        on source.recid = record_ids.recid
)

select * from renamed

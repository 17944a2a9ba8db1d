-- Every Db2 LUW log record read, decoded or not: header, component and record fields typed.
-- Positions (LSN, LFS) also as 16 hex digits, whose text order is log order.
-- A record read twice in one capture (the same log stream and LSN: overlapping captures, a
-- file copied twice) is kept once: the later copies name the first in repeats_record and are
-- not decoded (they are quarantined).
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

source as (
    select * from {{ source('db2luw', 'log_records') }}
),

repeated_records as (
    -- the positions read more than once (usually none) and their first copy in file order:
    -- an aggregate over the key columns, not a window over whole records
    select
        capture,
        -- a null as a value no record takes, joined with = (as in stg_logmaster__lldf: Spark
        -- then drops the join for a reader that takes none of its columns)
        coalesce(log_stream_id, -1) as log_stream_id_key,
        coalesce(lsn, -1) as lsn_key,
        min(named_struct('source_file', source_file, 'raw_offset', raw_offset)) as first_copy
    from source
    group by capture, log_stream_id_key, lsn_key
    having count(*) > 1
),

copies as (
    -- the repeated keys are broadcast, so the records are joined where they are read and
    -- never shuffled (stg_logmaster__lldf)
    select /*+ broadcast(repeated_records) */
        source.*,
        case
            when source.decode_error is null
                then coalesce(
                    concat(
                        repeated_records.first_copy.source_file,
                        ' offset ',
                        repeated_records.first_copy.raw_offset
                    ),
                    concat(source.source_file, ' offset ', source.raw_offset)
                )
        end as first_copy
    from source
    left join repeated_records
        on
            -- capture: never null (the loader names every record's capture)
            source.capture = repeated_records.capture
            and coalesce(source.log_stream_id, -1) = repeated_records.log_stream_id_key
            and coalesce(source.lsn, -1) = repeated_records.lsn_key
),

renamed as (
    select
        -- provenance
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        decode_error,
        -- framing (the settings the file was read with, and the prefix)
        framing,
        byteorder,
        prefix_length,
        frame_lsn,
        frame_lfs,
        frame_sqlcode,
        -- log manager header
        log_record_length,
        record_type,
        record_type_name,
        flags,
        redo_always,
        propagatable,
        temp_table,
        singular_transaction,
        runtime_rollback,
        pseudo_compensation,
        lsn,
        lfs,
        lso_previous,
        tid,
        log_stream_id,
        header_length,
        extra_log_stream_id,
        compensation_lso,
        extra_lso,
        -- component record header
        component,
        component_identifier,
        function_identifier,
        function_name,
        kind,
        table_space_identifier,
        table_identifier,
        catalog_table,
        object_table_space_identifier,
        object_identifier,
        object_type,
        dom_flags,
        rds_flags,
        -- transaction manager (commit time is seconds since 1970 UTC)
        authid,
        -- row records
        lriudflags,
        redistribute_or_load,
        internal_temporal,
        mqt_maintenance,
        referential_integrity,
        set_integrity,
        decomposed_update,
        rid,
        new_rid,
        free_space,
        record_offset,
        first_page_of_the_block,
        pool_page_number,
        row_count,
        before_image,
        after_image,
        images,
        rids,
        -- the images as the data source decoded them with the catalog's layout (the digest
        -- of that decoding; int_db2luw_row_images_decoded takes them where it matches)
        image_digest as inline_image_digest,
        before_row as inline_before_row,
        after_row as inline_after_row,
        -- DDL records
        file_create_lsn,
        old_columns,
        new_columns,
        column_id,
        alter_bit_mask,
        alter_bit_values,
        altered_attributes,
        attributes_on,
        master_table_space_identifier,
        master_table_identifier,
        data_partition_identifier,
        partition_action,
        partition_action_name,
        index_token,
        index_root_page,
        long_tablespace_id,
        index_tablespace_id,
        index_object_id,
        lf_object_id,
        lob_object_id,
        xml_object_id,
        temporary_table_space_id,
        long_temporary_table_space_id,
        -- RDS DDL statement (Relation manager Table 3)
        ddl_operation_identifier,
        ddl_object_identifier,
        ddl_options,
        ddl_entries,
        statement_text_left,
        statement_text_length,
        statement_text,
        -- anything left undecoded
        payload,
        note,
        commit_time as commit_time_text,
        trigger as fired_by_trigger,
        -- derived
        nullif(first_copy, concat(source_file, ' offset ', raw_offset)) as repeats_record,
        decode_error is null
        and first_copy = concat(source_file, ' offset ', raw_offset) as is_decoded,
        lpad(hex(lsn), 16, '0') as lsn_hex,
        lpad(hex(lfs), 16, '0') as lfs_hex,
        timestamp_seconds(commit_time_epoch) as commit_ts
    from copies
)

select * from renamed

-- DDL and object records (DMS table description/alter records, DOM create/drop/truncate/reorg,
-- RDS DDL statements) and their undos, with the fields their spec tables give.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

records as (
    select * from {{ ref('stg_db2luw__log_records') }}
    where is_decoded and (startswith(kind, 'ddl_') or startswith(kind, 'undo_ddl_'))
),

ddl as (
    select
        -- provenance
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        -- transaction and position
        tid,
        lsn,
        lsn_hex,
        record_type_name,
        -- what
        component,
        function_identifier,
        function_name,
        kind,
        -- object
        table_space_identifier,
        table_identifier,
        catalog_table,
        object_table_space_identifier,
        object_identifier,
        object_type,
        dom_flags,
        rds_flags,
        -- table layout
        file_create_lsn,
        old_columns,
        new_columns,
        column_id,
        -- attributes, partitions, indexes, objects
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
        payload,
        note,
        -- derived
        kind in (
            'ddl_initialize_table', 'ddl_add_columns', 'ddl_drop_columns', 'ddl_alter_column',
            'undo_ddl_add_columns', 'undo_ddl_drop_columns', 'undo_ddl_alter_column',
            'ddl_create_table', 'ddl_drop_table', 'undo_ddl_create_table', 'undo_ddl_drop_table'
        ) as changes_layout
    from records
)

select * from ddl

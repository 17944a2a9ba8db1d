-- One row per solidDB change of every transaction (CAPTURE_OFF ones included, flagged): each
-- UPDATE_BEFOREIMAGE pairs with the next UPDATE of the same table (RELID) in the transaction
-- into one update with before and after images; a before image followed by another row record
-- of that table (or by nothing) stays an update without after image (before_only), an UPDATE
-- without before image is after_only. A primary-key change is logged as DELETE_FULL + INSERT
-- and stays a delete and an insert. A DDL record with LOGRECID 73 is a truncate of its table.
-- change_seq numbers a transaction's changes by the LOGADDR of each change's first record.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

row_records as (
    select
        images.*,
        grouped.log_stream,
        grouped.transaction_id,
        grouped.transaction_disposition,
        grouped.is_capture_off_transaction,
        grouped.commit_position
    from {{ ref('int_soliddb_row_images_decoded') }} as images
    inner join {{ ref('int_soliddb_records_grouped') }} as grouped
        on
            images.source_file = grouped.source_file
            and images.raw_offset = grouped.raw_offset
),

neighbours as (
    select
        *,
        lag(record_kind) over same_table as previous_kind,
        lead(record_kind) over same_table as next_kind,
        lead(source_file) over same_table as next_source_file,
        lead(raw_offset) over same_table as next_raw_offset,
        lead(record_length) over same_table as next_record_length,
        lead(recname) over same_table as next_recname,
        lead(row_values) over same_table as next_row_values,
        lead(null_reasons) over same_table as next_null_reasons,
        lead(decode_error) over same_table as next_decode_error
    from row_records
    window same_table as (
        partition by log_stream, transaction_id, relid
        order by logaddr_hex, source_file, raw_offset
    )
),

paired as (
    select
        *,
        case
            when record_kind = 'update_before' and next_kind = 'update' then 'paired'
            when record_kind = 'update_before' then 'before_only'
            when record_kind = 'update' then 'after_only'
        end as pairing
    from neighbours
    -- an UPDATE right after its table's UPDATE_BEFOREIMAGE is the after half of that change
    where not (record_kind = 'update' and coalesce(previous_kind = 'update_before', false))
),

row_changes as (
    select
        source_system,
        capture,
        source_file as raw_file,
        raw_offset,
        relid,
        table_schema,
        table_name,
        key_columns,
        column_types,
        pairing,
        case record_kind
            when 'insert' then 'insert'
            when 'delete' then 'delete'
            else 'update'
        end as operation,  -- noqa: RF04
        if(pairing = 'paired', concat(recname, '+', next_recname), recname)
            as source_change_type,
        if(record_kind in ('delete', 'update_before'), row_values, null) as before_image,
        if(record_kind in ('delete', 'update_before'), null_reasons, null)
            as before_null_reasons,
        case
            when record_kind in ('insert', 'update') then row_values
            when pairing = 'paired' then next_row_values
        end as after_image,
        case
            when record_kind in ('insert', 'update') then null_reasons
            when pairing = 'paired' then next_null_reasons
        end as after_null_reasons,
        concat(
            array(
                named_struct(
                    'source_file', source_file,
                    'raw_offset', raw_offset,
                    'record_length', record_length
                )
            ),
            if(
                pairing = 'paired',
                array(
                    named_struct(
                        'source_file', next_source_file,
                        'raw_offset', next_raw_offset,
                        'record_length', next_record_length
                    )
                ),
                array()
            )
        ) as raw_records,
        nullif(
            concat_ws('; ', decode_error, if(pairing = 'paired', next_decode_error, null)), ''
        ) as decode_error,
        logaddr_hex as log_position,
        transaction_id,
        transaction_disposition,
        is_capture_off_transaction,
        commit_position
    from paired
),

truncates as (
    select
        source_system,
        capture,
        raw_file,
        raw_offset,
        relid,
        table_schema,
        table_name,
        cast(array() as array<string>) as key_columns,
        null as column_types,
        cast(null as string) as pairing,
        'truncate' as operation,  -- noqa: RF04
        concat(source_change_type, ' ', ddl_operation) as source_change_type,
        -- null maps: the union types them as the row changes' images
        null as before_image,
        null as before_null_reasons,
        null as after_image,
        null as after_null_reasons,
        raw_records,
        cast(null as string) as decode_error,
        log_position,
        transaction_id,
        transaction_disposition,
        is_capture_off_transaction,
        commit_position
    from {{ ref('int_soliddb_catalog_events_extracted') }}
    where ddl_operation = 'truncate_table' and transaction_id is not null
),

all_changes as (
    select * from row_changes
    union all
    select * from truncates
),

warned as (
    select
        *,
        concat(
            filter(
                array(
                    if(
                        pairing = 'before_only',
                        'update without after image: no UPDATE of the table follows',
                        null
                    ),
                    if(
                        pairing = 'after_only',
                        'update without before image: no UPDATE_BEFOREIMAGE right before',
                        null
                    )
                ),
                warning -> warning is not null
            ),
            transform(
                array_sort(
                    map_keys(
                        map_filter(
                            coalesce(before_null_reasons, map()), (k, v) -> v = 'not_in_record'
                        )
                    )
                ),
                column_name -> concat(
                    'column ', column_name, ' is not in the before image ',
                    '(logged before the column was added): read as NULL'
                )
            ),
            transform(
                array_sort(
                    map_keys(
                        map_filter(
                            coalesce(after_null_reasons, map()), (k, v) -> v = 'not_in_record'
                        )
                    )
                ),
                column_name -> concat(
                    'column ', column_name, ' is not in the after image ',
                    '(logged before the column was added): read as NULL'
                )
            )
        ) as decode_warnings
    from all_changes
),

sequenced as (
    select
        *,
        row_number() over (
            partition by {{ log_stream('capture') }}, transaction_id
            order by log_position, raw_file, raw_offset
        ) as change_seq
    from warned
)

select * from sequenced

-- Db2 LUW row changes in logmart's change contract (the columns of fct_changes), one row per
-- changed row. How each change's disposition is found:
-- * a compensation record (undo insert/delete/update, 110-112, 131, 166, 168) reverses the
--   normal record of its transaction whose lso_previous is the compensation record's undo-next
--   LSO (ARIES: a CLR's undo-next is the prevLSO of the record it undoes); reversed changes of
--   a committed transaction were rolled back to a savepoint ('savepoint_rollback'), those of
--   an aborted one are 'aborted' like the rest of it. Compensation records are not changes.
-- * the transaction's end (int_db2luw_transactions_resolved): 'committed', 'aborted', or
--   'in_flight' when the capture holds no commit/abort for it (every change of it).
-- * a decomposed update (lriudflags 0x8000) is a delete then an insert: each decomposed delete
--   and the next decomposed insert of the transaction on the same table become one 'update'.
-- * a truncate (DOM 11) is a change of its own: operation 'truncate', no images.
with

images as (
    select * from {{ ref('int_db2luw_row_images_decoded') }}
    where decode_error is null and is_user_row
),

transactions as (
    select * from {{ ref('int_db2luw_transactions_resolved') }}
),

functions as (
    select * from {{ ref('db2luw_function_ids') }}
),

versions as (
    select * from {{ ref('int_db2luw_table_versions') }}
),

records as (
    select
        records.*,
        functions.outcome,
        functions.operation as function_operation
    from {{ ref('stg_db2luw__log_records') }} as records
    inner join functions
        on
            records.component = functions.component
            and records.function_identifier = functions.function_identifier
    where records.is_decoded
),

compensations as (
    select
        capture,
        tid,
        lsn,
        compensation_lso
    from records
    where outcome = 'compensation'
),

reversed_records as (
    select distinct
        images.source_file,
        images.raw_offset
    from images
    inner join compensations
        on
            images.capture = compensations.capture
            and images.tid = compensations.tid
            and images.lso_previous = compensations.compensation_lso
            and images.lsn < compensations.lsn
),

row_changes as (
    select
        images.*,
        images.function_name as source_change_type,
        reversed_records.source_file is not null as is_reversed,
        array(
            named_struct(
                'source_file', images.source_file,
                'raw_offset', images.raw_offset,
                'record_length', images.record_length
            )
        ) as raw_records
    from images
    left join reversed_records
        on
            images.source_file = reversed_records.source_file
            and images.raw_offset = reversed_records.raw_offset
),

decomposed_halves as (
    select
        *,
        lag(kind) over halves as previous_kind,
        lag(table_space_identifier) over halves as previous_table_space_identifier,
        lag(table_identifier) over halves as previous_table_identifier,
        lead(kind) over halves as next_kind,
        lead(table_space_identifier) over halves as next_table_space_identifier,
        lead(table_identifier) over halves as next_table_identifier,
        lead(after_image) over halves as next_after_image,
        lead(decode_warnings) over halves as next_decode_warnings,
        lead(is_reversed) over halves as next_is_reversed,
        lead(raw_records) over halves as next_raw_records
    from row_changes
    where decomposed_update
    window halves as (partition by capture, tid order by lsn, row_in_record)
),

paired_halves as (
    select
        *,
        coalesce(
            kind = 'row_delete'
            and next_kind = 'row_insert'
            and next_table_space_identifier = table_space_identifier
            and next_table_identifier = table_identifier,
            false
        ) as starts_pair,
        coalesce(
            kind = 'row_insert'
            and previous_kind = 'row_delete'
            and previous_table_space_identifier = table_space_identifier
            and previous_table_identifier = table_identifier,
            false
        ) as ends_pair
    from decomposed_halves
),

{%- set change_columns = [
    'source_system', 'capture', 'source_file', 'raw_offset', 'row_in_record', 'is_multiple',
    'tid', 'lsn', 'lsn_hex', 'table_space_identifier', 'table_identifier', 'table_schema',
    'table_name', 'key_columns', 'column_types', 'operation', 'change_kind', 'source_change_type',
    'before_image', 'after_image', 'decode_warnings', 'is_reversed', 'raw_records'
] %}

plain_changes as (
    select
        {{ change_columns | join(',\n        ') }}
    from row_changes
    where not decomposed_update
),

unpaired_halves as (
    select
        {{ change_columns | join(',\n        ') }}
    from paired_halves
    where not starts_pair and not ends_pair
),

decomposed_updates as (
    select
        source_system,
        capture,
        source_file,
        raw_offset,
        row_in_record,
        is_multiple,
        tid,
        lsn,
        lsn_hex,
        table_space_identifier,
        table_identifier,
        table_schema,
        table_name,  -- noqa: RF04
        key_columns,
        column_types,
        'update' as operation,  -- noqa: RF04
        'update' as change_kind,
        'decomposed_update' as source_change_type,
        before_image,
        next_after_image as after_image,
        concat(decode_warnings, next_decode_warnings) as decode_warnings,
        is_reversed or next_is_reversed as is_reversed,
        concat(raw_records, next_raw_records) as raw_records
    from paired_halves
    where starts_pair
),

table_names as (
    select
        capture,
        table_space_identifier,
        table_identifier,
        max(table_schema) as table_schema,
        max(table_name) as table_name,  -- noqa: RF04
        max(key_columns) as key_columns
    from versions
    group by capture, table_space_identifier, table_identifier
),

truncates as (
    select
        records.source_system,
        records.capture,
        records.source_file,
        records.raw_offset,
        1 as row_in_record,
        false as is_multiple,
        records.tid,
        records.lsn,
        records.lsn_hex,
        records.table_space_identifier,
        records.table_identifier,
        table_names.table_schema,
        coalesce(
            table_names.table_name,
            concat(
                'TBSPACEID=', records.table_space_identifier,
                ',TABLEID=', records.table_identifier
            )
        ) as table_name,  -- noqa: RF04
        coalesce(table_names.key_columns, array()) as key_columns,
        null as column_types,  -- a map<string, string> in the union
        'truncate' as operation,  -- noqa: RF04
        'truncate' as change_kind,
        records.function_name as source_change_type,
        null as before_image,  -- a map<string, string> in the union
        null as after_image,
        cast(array() as array<string>) as decode_warnings,
        false as is_reversed,
        array(
            named_struct(
                'source_file', records.source_file,
                'raw_offset', records.raw_offset,
                'record_length', records.record_length
            )
        ) as raw_records
    from records
    left join table_names
        on
            records.capture = table_names.capture
            and records.table_space_identifier = table_names.table_space_identifier
            and records.table_identifier = table_names.table_identifier
    where records.function_operation = 'truncate' and not records.catalog_table
),

changes as (
    select * from plain_changes
    union all
    select * from unpaired_halves
    union all
    select * from decomposed_updates
    union all
    select * from truncates
),

standardized as (
    select
        -- identity and provenance
        changes.source_system,
        changes.capture,
        changes.source_file as raw_file,
        changes.raw_offset,
        changes.raw_records,
        -- what changed
        changes.table_schema,
        changes.table_name,  -- noqa: RF04
        changes.operation,  -- noqa: RF04
        changes.change_kind,
        changes.source_change_type,
        changes.before_image,
        changes.after_image,
        changes.key_columns,
        changes.column_types,
        changes.decode_warnings,
        -- transaction (TID) and order: committed transactions by commit_position (LFS, LSN
        -- of the commit record); inside one, by LSN (then the row of an insert multiple)
        changes.tid as transaction_id,
        transactions.commit_position,
        transactions.commit_ts,
        -- who
        transactions.authid,
        -- Db2 LUW specifics
        changes.lsn,
        changes.table_space_identifier,
        changes.table_identifier,
        changes.is_reversed,
        changes.row_in_record,
        -- not in Db2 LUW log records (only the commit record has a time)
        cast(null as timestamp) as change_ts,
        cast(null as timestamp) as begin_ts,
        cast(null as string) as plan_name,
        cast(null as string) as correlation_id,
        cast(null as string) as connection_id,
        cast(null as string) as connection_type,
        concat(
            'db2luw:', changes.source_file, ':', changes.raw_offset,
            case when changes.is_multiple then concat(':', changes.row_in_record) else '' end
        ) as change_id,
        case
            when coalesce(transactions.transaction_disposition, 'in_flight') = 'in_flight'
                then 'in_flight'
            when changes.is_reversed and transactions.transaction_disposition = 'committed'
                then 'savepoint_rollback'
            else transactions.transaction_disposition
        end as disposition,
        coalesce(transactions.transaction_disposition, 'in_flight') as transaction_disposition,
        concat(changes.lsn_hex, '.', lpad(cast(changes.row_in_record as string), 5, '0'))
            as log_position
    from changes
    left join transactions
        on
            changes.capture = transactions.capture
            and changes.tid = transactions.tid
),

sequenced as (
    select
        *,
        row_number() over (
            partition by source_system, capture, transaction_id
            order by log_position, raw_file, raw_offset
        ) as change_seq
    from standardized
)

select * from sequenced

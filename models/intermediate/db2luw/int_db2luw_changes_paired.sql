-- One row per Db2 LUW row change as the log records it, before any disposition: the row images
-- of user rows that decoded (int_db2luw_row_images_decoded), with the two records of one
-- change paired into one row, and truncates.
-- * a decomposed update (lriudflags 0x8000) is a delete then an insert: each decomposed delete
--   and the next decomposed insert of the transaction on the same table become one 'update'.
-- * an update record whose new half has record type bit 0x02 logs its after image in the
--   preceding insert record of the transaction, whose image has record type bit 0x04 (002_…,
--   "Update record log record"): the two become one 'update' (before image from the update
--   record, after image from the insert), placed at the update record. Without that insert
--   the update is an 'update_before_only' change.
-- * a truncate (DOM 11) is a change of its own: operation 'truncate', no images.
-- raw_records lists every record of a change: int_db2luw_changes_compensated matches the
-- compensation records to them. A TID is one transaction over every capture of its log stream
-- (macro log_stream): decomposed halves and image carriers are matched over them.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

images as (
    select * from {{ ref('int_db2luw_row_images_decoded') }}
    where decode_error is null and is_user_row
),

truncate_functions as (
    select * from {{ ref('db2luw_function_ids') }}
    where operation = 'truncate'
),

versions as (
    select * from {{ ref('int_db2luw_table_versions') }}
),

truncate_records as (
    select records.*
    from {{ ref('stg_db2luw__log_records') }} as records
    inner join truncate_functions
        on
            records.component = truncate_functions.component
            and records.function_identifier = truncate_functions.function_identifier
    where records.is_decoded and not records.catalog_table
),

row_changes as (
    select
        images.* except (change_kind),
        -- an update whose after image is elsewhere keeps only its before image unless it is
        -- paired with the insert that carries its after image (image_elsewhere_updates)
        case
            when images.after_record_kind = 'image_elsewhere' then 'update_before_only'
            else images.change_kind
        end as change_kind,
        images.function_name as source_change_type,
        -- a change Db2 made itself (lrIUDflags, 002_… Table 19: 0x1000 a referential integrity
        -- operation, 0x2000 a trigger): the target's own constraints and triggers make it
        -- again, so a REDO or UNDO leaves it out (fct_changes.generated_by)
        case
            when images.lriudflags & 12288 = 12288 then 'ri_constraint_and_trigger'
            when images.lriudflags & 4096 = 4096 then 'ri_constraint'
            when images.lriudflags & 8192 = 8192 then 'trigger'
        end as generated_by,
        array(
            named_struct(
                'source_file', images.source_file,
                'raw_offset', images.raw_offset,
                'record_length', images.record_length
            )
        ) as raw_records
    from images
),

preceding_inserts as (
    -- each row change with the insert record of its transaction that comes before it
    select
        *,
        last_value(
            case
                when kind = 'row_insert'
                    then named_struct('source_file', source_file, 'raw_offset', raw_offset)
            end,
            true
        ) over (
            partition by {{ log_stream('capture') }}, tid
            order by lsn, row_in_record
            rows between unbounded preceding and 1 preceding
        ) as preceding_insert
    from row_changes
),

image_pairs as (
    -- an update whose after image is elsewhere and the preceding insert that carries it (same
    -- table, record type bit 0x04, one row); an insert carries one update's image: the first's
    select
        updated_rows.source_file,
        updated_rows.raw_offset,
        carriers.source_file as carrier_file,
        carriers.raw_offset as carrier_offset,
        row_number() over (
            partition by carriers.source_file, carriers.raw_offset
            order by updated_rows.lsn
        ) as claim
    from preceding_inserts as updated_rows
    inner join row_changes as carriers
        on
            updated_rows.preceding_insert.source_file = carriers.source_file
            and updated_rows.preceding_insert.raw_offset = carriers.raw_offset
            and updated_rows.table_space_identifier = carriers.table_space_identifier
            and updated_rows.table_identifier = carriers.table_identifier
    where
        updated_rows.kind = 'row_update'
        and updated_rows.after_record_kind = 'image_elsewhere'
        and not carriers.is_multiple
        and not carriers.decomposed_update
        and carriers.after_record_kind = 'user_row'
        and carriers.after_record_type & 4 = 4
),

paired_records as (
    -- both records of each pair, from one read of the pairs
    select
        paired.source_file,
        paired.raw_offset
    from image_pairs
        lateral view inline(
            array(
                named_struct(
                    'source_file', image_pairs.source_file,
                    'raw_offset', image_pairs.raw_offset
                ),
                named_struct(
                    'source_file', image_pairs.carrier_file,
                    'raw_offset', image_pairs.carrier_offset
                )
            )
        ) paired as source_file, raw_offset
    where image_pairs.claim = 1
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
        lead(raw_records) over halves as next_raw_records,
        lead(after_unavailable) over halves as next_after_unavailable
    from row_changes
    where decomposed_update
    window halves as (
        partition by {{ log_stream('capture') }}, tid order by lsn, row_in_record
    )
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
    'before_image', 'after_image', 'decode_warnings', 'raw_records',
    'before_unavailable', 'after_unavailable', 'generated_by'
] %}

plain_changes as (
    select
        {{ change_columns | join(',\n        ') }}
    from row_changes
    left anti join paired_records
        on
            row_changes.source_file = paired_records.source_file
            and row_changes.raw_offset = paired_records.raw_offset
    where not row_changes.decomposed_update
),

image_elsewhere_updates as (
    select
        updated_rows.source_system,
        updated_rows.capture,
        updated_rows.source_file,
        updated_rows.raw_offset,
        updated_rows.row_in_record,
        updated_rows.is_multiple,
        updated_rows.tid,
        updated_rows.lsn,
        updated_rows.lsn_hex,
        updated_rows.table_space_identifier,
        updated_rows.table_identifier,
        updated_rows.table_schema,
        updated_rows.table_name,  -- noqa: RF04
        updated_rows.key_columns,
        updated_rows.column_types,
        'update' as operation,  -- noqa: RF04
        'update' as change_kind,
        'update_record_image_elsewhere' as source_change_type,
        updated_rows.before_image,
        carriers.after_image,
        concat(
            filter(updated_rows.decode_warnings, w -> not startswith(w, 'after image: elsewhere')),
            carriers.decode_warnings
        ) as decode_warnings,
        concat(carriers.raw_records, updated_rows.raw_records) as raw_records,
        updated_rows.before_unavailable,
        carriers.after_unavailable,
        updated_rows.generated_by
    from image_pairs
    inner join row_changes as updated_rows
        on
            image_pairs.source_file = updated_rows.source_file
            and image_pairs.raw_offset = updated_rows.raw_offset
    inner join row_changes as carriers
        on
            image_pairs.carrier_file = carriers.source_file
            and image_pairs.carrier_offset = carriers.raw_offset
    where image_pairs.claim = 1
),

decomposed_changes as (
    -- one pass over the decomposed halves: a delete and the insert that follows it are one
    -- update, placed at the delete; a half without its partner stays a change of its own
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
        if(starts_pair, 'update', operation) as operation,  -- noqa: RF04
        if(starts_pair, 'update', change_kind) as change_kind,
        if(starts_pair, 'decomposed_update', source_change_type) as source_change_type,
        before_image,
        if(starts_pair, next_after_image, after_image) as after_image,
        if(
            starts_pair, concat(decode_warnings, next_decode_warnings), decode_warnings
        ) as decode_warnings,
        if(starts_pair, concat(raw_records, next_raw_records), raw_records) as raw_records,
        before_unavailable,
        if(starts_pair, next_after_unavailable, after_unavailable) as after_unavailable,
        generated_by
    from paired_halves
    where not ends_pair
),

truncates as (
    select
        truncate_records.source_system,
        truncate_records.capture,
        truncate_records.source_file,
        truncate_records.raw_offset,
        1 as row_in_record,
        false as is_multiple,
        truncate_records.tid,
        truncate_records.lsn,
        truncate_records.lsn_hex,
        truncate_records.table_space_identifier,
        truncate_records.table_identifier,
        table_names.table_schema,
        coalesce(
            table_names.table_name,
            concat(
                'TBSPACEID=', truncate_records.table_space_identifier,
                ',TABLEID=', truncate_records.table_identifier
            )
        ) as table_name,  -- noqa: RF04
        coalesce(table_names.key_columns, array()) as key_columns,
        null as column_types,  -- a map<string, string> in the union
        'truncate' as operation,  -- noqa: RF04
        'truncate' as change_kind,
        truncate_records.function_name as source_change_type,
        null as before_image,  -- a map<string, string> in the union
        null as after_image,
        cast(array() as array<string>) as decode_warnings,
        array(
            named_struct(
                'source_file', truncate_records.source_file,
                'raw_offset', truncate_records.raw_offset,
                'record_length', truncate_records.record_length
            )
        ) as raw_records,
        null as before_unavailable,  -- a map<string, string> in the union
        null as after_unavailable,
        cast(null as string) as generated_by  -- a truncate is a statement's
    from truncate_records
    left join versions as table_names  -- the table that had the ids at the truncate's LSN
        on
            truncate_records.capture = table_names.capture
            and truncate_records.table_space_identifier = table_names.table_space_identifier
            and truncate_records.table_identifier = table_names.table_identifier
            and truncate_records.lsn >= table_names.valid_from_lsn
            and (
                table_names.valid_to_lsn is null or truncate_records.lsn < table_names.valid_to_lsn
            )
),

changes as (
    select * from plain_changes
    union all
    select * from decomposed_changes
    union all
    select * from image_elsewhere_updates
    union all
    select * from truncates
)

select * from changes

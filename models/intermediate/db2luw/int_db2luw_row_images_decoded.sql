-- One row per row image carried by a Db2 LUW row record (insert, delete, update, their MDC
-- forms, and each record of an insert multiple records), decoded by the registered UDF
-- logmart_db2luw_row with the table's layout version in force at the record's LSN and zipped
-- with that version's column names. Records on catalog tables (table space 0) are not user
-- rows and are not decoded here. decode_error says why a record could not be decoded; it is
-- set on every row of the record, so a record is decoded whole or quarantined whole.
-- Incremental by capture (macros/incremental.sql): a build decodes only new or changed
-- captures; layouts come from each capture's own catalog export and log records.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('db2luw', decode_settings('db2luw')) }}"
) }}
with

captures as (
    {{ captures_to_build('db2luw', decode_settings('db2luw')) }}
),

records as (
    select * from {{ ref('stg_db2luw__log_records') }}
    where
        is_decoded
        and not catalog_table
        and {{ captures_to_build_filter('db2luw', decode_settings('db2luw')) }}
),

functions as (
    select * from {{ ref('db2luw_function_ids') }}
    where outcome = 'row_change'
),

versions as (
    select * from {{ ref('int_db2luw_table_versions') }}
    where {{ captures_to_build_filter('db2luw', decode_settings('db2luw')) }}
),

row_records as (
    select
        records.*,
        functions.operation,
        functions.change_kind,
        captures.capture_fingerprint
    from records
    inner join captures
        on records.capture = captures.capture
    inner join functions
        on
            records.component = functions.component
            and records.function_identifier = functions.function_identifier
),

contained_rows as (
    -- insert multiple records: one row per contained record (images[n], rids[n])
    select
        row_records.*,
        contained.images as contained_image,
        contained.rids as contained_rid,
        coalesce(exploded.position, 0) + 1 as row_in_record,
        row_records.images is not null as is_multiple
    from row_records
        lateral view outer posexplode(
            arrays_zip(row_records.images, row_records.rids)
        ) exploded as position, contained
),

versioned as (
    select
        contained_rows.*,
        versions.table_schema,
        versions.table_name,
        versions.key_columns,
        versions.column_names,
        versions.column_types as column_type_list,
        versions.layout_json,
        versions.version_number,
        versions.layout_error
    from contained_rows
    left join versions
        on
            contained_rows.capture = versions.capture
            and contained_rows.table_space_identifier = versions.table_space_identifier
            and contained_rows.table_identifier = versions.table_identifier
            and contained_rows.lsn >= versions.valid_from_lsn
            and (versions.valid_to_lsn is null or contained_rows.lsn < versions.valid_to_lsn)
),

with_digest as (
    select
        *,
        sha2(concat_ws(char(0), layout_json, byteorder), 256) as layout_digest
    from versioned
),

decoded as (
    -- images the data source decoded with this very layout and byte order (the digests
    -- match: udfs/db2luw/batch_rows.py) ...
    select
        * except (inline_before_row, inline_after_row),
        inline_before_row as before_row,
        inline_after_row as after_row
    from with_digest
    where inline_image_digest = layout_digest and contained_image is null
    union all
    -- ... else the UDF: other layout versions (before an ALTER), insert multiple records,
    -- tables the catalog export does not have
    select
        * except (inline_before_row, inline_after_row),
        logmart_db2luw_row(before_image, layout_json, byteorder) as before_row,
        logmart_db2luw_row(
            coalesce(contained_image, after_image), layout_json, byteorder
        ) as after_row
    from with_digest
    where
        inline_image_digest is null
        or layout_digest is null
        or inline_image_digest != layout_digest
        or contained_image is not null
),

checked as (
    select
        decoded.*,
        case
            when decoded.layout_json is null and decoded.layout_error is not null
                then concat(
                    decoded.layout_error,
                    ' (', coalesce(decoded.table_schema || '.', ''), decoded.table_name, ')'
                )
            when decoded.layout_json is null
                then concat(
                    'no table layout for TBSPACEID=', decoded.table_space_identifier,
                    ',TABLEID=', decoded.table_identifier, ' at LSN ', decoded.lsn_hex,
                    ': the catalog export has no such table and no initialize-table record',
                    ' comes before this one; export the catalog as docs/db2luw.md shows'
                )
            else coalesce(decoded.before_row.error, decoded.after_row.error)
        end as image_error
    from decoded
),

zipped as (
    select
        -- provenance
        checked.source_system,
        checked.capture,
        checked.source_file,
        checked.raw_offset,
        checked.record_length,
        checked.row_in_record,
        checked.is_multiple,
        -- record
        checked.tid,
        checked.lsn,
        checked.lsn_hex,
        checked.lso_previous,
        checked.singular_transaction,
        checked.component,
        checked.function_identifier,
        checked.function_name,
        checked.kind,
        checked.operation,
        checked.change_kind,
        coalesce(checked.decomposed_update, false) as decomposed_update,
        checked.lriudflags,
        checked.table_space_identifier,
        checked.table_identifier,
        -- table version
        checked.table_schema,
        checked.table_name,  -- noqa: RF04
        checked.key_columns,
        checked.column_names,
        checked.version_number,
        map_from_arrays(checked.column_names, checked.column_type_list) as column_types,
        -- images
        coalesce(checked.contained_rid, checked.rid) as rid,
        case
            when checked.before_row.values is not null
                then map_from_arrays(checked.column_names, checked.before_row.values)
        end as before_image,
        case
            when checked.after_row.values is not null
                then map_from_arrays(checked.column_names, checked.after_row.values)
        end as after_image,
        coalesce(checked.before_row.is_user_row, checked.after_row.is_user_row) as is_user_row,
        coalesce(checked.before_row.record_kind, checked.after_row.record_kind) as record_kind,
        checked.after_row.record_kind as after_record_kind,
        checked.after_row.record_type as after_record_type,
        concat(
            -- an update record's new half with the 0x02 bit: the after image is elsewhere
            case
                when checked.after_row.record_kind = 'image_elsewhere'
                    then array(
                        'after image: elsewhere (the new half has record type 0x02: the image'
                        || ' is in the preceding insert record of the transaction)'
                    )
                else cast(array() as array<string>)
            end,
            {%- for image in ['before', 'after'] %}
                coalesce(
                    filter(
                        zip_with(
                            checked.column_names,
                            checked.{{ image }}_row.null_reasons,
                            (name, reason) -> case
                                when reason is not null and reason != 'null'
                                    then concat('{{ image }} ', name, ': ', reason)
                            end
                        ),
                        warning -> warning is not null
                    ),
                    array()
                ){% if not loop.last %},{% endif %}
            {%- endfor %}
        ) as decode_warnings,
        max(checked.image_error) over (
            partition by checked.source_file, checked.raw_offset
        ) as decode_error,
        -- values the log does not carry (udfs/unavailable.py): column -> reason; the column
        -- stays in its image as null, a null not named here is a logged NULL
        {%- for image in ['before', 'after'] %}
            case
                when checked.{{ image }}_row.values is not null
                    then map_filter(
                        map_from_arrays(
                            checked.column_names,
                            coalesce(
                                checked.{{ image }}_row.unavailable,
                                array_repeat(cast(null as string), size(checked.column_names))
                            )
                        ),
                        (column_name, reason) -> reason is not null
                    )
            end as {{ image }}_unavailable,
        {%- endfor %}
        checked.capture_fingerprint
    from checked
)

select * from zipped

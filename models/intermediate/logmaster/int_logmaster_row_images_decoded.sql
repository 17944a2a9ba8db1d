-- Every reassembled row change with its table version and its row images decoded by the
-- registered UDF logmart_logmaster_row_images (values in column order, zipped here with the
-- column names). decode_error says why a change could not be decoded.
-- Incremental by capture (macros/incremental.sql): a build decodes only new or changed
-- extracts; the table layouts come from each extract's own control file.
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('db2zos', decode_settings('logmaster')) }}"
) }}
with

captures as (
    {{ captures_to_build('db2zos', decode_settings('logmaster')) }}
),

changes as (
    select
        changes.* except (capture_fingerprint),
        captures.capture_fingerprint
    from {{ ref('int_logmaster_changes_reassembled') }} as changes
    inner join {{ ref('logmaster_change_types') }} as change_types
        on changes.change_type = change_types.change_type
    inner join captures
        on changes.capture = captures.capture
    where
        changes.reassembly_error is null
        and change_types.is_row_change
        and {{
            captures_to_build_filter('db2zos', decode_settings('logmaster'), 'changes.capture')
        }}
),

layouts as (
    select * from {{ ref('int_logmaster_table_layouts') }}
    where {{ captures_to_build_filter('db2zos', decode_settings('logmaster')) }}
),

versions as (
    -- The table version in force at the change. DTBI CREATERBA/DROPRBA hold an RBA or an LRSN
    -- (the spec says "RBA/LRSN"): a version applies when it was created at or before the
    -- change's LOGRBA or its LOGLRSN, and not dropped before both; all zeros = not recorded.
    -- The latest such version (SEQUENCENUMBER) wins; a table with one version always uses it.
    select
        changes.*,
        layouts.table_schema,
        layouts.table_name,
        layouts.column_names,
        layouts.column_types as column_type_list,
        layouts.key_columns,
        layouts.layout_text,
        layouts.image_digest as layout_digest,
        row_number() over (
            partition by changes.raw_file, changes.raw_offset
            order by layouts.sequencenumber desc
        ) as version_rank
    from changes
    left join layouts
        on
            changes.capture = layouts.capture
            and changes.dbid = layouts.dbid
            and changes.tbobid = layouts.tbobid
            and (
                layouts.version_count = 1
                or (
                    (
                        {{ is_zero_position('layouts.createrba') }}
                        or changes.logrba >= layouts.createrba
                        or changes.loglrsn >= layouts.createrba
                    )
                    and (
                        {{ is_zero_position('layouts.droprba') }}
                        or (
                            changes.logrba < layouts.droprba
                            and changes.loglrsn < layouts.droprba
                        )
                    )
                )
            )
),

decoded as (
    -- images the data source decoded with this very layout (the digests match) ...
    select
        *,
        named_struct(
            'before_values', inline_before_values,
            'after_values', inline_after_values,
            'warnings', inline_image_warnings,
            'error', inline_image_error
        ) as images,
        'data_source' as images_decoded_by
    from versions
    where version_rank = 1 and image_digest = layout_digest
    union all
    -- ... else the UDF: reassembled records, other layouts, tables without one
    select
        *,
        logmart_logmaster_row_images(data, change_type, layout_text) as images,
        'udf' as images_decoded_by
    from versions
    where version_rank = 1 and (image_digest is null or image_digest != layout_digest)
),

zipped as (
    select
        * except (
            images, version_rank, column_type_list, image_digest, layout_digest,
            inline_before_values, inline_after_values, inline_image_warnings, inline_image_error
        ),
        map_from_arrays(column_names, column_type_list) as column_types,
        case
            when images.before_values is not null
                then map_from_arrays(column_names, images.before_values)
        end as before_image,
        case
            when images.after_values is not null
                then map_from_arrays(column_names, images.after_values)
        end as after_image,
        images.warnings as decode_warnings,
        images.error as decode_error
    from decoded
)

select * from zipped

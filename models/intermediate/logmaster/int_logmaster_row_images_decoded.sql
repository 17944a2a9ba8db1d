-- Every reassembled row change with its table version and its row images decoded by the
-- registered UDF logmart_logmaster_row_images (values in column order, zipped here with the
-- column names). decode_error says why a change could not be decoded. before_unavailable /
-- after_unavailable name the columns whose value the log does not carry (udfs/unavailable.py:
-- LOBs of an extract without them); the data source never decodes such a table's changes
-- (udfs/logmaster/batch_rows.py), so its images have none.
-- Ephemeral (a CTE of the models that read it; a view could not call the session's UDF): the
-- UR settlement (int_logmaster_changes_standardized, incremental by capture) decodes the
-- captures it builds with it and writes the images once; int_logmaster_row_images_failed
-- keeps, by capture, those that did not decode, for the quarantine. As a table it was a
-- write and a read of every change with its images (docs/performance.md, "2026-11-29, late
-- morning"). The table layouts come from each extract's own control file.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(materialized='ephemeral') }}
with

captures as (
    -- each extract with its fingerprint: the settlement's partitions (macros/incremental.sql)
    select
        capture,
        {{ capture_fingerprint_expression(decode_settings('logmaster')) }} as capture_fingerprint
    from {{ ref('stg_logmart__captures') }}
    where source_system = 'db2zos'
),

changes as (
    select
        changes.*,
        captures.capture_fingerprint
    from {{ ref('int_logmaster_changes_reassembled') }} as changes
    inner join {{ ref('logmaster_change_types') }} as change_types
        on changes.change_type = change_types.change_type
    inner join captures
        on changes.capture = captures.capture
    where
        changes.reassembly_error is null
        and change_types.is_row_change
),

layouts as (
    select * from {{ ref('int_logmaster_table_layouts') }}
),

table_versions as (
    -- each table's versions as one array, newest (highest SEQUENCENUMBER) first: a change
    -- picks its version from the array of its table (a broadcast join and an expression, no
    -- window over the changes)
    select
        capture,
        dbid,
        tbobid,
        sort_array(
            collect_list(
                named_struct(
                    'sequencenumber', sequencenumber,
                    'createrba', createrba,
                    'droprba', droprba,
                    'table_schema', table_schema,
                    'table_name', table_name,
                    'column_names', column_names,
                    'column_type_list', column_types,
                    'key_columns', key_columns,
                    'layout_text', layout_text,
                    'layout_digest', image_digest
                )
            ),
            false
        ) as versions
    from layouts
    group by capture, dbid, tbobid
),

versions as (
    -- The table version in force at the change. DTBI CREATERBA/DROPRBA hold an RBA or an LRSN
    -- (the spec says "RBA/LRSN"): a version applies when it was created at or before the
    -- change's LOGRBA or its LOGLRSN, and not dropped before both; all zeros = not recorded.
    -- The latest such version (SEQUENCENUMBER) wins; a table with one version always uses it.
    select
        changes.*,
        -- a table with one version (most) takes it without the lambda below, which Spark
        -- runs interpreted for every change (0.7-0.9 s of the model at 1M records)
        if(
            size(table_versions.versions) = 1,
            table_versions.versions[0],
            try_element_at(
                filter(
                    table_versions.versions,
                    v -> (
                        {{ is_zero_position('v.createrba') }}
                        or changes.logrba >= v.createrba
                        or changes.loglrsn >= v.createrba
                    )
                    and (
                        {{ is_zero_position('v.droprba') }}
                        or (changes.logrba < v.droprba and changes.loglrsn < v.droprba)
                    )
                ),
                1
            )
        ) as version
    from changes
    left join table_versions
        on
            changes.capture = table_versions.capture
            and changes.dbid = table_versions.dbid
            and changes.tbobid = table_versions.tbobid
),

versioned as (
    select
        * except (version),
        version.table_schema,
        version.table_name,
        version.column_names,
        version.column_type_list,
        version.key_columns,
        version.layout_text,
        version.layout_digest
    from versions
),

decoded as (
    -- images the data source decoded with this very layout (the digests match) ...
    select
        *,
        named_struct(
            'before_values', inline_before_values,
            'after_values', inline_after_values,
            'warnings', inline_image_warnings,
            'error', inline_image_error,
            'before_unavailable', cast(null as array<string>),
            'after_unavailable', cast(null as array<string>)
        ) as images,
        'data_source' as images_decoded_by
    from versioned
    where image_digest = layout_digest
    union all
    -- ... else the UDF: reassembled records, other layouts, tables without one. The exact
    -- complement of the filter above: a change with a digest but no version in force here
    -- (layout_digest null) goes to the UDF, which says so, rather than nowhere.
    select
        *,
        logmart_logmaster_row_images(data, change_type, layout_text) as images,
        'udf' as images_decoded_by
    from versioned
    where not coalesce(image_digest = layout_digest, false)
),

zipped as (
    select
        * except (
            images, column_type_list, image_digest, layout_digest,
            inline_before_values, inline_after_values, inline_image_warnings, inline_image_error
        ),
        map_from_arrays(column_names, column_type_list) as column_types,
        -- a partition-level DM's limit keys (low as before, high as after) hold the leading
        -- key columns in KEYSEQ order, as many as the record has (logmaster/rows.py limit_keys)
        case
            when images.before_values is null then null
            when change_type = 'DM'
                then map_from_arrays(
                    slice(key_columns, 1, size(images.before_values)), images.before_values
                )
            else map_from_arrays(column_names, images.before_values)
        end as before_image,
        case
            when images.after_values is null then null
            when change_type = 'DM'
                then map_from_arrays(
                    slice(key_columns, 1, size(images.after_values)), images.after_values
                )
            else map_from_arrays(column_names, images.after_values)
        end as after_image,
        images.warnings as decode_warnings,
        images.error as decode_error,
        {%- for image in ['before', 'after'] %}
            case
                when images.{{ image }}_values is not null
                    then map_filter(
                        map_from_arrays(
                            column_names,
                            coalesce(
                                images.{{ image }}_unavailable,
                                array_repeat(cast(null as string), size(column_names))
                            )
                        ),
                        (column_name, reason) -> reason is not null
                    )
            end as {{ image }}_unavailable{% if not loop.last %},{% endif %}
        {%- endfor %}
    from decoded
)

select * from zipped

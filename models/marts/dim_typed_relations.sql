-- One row per typed relation pair (docs/typed-tables.md): each table of each log stream (every
-- capture of it) as `changes.<relation_name>` (typed change feed) and
-- `current.<relation_name>` (typed live rows), views that logmart's build creates after dbt
-- from this table (udfs/typed.py, sync_views). Columns: the union over the table's layout
-- versions (oldest first: by capture folder, then version number) typed by the latest
-- version, by the SQL function logmart_typed_columns (the rules of udfs/typed.py). A table no
-- layout describes takes its columns from its changes' images and column_types.
with

versions as (
    select
        source_system,
        split(capture, '/')[0] as log_stream,
        table_schema,
        table_name,
        capture,
        version_number,
        transform(
            columns,
            c -> named_struct('column_name', c.column_name, 'column_type', c.column_type)
        ) as layout,
        key_columns
    from {{ ref('dim_table_versions') }}
),

source_tables as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        transform(
            array_sort(collect_list(struct(capture, version_number, layout))), v -> v.layout
        ) as layouts,
        try_element_at(
            array_sort(
                collect_list(
                    if(size(layout) > 0, struct(capture, version_number, key_columns), null)
                )
            ),
            -1
        ).key_columns as key_columns  -- the latest layout's (collect_list skips nulls)
    from versions
    group by source_system, log_stream, table_schema, table_name
),

undescribed_tables as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name
    from source_tables
    -- an 'unknown' version's layout is null: size(null) is -1 (null under ANSI), never 0
    where forall(layouts, l -> l is null or size(l) = 0)
),

undescribed_images as (
    select
        changes.source_system,
        changes.log_stream,
        changes.table_schema,
        changes.table_name,
        changes.column_types,
        changes.commit_position,
        changes.change_seq,
        explode(
            map_keys(coalesce(changes.after_image, changes.before_image))
        ) as column_name  -- noqa: RF04
    from {{ ref('fct_changes') }} as changes
    inner join undescribed_tables
        on
            changes.source_system = undescribed_tables.source_system
            and changes.log_stream = undescribed_tables.log_stream
            and changes.table_schema <=> undescribed_tables.table_schema
            and changes.table_name = undescribed_tables.table_name
    where changes.disposition = 'committed'
),

undescribed_image_columns as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        column_name,
        max_by(column_types[column_name], commit_position) as column_type,
        min(struct(commit_position, change_seq)) as first_seen
    from undescribed_images
    group by source_system, log_stream, table_schema, table_name, column_name
),

undescribed_layouts as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        transform(
            array_sort(collect_list(struct(first_seen, column_name, column_type))),
            c -> named_struct('column_name', c.column_name, 'column_type', c.column_type)
        ) as layout
    from undescribed_image_columns
    group by source_system, log_stream, table_schema, table_name
),

laid_out as (
    select
        source_tables.source_system,
        source_tables.log_stream,
        source_tables.table_schema,
        source_tables.table_name,
        if(
            undescribed_layouts.layout is null,
            source_tables.layouts,
            concat(source_tables.layouts, array(undescribed_layouts.layout))
        ) as layouts,
        coalesce(source_tables.key_columns, cast(array() as array<string>)) as key_columns,
        regexp_replace(
            lower(concat_ws(
                '__',
                source_tables.source_system,
                source_tables.log_stream,
                coalesce(source_tables.table_schema, ''),
                source_tables.table_name
            )),
            '[^a-z0-9_]',
            '_'
        ) as base_name
    from source_tables
    left join undescribed_layouts
        on
            source_tables.source_system = undescribed_layouts.source_system
            and source_tables.log_stream = undescribed_layouts.log_stream
            and source_tables.table_schema <=> undescribed_layouts.table_schema
            and source_tables.table_name = undescribed_layouts.table_name
)

select
    source_system,
    log_stream,
    table_schema,
    table_name,
    if(
        count(*) over (partition by base_name) = 1,
        base_name,
        concat(
            base_name,
            '__',
            left(
                sha1(concat_ws(
                    '/', source_system, log_stream, coalesce(table_schema, ''), table_name
                )),
                8
            )
        )
    ) as relation_name,
    key_columns,
    logmart_typed_columns(layouts) as columns  -- noqa: RF04
from laid_out

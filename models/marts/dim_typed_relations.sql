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

tables as (
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

undescribed_image_columns as (
    select
        changes.source_system,
        changes.log_stream,
        changes.table_schema,
        changes.table_name,
        image.column_name,
        max_by(changes.column_types[image.column_name], changes.commit_position) as column_type,
        min(struct(changes.commit_position, changes.change_seq)) as first_seen
    from {{ ref('fct_changes') }} as changes
    left semi join tables
        on
            changes.source_system = tables.source_system
            and changes.log_stream = tables.log_stream
            and changes.table_schema <=> tables.table_schema
            and changes.table_name = tables.table_name
            and forall(tables.layouts, l -> size(l) = 0)
        lateral view explode(
            map_keys(coalesce(changes.after_image, changes.before_image))
        ) image as column_name
    where changes.disposition = 'committed'
    group by
        changes.source_system,
        changes.log_stream,
        changes.table_schema,
        changes.table_name,
        image.column_name
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
        tables.source_system,
        tables.log_stream,
        tables.table_schema,
        tables.table_name,
        if(
            undescribed_layouts.layout is null,
            tables.layouts,
            concat(tables.layouts, array(undescribed_layouts.layout))
        ) as layouts,
        coalesce(tables.key_columns, cast(array() as array<string>)) as key_columns,
        regexp_replace(
            lower(concat_ws(
                '__',
                tables.source_system,
                tables.log_stream,
                coalesce(tables.table_schema, ''),
                tables.table_name
            )),
            '[^a-z0-9_]',
            '_'
        ) as base_name
    from tables
    left join undescribed_layouts
        on
            tables.source_system = undescribed_layouts.source_system
            and tables.log_stream = undescribed_layouts.log_stream
            and tables.table_schema <=> undescribed_layouts.table_schema
            and tables.table_name = undescribed_layouts.table_name
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

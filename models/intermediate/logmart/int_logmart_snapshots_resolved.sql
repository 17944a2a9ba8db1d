-- Each base snapshot (docs/snapshots.md) placed in its log stream: the commit position it was
-- taken at (given, or the last commit at or before its time), the table's layout there (its
-- columns, key and types, as the table's changes carry them), and whether it is the base of
-- its table's row history ('base'), an older snapshot of a table with a newer one
-- ('superseded') or cannot be used ('rejected', with the problem: the loader's, or an unknown
-- table, a column not in the table, a key column the unload lacks).
with

snapshots as (
    select * from {{ ref('stg_logmart__snapshots') }}
    {#- most builds have no snapshot: then nothing below reads the changes or transactions
        (4.5 s of a 1M build, on the way to fct_row_history) #}
    {%- if relation_is_empty(ref('stg_logmart__snapshots')) %}
        where false
    {%- endif %}
),

commits as (
    select
        source_system,
        log_stream,
        commit_position,
        commit_ts
    from {{ ref('fct_transactions') }}
    where disposition = 'committed' and commit_position is not null
),

layouts as (
    select
        source_system,
        split(capture, '/')[0] as log_stream,
        table_schema,
        table_name,
        valid_from_position,
        valid_to_position,
        layout_source,
        transform(columns, c -> c.column_name) as column_names,
        map_from_entries(
            transform(
                filter(columns, c -> c.column_type is not null),
                c -> struct(c.column_name, c.column_type)
            )
        ) as layout_types,
        key_columns
    from {{ ref('dim_table_versions') }}
),

table_changes as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        commit_position,
        key_columns,
        column_types,
        struct(commit_position, transaction_id, change_seq) as change_order
    from {{ ref('fct_changes') }}
    where disposition = 'committed'
),

stream_commits as (
    -- per snapshot, the commits of its stream it is placed among: all of them for a given
    -- position, those at or before its time for a time
    select
        snapshots.source_file,
        max(commits.commit_position) as last_position,
        max_by(commits.commit_ts, commits.commit_position) as last_ts,
        max(commits.commit_ts) filter (
            where commits.commit_position = snapshots.given_position
        ) as given_ts,
        min(length(commits.commit_position)) as position_length,
        max(length(commits.commit_position)) as position_length_max,
        min(commits.commit_position) as first_position
    from snapshots
    inner join commits
        on
            snapshots.source_system = commits.source_system
            and snapshots.log_stream = commits.log_stream
            and coalesce(
                snapshots.taken_at >= commits.commit_ts, snapshots.given_position is not null
            )
    group by snapshots.source_file
),

positioned as (
    -- a time becomes the position of the stream's last commit at or before it (none: the
    -- snapshot was taken before the log's first commit, its rows are there from the start)
    select
        snapshots.*,
        stream_commits.position_length,
        stream_commits.position_length_max,
        stream_commits.first_position,
        coalesce(snapshots.given_position, stream_commits.last_position) as snapshot_position,
        if(
            snapshots.given_position is null, stream_commits.last_ts, stream_commits.given_ts
        ) as snapshot_ts
    from snapshots
    left join stream_commits on snapshots.source_file = stream_commits.source_file
),

layouts_at as (
    -- the stream's layouts of the table the side file names (the schema may be left out
    -- when one schema has a table of that name), the one in force at the snapshot's position
    -- first (for a snapshot from before the log, the first one)
    select
        positioned.source_file,
        layouts.table_schema,
        struct(
            layouts.layout_source,
            layouts.column_names,
            layouts.layout_types,
            layouts.key_columns
        ) as layout,
        case
            when
                coalesce(layouts.valid_from_position <= positioned.snapshot_position, true)
                and coalesce(positioned.snapshot_position < layouts.valid_to_position, true)
                then 0
            else 1
        end as layout_rank,
        coalesce(layouts.valid_from_position, '') as layout_from
    from positioned
    inner join layouts
        on
            positioned.source_system = layouts.source_system
            and positioned.log_stream = layouts.log_stream
            and positioned.table_name = layouts.table_name
            and coalesce(positioned.table_schema = layouts.table_schema, true)
),

tables as (
    select
        source_file,
        count(distinct table_schema) as schema_count,
        min(table_schema) as table_schema,
        min_by(layout, struct(layout_rank, layout_from)) as layout
    from layouts_at
    group by source_file
),

change_layouts as (
    -- the key and types the table's changes carry: of its first change after the snapshot
    -- (its rows must be keyed as those changes key them), else of its last one before
    select
        positioned.source_file,
        min_by(
            struct(table_changes.key_columns, table_changes.column_types),
            table_changes.change_order
        ) filter (
            where table_changes.commit_position > coalesce(positioned.snapshot_position, '')
        ) as first_after,
        max_by(
            struct(table_changes.key_columns, table_changes.column_types),
            table_changes.change_order
        ) as last_one
    from positioned
    inner join tables on positioned.source_file = tables.source_file
    inner join table_changes
        on
            positioned.source_system = table_changes.source_system
            and positioned.log_stream = table_changes.log_stream
            and tables.table_schema <=> table_changes.table_schema
            and positioned.table_name = table_changes.table_name
    group by positioned.source_file
),

laid_out as (
    select
        positioned.*,
        tables.source_file is not null as table_found,
        tables.schema_count,
        tables.table_schema as found_schema,
        tables.layout.layout_source,
        tables.layout.column_names as layout_columns,
        coalesce(
            change_layouts.first_after.key_columns,
            change_layouts.last_one.key_columns,
            tables.layout.key_columns,
            array()
        ) as table_key_columns,
        coalesce(
            change_layouts.first_after.column_types,
            change_layouts.last_one.column_types,
            tables.layout.layout_types
        ) as table_column_types
    from positioned
    left join tables on positioned.source_file = tables.source_file
    left join change_layouts on positioned.source_file = change_layouts.source_file
),

checked as (
    select
        source_system,
        log_stream,
        capture,
        source_file,
        side_file,
        file_format,
        coalesce(found_schema, table_schema) as table_schema,
        table_name,
        given_position,
        taken_at,
        snapshot_position,
        snapshot_ts,
        columns,
        row_count,
        table_key_columns as key_columns,
        table_column_types as column_types,
        case
            when problem is not null then problem
            when not table_found
                then concat(
                    'table ', concat_ws('.', table_schema, table_name), ' of snapshot ',
                    source_file, ' is not a table of log stream ', log_stream, ' (',
                    source_system, '): check schema and table in ', side_file
                )
            when schema_count > 1
                then concat(
                    'table ', table_name, ' of snapshot ', source_file,
                    ' is in several schemas of log stream ', log_stream,
                    ': give its schema in ', side_file
                )
            when
                given_position is not null
                and position_length is not null
                and (
                    length(given_position) < position_length
                    or length(given_position) > position_length_max
                )
                then concat(
                    'position ', given_position, ' in ', side_file,
                    ' is not written as the commit positions of log stream ', log_stream,
                    ' are (e.g. ', first_position,
                    '): copy it as marts.fct_transactions.commit_position shows it'
                )
            when
                layout_source != 'unknown'
                and size(layout_columns) > 0
                and size(array_except(columns, layout_columns)) > 0
                then concat(
                    'snapshot ', source_file, ' has column(s) ',
                    array_join(array_except(columns, layout_columns), ', '), ' that table ',
                    concat_ws('.', found_schema, table_name),
                    ' does not have at its position (its columns: ',
                    array_join(layout_columns, ', '),
                    '): unload the table again or fix the header'
                )
            when size(array_except(table_key_columns, columns)) > 0
                then concat(
                    'snapshot ', source_file, ' lacks key column(s) ',
                    array_join(array_except(table_key_columns, columns), ', '),
                    ' of its table: unload every column'
                )
        end as problem
    from laid_out
),

ranked as (
    -- the newest usable snapshot of a table is its base
    select
        *,
        row_number() over (
            partition by source_system, log_stream, table_schema, table_name, problem is null
            order by coalesce(snapshot_position, '') desc, source_file desc
        ) as newness
    from checked
)

select
    * except (newness),
    case
        when problem is not null then 'rejected'
        when newness = 1 then 'base'
        else 'superseded'
    end as snapshot_status
from ranked

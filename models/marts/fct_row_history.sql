{{ config(post_hook="{{ create_table_as_of_function() }}") }}
-- One row per version of a table row (SCD type 2), every source: the row's values and the
-- commit positions (and times) between which they were the row's values. Built from the
-- committed changes of fct_changes, one table of one log stream at a time, in the stream's
-- commit order across its captures: a row inserted in one capture and updated in the next has
-- one history (`capture` says which capture's change opened each version).
-- A row is known by its key values (fct_changes.key_columns), or by a hash of all its
-- values when the table has no key (identical rows are then told apart by `occurrence`).
-- An update closes the version of its before image and opens one for its after image; a
-- delete closes one; a truncate closes every version open at it, a partition-level truncate
-- (fct_changes.truncate_scope 'partition') those whose key falls in its partition's key range
-- (macro in_partition_range); a row loaded again after it opens its next occurrence.
-- A row the log deletes or
-- updates before inserting it was there before the log began: it gets a version from the
-- start (valid_from_position null) with the values its before image shows.
-- What is not in the log is not NULL: `unavailable` names the columns of a version whose
-- values the log does not carry (the image's fct_changes.*_unavailable: column -> reason);
-- their row_image values are null but unknown. An earlier version's value is not carried
-- forward: the log cannot show that a change left such a column alone (a LOB, LONG or XML
-- value is changed in its own storage object, a row rewritten after an ADD COLUMN may take
-- a value the log does not hold), so the version after it does not know the value either.
-- A table with a base snapshot (docs/snapshots.md, int_logmart_snapshots_resolved) starts
-- from it: each snapshot row opens a version at the snapshot's position (`opened_by`
-- 'snapshot'; from the start when it was taken before the log's first commit), the table's
-- changes committed at or before that position are left out (the snapshot holds their
-- effect), the later ones apply on top.
-- How it runs (docs/performance.md): the per-row windows run on narrow rows (keys, positions,
-- the row key of each image); the images and the other wide columns are joined back once, at
-- the end, by change. A CTE that two others read is computed twice, so every step with a
-- window is read once (one generator makes a change's events, one pass its versions, a
-- broadcast join its partition cuts); the truncates are read and ordered on their own
-- (truncate_changes, few rows: read from `epochs`, every change's projection was inlined at
-- each reader). A change's place in its table's order is a value that sorts (macro
-- change_order) and its epoch a count of the table's truncates before it (broadcast): no
-- window spans a whole table, which would run in one task.
with

base_snapshots as (
    {%- if logmart_has_snapshots() %}
        select * from {{ ref('int_logmart_snapshots_resolved') }}
        where snapshot_status = 'base'
    {%- else %}
        {#- no snapshot under the raw folder: no ref, so this model need not wait for the
            snapshots' model (behind the transactions and table versions) #}
        select
            cast(null as string) as source_system,
            cast(null as string) as log_stream,
            cast(null as string) as capture,
            cast(null as string) as source_file,
            cast(null as string) as file_format,
            cast(null as string) as table_schema,
            cast(null as string) as table_name,
            cast(null as string) as snapshot_position,
            cast(null as timestamp) as snapshot_ts,
            cast(null as array<string>) as key_columns,
            cast(null as map<string,string>) as column_types  -- noqa: LT01
        where false
    {%- endif %}
),

truncate_changes as (
    -- the committed truncates (few; the filter reaches the scan), read on their own: the
    -- epochs and the versions they end need only these, and a CTE that several others read
    -- is inlined (analysed, optimized and computed) at each of them
    select /*+ broadcast(base_snapshots) */
        changes.change_id,
        changes.source_system,
        changes.log_stream,
        changes.table_schema,
        changes.table_name,
        changes.commit_position,
        changes.commit_ts,
        {{ change_order(
            1, 'changes.commit_position', 'changes.transaction_id', 'changes.change_seq'
        ) }} as change_order,
        changes.truncate_scope,
        changes.partition_key_columns,
        changes.partition_low_key,
        changes.partition_high_key
    from {{ ref('fct_changes') }} as changes
    left anti join base_snapshots
        on
            {{ same_table('changes', 'base_snapshots') }}
            and changes.commit_position <= base_snapshots.snapshot_position
    where
        changes.disposition = 'committed'
        and changes.operation = 'truncate'
),

partition_truncate_tables as (
    -- the tables a partition-level truncate cuts: only their events carry the image through
    -- the windows, to compare with the truncate's key range
    select distinct
        source_system,
        log_stream,
        table_schema,
        table_name
    from truncate_changes
    where truncate_scope = 'partition'
),

committed_changes as (
    select /*+ broadcast(base_snapshots, cut_tables) */
        changes.change_id,
        changes.source_system,
        changes.log_stream,
        changes.capture,
        changes.table_schema,
        changes.table_name,
        changes.commit_position,
        changes.commit_ts,
        changes.transaction_id,
        changes.change_seq,
        {{ change_order(
            1, 'changes.commit_position', 'changes.transaction_id', 'changes.change_seq'
        ) }} as change_order,
        changes.operation,
        changes.change_kind,
        changes.before_image is not null as has_before_image,
        changes.after_image is not null as has_after_image,
        {{ image_has_key('changes.before_image', 'changes.key_columns') }} as before_has_key,
        {{ image_row_key('changes.before_image', 'changes.key_columns') }} as before_row_key,
        {{ image_has_key('changes.after_image', 'changes.key_columns') }} as after_has_key,
        {{ image_row_key('changes.after_image', 'changes.key_columns') }} as after_row_key,
        if(cut_tables.table_name is null, null, changes.before_image) as before_range_image,
        if(cut_tables.table_name is null, null, changes.after_image) as after_range_image,
        if(cut_tables.table_name is null, null, changes.column_types) as range_column_types
    from {{ ref('fct_changes') }} as changes
    left anti join base_snapshots
        on
            {{ same_table('changes', 'base_snapshots') }}
            and changes.commit_position <= base_snapshots.snapshot_position
    left join partition_truncate_tables as cut_tables
        on
            {{ same_table('changes', 'cut_tables') }}
    where changes.disposition = 'committed'
),

table_truncates as (
    -- the table-level truncates of each table (few), by their place in its order
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        collect_list(change_order) as truncate_orders
    from truncate_changes
    where truncate_scope = 'table'
    group by source_system, log_stream, table_schema, table_name
),

epochs as (
    -- each change with the table-level truncates so far (this change included): rows live in
    -- the epoch between two truncates
    {{ with_epoch('committed_changes', 'table_truncates') }}
),

truncate_epochs as (
    -- each truncate in its epoch, counted as a change's
    {{ with_epoch('truncate_changes', 'table_truncates') }}
),

truncates as (
    -- a table-level truncate ends the epoch before it (its epoch counts it)
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        epoch - 1 as ended_epoch,
        change_id,
        commit_position,
        commit_ts
    from truncate_epochs
    where truncate_scope = 'table'
),

partition_truncates as (
    -- a partition-level truncate ends, inside its epoch, the versions in its key range
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        epoch,
        change_order,
        change_id,
        commit_position,
        commit_ts,
        partition_key_columns,
        partition_low_key,
        partition_high_key
    from truncate_epochs
    where truncate_scope = 'partition'
),

snapshot_images as (
    -- a base snapshot's rows, as the log would show them; a snapshot's columns the log would
    -- know but it lacks are not in its images
    select
        base_snapshots.source_system,
        base_snapshots.log_stream,
        base_snapshots.capture,
        base_snapshots.table_schema,
        base_snapshots.table_name,
        base_snapshots.key_columns,
        base_snapshots.column_types,
        base_snapshots.snapshot_position,
        base_snapshots.snapshot_ts,
        concat('snapshot:', snapshot_rows.source_file, '#', snapshot_rows.row_number)
            as change_id,
        {{ snapshot_image(
            'snapshot_rows.row_image',
            'base_snapshots.column_types',
            'base_snapshots.source_system',
            'base_snapshots.file_format'
        ) }} as row_image
    from base_snapshots
    inner join {{ ref('stg_logmart__snapshot_rows') }} as snapshot_rows
        on base_snapshots.source_file = snapshot_rows.source_file
),

events as (
    -- a row leaves (the before image of an update or delete), then arrives (the after image
    -- of an insert or update); an update whose before image is not in the log replaces
    -- the row with the same key. `image_side` says which image holds the row's values.
    select
        {{ row_event_columns() }},
        change_events.*
    from epochs
        lateral view inline(filter(array(
            if(
                operation in ('update', 'delete') and has_before_image,
                {{ image_event('before', leaves=true) }},
                null
            ),
            if(
                change_kind = 'update_after_only' and after_has_key,
                {{ image_event('after', leaves=true) }},
                null
            ),
            if(
                operation in ('insert', 'update') and has_after_image,
                {{ image_event('after', leaves=false) }},
                null
            )
        ), event -> event is not null)) change_events
    union all
    -- a base snapshot's rows arrive before every change left after it (change_order's step 0)
    select /*+ broadcast(cut_tables) */
        snapshot_images.source_system,
        snapshot_images.log_stream,
        snapshot_images.capture,
        snapshot_images.table_schema,
        snapshot_images.table_name,
        0 as epoch,
        snapshot_images.change_id,
        snapshot_images.snapshot_position as commit_position,
        snapshot_images.snapshot_ts as commit_ts,
        {{ change_order(
            0, 'snapshot_images.snapshot_position', 'cast(null as string)', 'cast(null as int)'
        ) }} as change_order,
        'snapshot' as operation,  -- noqa: RF04
        snapshot_images.snapshot_position is null as opens_from_start,
        1 as copy_delta,
        1 as event_step,
        'snapshot' as image_side,
        {{ image_has_key('snapshot_images.row_image', 'snapshot_images.key_columns') }}
            as has_key,
        {{ image_row_key('snapshot_images.row_image', 'snapshot_images.key_columns') }}
            as row_key,
        if(cut_tables.table_name is null, null, snapshot_images.row_image) as range_image,
        if(cut_tables.table_name is null, null, snapshot_images.column_types)
            as range_column_types
    from snapshot_images
    left join partition_truncate_tables as cut_tables
        on
            {{ same_table('snapshot_images', 'cut_tables') }}
),

counted as (
    -- copies of the row there after each event (identical keyless rows can be several).
    -- The row's windows name row_key first: Spark sorts a window's rows by its partition
    -- columns in the order given, and decides most comparisons on the first one's leading
    -- bytes; a table's name is the same for all its rows, a row key seldom (docs/performance.md,
    -- "2026-11-29, noon")
    select
        *,
        if(has_key, 'key', 'row_hash') as row_key_kind,
        sum(copy_delta) over (
            partition by row_key, epoch, source_system, log_stream, table_schema, table_name
            order by change_order, event_step
            rows between unbounded preceding and current row
        ) as live_after
    from events
),

numbered as (
    -- copies there before the log began are those the log removes before it adds them;
    -- the n-th copy is opened when n are there after, and closed when n were there before
    select
        *,
        live_after - least(
            0,
            min(live_after) over (
                partition by row_key, epoch, source_system, log_stream, table_schema, table_name
            )
        ) as copies_after
    from counted
),

occurrences as (
    select
        *,
        if(copy_delta = 1, copies_after, copies_after + 1) as occurrence
    from numbered
),

sequenced as (
    -- each copy's events alternate: opened, closed, opened…
    select
        *,
        lag(copy_delta) over copy_events as previous_delta,
        lead(change_id) over copy_events as next_change_id,
        lead(commit_position) over copy_events as next_commit_position,
        lead(commit_ts) over copy_events as next_commit_ts,
        lead(operation) over copy_events as next_operation,
        lead(change_order) over copy_events as next_change_order
    from occurrences
    window copy_events as (
        partition by row_key, epoch, occurrence, source_system, log_stream, table_schema, table_name
        order by change_order, event_step
    )
),

versions as (
    -- opened in the log (copy_delta 1), or there before the log began: first seen leaving
    select
        source_system,
        log_stream,
        capture,
        table_schema,
        table_name,
        epoch,
        row_key,
        row_key_kind,
        occurrence,
        change_id as image_change_id,
        image_side,
        range_image,
        range_column_types,
        if(copy_delta = 1, change_id, concat('before-log:', change_id)) as version_id,
        if(copy_delta = 1, operation, null) as opened_by,
        if(copy_delta = 1 and not opens_from_start, change_id, null) as valid_from_change_id,
        if(copy_delta = 1, commit_position, null) as valid_from_position,
        if(copy_delta = 1, commit_ts, null) as valid_from_ts,
        -- null: there from the start, before every change
        if(copy_delta = 1, change_order, null) as valid_from_order,
        if(copy_delta = 1, next_change_id, change_id) as next_change_id,
        if(copy_delta = 1, next_commit_position, commit_position) as next_commit_position,
        if(copy_delta = 1, next_commit_ts, commit_ts) as next_commit_ts,
        if(copy_delta = 1, next_operation, operation) as next_operation,
        if(copy_delta = 1, next_change_order, change_order) as next_change_order
    from sequenced
    where copy_delta = 1 or previous_delta is null
),

cut_candidates as (
    -- each version with the partition-level truncates after it opened (and before its own
    -- next event) whose key range holds its key: none for most
    select /*+ broadcast(partition_truncates) */
        versions.*,
        partition_truncates.change_id as cut_change_id,
        partition_truncates.commit_position as cut_position,
        partition_truncates.commit_ts as cut_ts,
        partition_truncates.change_order as cut_order
    from versions
    left join partition_truncates
        on
            {{ same_table('versions', 'partition_truncates') }}
            and versions.epoch = partition_truncates.epoch
            and (
                versions.valid_from_order is null
                or versions.valid_from_order < partition_truncates.change_order
            )
            and (
                versions.next_change_order is null
                or versions.next_change_order > partition_truncates.change_order
            )
            and {{ in_partition_range(
                'versions.range_image',
                'versions.range_column_types',
                'partition_truncates.partition_key_columns',
                'partition_truncates.partition_low_key',
                'partition_truncates.partition_high_key'
            ) }}
),

first_cuts as (
    -- the first of them (partitioned as the windows above, so no new shuffle)
    select
        *,
        row_number() over (
            partition by
                row_key, epoch, occurrence, source_system, log_stream, table_schema, table_name,
                version_id
            order by cut_order
        ) as cut_rank
    from cut_candidates
),

closed as (
    select /*+ broadcast(truncates) */
        versions.version_id,
        versions.source_system,
        versions.log_stream,
        versions.capture,
        versions.table_schema,
        versions.table_name,
        versions.row_key,
        versions.row_key_kind,
        versions.occurrence,
        versions.image_change_id,
        versions.image_side,
        versions.opened_by,
        versions.valid_from_position,
        versions.valid_from_ts,
        versions.valid_from_change_id,
        case
            when versions.cut_change_id is not null then versions.cut_position
            when versions.next_change_id is not null then versions.next_commit_position
            else truncates.commit_position
        end as valid_to_position,
        case
            when versions.cut_change_id is not null then versions.cut_ts
            when versions.next_change_id is not null then versions.next_commit_ts
            else truncates.commit_ts
        end as valid_to_ts,
        coalesce(
            versions.cut_change_id, versions.next_change_id, truncates.change_id
        ) as valid_to_change_id,
        case
            when versions.cut_change_id is not null then 'truncate'
            when versions.next_change_id is not null then versions.next_operation
            when truncates.change_id is not null then 'truncate'
        end as ended_by
    from first_cuts as versions
    left join truncates
        on
            {{ same_table('versions', 'truncates') }}
            and versions.epoch = truncates.ended_epoch
    where versions.cut_rank = 1
),

images as (
    -- the wide columns by change: a change's images (and what they lack), a snapshot row's
    select
        change_id,
        key_columns,
        column_types,
        before_image,
        after_image,
        before_unavailable,
        after_unavailable
    from {{ ref('fct_changes') }}
    where disposition = 'committed'
    union all
    select
        change_id,
        key_columns,
        column_types,
        null as before_image,
        row_image as after_image,
        null as before_unavailable,
        null as after_unavailable
    from snapshot_images
),

imaged as (
    -- joined back once
    select
        closed.*,
        images.key_columns,
        if(closed.image_side = 'before', images.before_image, images.after_image) as row_image,
        coalesce(
            if(
                closed.image_side = 'before', images.before_unavailable, images.after_unavailable
            ),
            cast(map() as map<string,string>)  -- noqa: LT01
        ) as unavailable,
        images.column_types
    from closed
    inner join images
        on closed.image_change_id = images.change_id
)

select
    version_id,
    source_system,
    log_stream,
    capture,
    table_schema,
    table_name,
    row_key,
    row_key_kind,
    key_columns,
    occurrence,
    row_image,
    unavailable,
    column_types,
    opened_by,
    valid_from_position,
    valid_from_ts,
    valid_from_change_id,
    valid_to_position,
    valid_to_ts,
    valid_to_change_id,
    ended_by,
    valid_to_change_id is null as is_current
from imaged

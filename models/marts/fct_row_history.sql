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
with

base_snapshots as (
    select * from {{ ref('int_logmart_snapshots_resolved') }}
    where snapshot_status = 'base'
),

committed_changes as (
    select changes.*
    from {{ ref('fct_changes') }} as changes
    left anti join base_snapshots
        on
            changes.source_system = base_snapshots.source_system
            and changes.log_stream = base_snapshots.log_stream
            and changes.table_schema <=> base_snapshots.table_schema
            and changes.table_name = base_snapshots.table_name
            and changes.commit_position <= base_snapshots.snapshot_position
    where changes.disposition = 'committed'
),

change_orders as (
    -- each change's place in its table's commit order, and the truncates so far (this change
    -- included): rows live in the epoch between two truncates. Windows over a whole table,
    -- so on the few columns they need (the images stay out of the sort: a table of millions
    -- of changes does not fit in a task's memory with them).
    select
        change_id,
        row_number() over table_order as change_order,
        sum(if(operation = 'truncate' and truncate_scope = 'table', 1, 0))
            over table_order as epoch
    from committed_changes
    window table_order as (
        partition by source_system, log_stream, table_schema, table_name
        order by commit_position, transaction_id, change_seq
        rows between unbounded preceding and current row
    )
),

epochs as (
    select
        committed_changes.*,
        change_orders.change_order,
        change_orders.epoch
    from committed_changes
    inner join change_orders
        on committed_changes.change_id = change_orders.change_id
),

truncates as (
    -- a truncate ends the epoch before it
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        epoch - 1 as ended_epoch,
        change_id,
        commit_position,
        commit_ts
    from epochs
    where operation = 'truncate' and truncate_scope = 'table'
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
    from epochs
    where operation = 'truncate' and truncate_scope = 'partition'
),

events as (
    -- a row leaves (the before image of an update or delete), then arrives (the after image
    -- of an insert or update); an update whose before image is not in the log replaces
    -- the row with the same key
    select
        {{ row_event_columns() }},
        -1 as copy_delta,
        0 as event_step,
        before_image as row_image,
        coalesce(before_unavailable, map()) as row_unavailable
    from epochs
    where operation in ('update', 'delete') and before_image is not null
    union all
    select
        {{ row_event_columns() }},
        -1 as copy_delta,
        0 as event_step,
        after_image as row_image,
        coalesce(after_unavailable, map()) as row_unavailable
    from epochs
    where
        change_kind = 'update_after_only'
        and size(key_columns) > 0
        and forall(key_columns, k -> map_contains_key(after_image, k))
    union all
    select
        {{ row_event_columns() }},
        1 as copy_delta,
        1 as event_step,
        after_image as row_image,
        coalesce(after_unavailable, map()) as row_unavailable
    from epochs
    where operation in ('insert', 'update') and after_image is not null
    union all
    -- a base snapshot's rows arrive before every change left after it (change_order 0);
    -- a snapshot's columns the log would know but it lacks are not in its images
    select
        base_snapshots.source_system,
        base_snapshots.log_stream,
        base_snapshots.capture,
        base_snapshots.table_schema,
        base_snapshots.table_name,
        0 as epoch,
        base_snapshots.key_columns,
        base_snapshots.column_types,
        concat('snapshot:', snapshot_rows.source_file, '#', snapshot_rows.row_number)
            as change_id,
        base_snapshots.snapshot_position as commit_position,
        base_snapshots.snapshot_ts as commit_ts,
        0 as change_order,
        'snapshot' as operation,  -- noqa: RF04
        base_snapshots.snapshot_position is null as opens_from_start,
        1 as copy_delta,
        1 as event_step,
        {{ snapshot_image(
            'snapshot_rows.row_image',
            'base_snapshots.column_types',
            'base_snapshots.source_system',
            'base_snapshots.file_format'
        ) }} as row_image,
        cast(map() as map<string,string>) as row_unavailable  -- noqa: LT01
    from base_snapshots
    inner join {{ ref('stg_logmart__snapshot_rows') }} as snapshot_rows
        on base_snapshots.source_file = snapshot_rows.source_file
),

identified as (
    select
        *,
        size(key_columns) > 0
        and forall(key_columns, k -> map_contains_key(row_image, k)) as has_key
    from events
),

keyed as (
    select
        *,
        if(
            has_key,
            to_json(transform(key_columns, k -> row_image[k])),
            sha2(to_json(array_sort(map_entries(row_image))), 256)
        ) as row_key,
        if(has_key, 'key', 'row_hash') as row_key_kind
    from identified
),

counted as (
    -- copies of the row there after each event (identical keyless rows can be several)
    select
        *,
        sum(copy_delta) over (
            partition by source_system, log_stream, table_schema, table_name, row_key, epoch
            order by change_order, event_step
            rows between unbounded preceding and current row
        ) as live_after
    from keyed
),

numbered as (
    -- copies there before the log began are those the log removes before it adds them;
    -- the n-th copy is opened when n are there after, and closed when n were there before
    select
        *,
        live_after - least(
            0,
            min(live_after) over (
                partition by source_system, log_stream, table_schema, table_name, row_key, epoch
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
        partition by source_system, log_stream, table_schema, table_name, row_key, epoch, occurrence
        order by change_order, event_step
    )
),

versions as (
    -- opened in the log
    select
        source_system,
        log_stream,
        capture,
        table_schema,
        table_name,
        epoch,
        row_key,
        row_key_kind,
        key_columns,
        occurrence,
        row_image,
        row_unavailable as unavailable,
        column_types,
        change_id as version_id,
        operation as opened_by,
        if(opens_from_start, null, change_id) as valid_from_change_id,
        commit_position as valid_from_position,
        commit_ts as valid_from_ts,
        change_order as valid_from_order,
        next_change_id,
        next_commit_position,
        next_commit_ts,
        next_operation,
        next_change_order
    from sequenced
    where copy_delta = 1
    union all
    -- there before the log began: first seen leaving
    select
        source_system,
        log_stream,
        capture,
        table_schema,
        table_name,
        epoch,
        row_key,
        row_key_kind,
        key_columns,
        occurrence,
        row_image,
        row_unavailable as unavailable,
        column_types,
        concat('before-log:', change_id) as version_id,
        cast(null as string) as opened_by,
        null as valid_from_change_id,
        null as valid_from_position,
        null as valid_from_ts,
        0 as valid_from_order,
        change_id as next_change_id,
        commit_position as next_commit_position,
        commit_ts as next_commit_ts,
        operation as next_operation,
        change_order as next_change_order
    from sequenced
    where copy_delta = -1 and previous_delta is null
),

identified_versions as (
    select * from versions
),

partition_cuts as (
    -- the first partition-level truncate after a version opened (and before its own next
    -- event) whose key range holds the version's key
    select
        identified_versions.version_id,
        identified_versions.row_key,
        identified_versions.occurrence,
        min_by(
            named_struct(
                'change_id', partition_truncates.change_id,
                'commit_position', partition_truncates.commit_position,
                'commit_ts', partition_truncates.commit_ts
            ),
            partition_truncates.change_order
        ) as cut
    from identified_versions
    inner join partition_truncates
        on
            identified_versions.source_system = partition_truncates.source_system
            and identified_versions.log_stream = partition_truncates.log_stream
            and identified_versions.table_schema <=> partition_truncates.table_schema
            and identified_versions.table_name = partition_truncates.table_name
            and identified_versions.epoch = partition_truncates.epoch
            and identified_versions.valid_from_order < partition_truncates.change_order
            and (
                identified_versions.next_change_order is null
                or identified_versions.next_change_order > partition_truncates.change_order
            )
            and {{ in_partition_range(
                'identified_versions.row_image',
                'identified_versions.column_types',
                'partition_truncates.partition_key_columns',
                'partition_truncates.partition_low_key',
                'partition_truncates.partition_high_key'
            ) }}
    group by
        identified_versions.version_id,
        identified_versions.row_key,
        identified_versions.occurrence
),

closed as (
    select
        versions.version_id,
        versions.source_system,
        versions.log_stream,
        versions.capture,
        versions.table_schema,
        versions.table_name,
        versions.row_key,
        versions.row_key_kind,
        versions.key_columns,
        versions.occurrence,
        versions.row_image,
        versions.unavailable,
        versions.column_types,
        versions.opened_by,
        versions.valid_from_position,
        versions.valid_from_ts,
        versions.valid_from_change_id,
        case
            when partition_cuts.cut is not null then partition_cuts.cut.commit_position
            when versions.next_change_id is not null then versions.next_commit_position
            else truncates.commit_position
        end as valid_to_position,
        case
            when partition_cuts.cut is not null then partition_cuts.cut.commit_ts
            when versions.next_change_id is not null then versions.next_commit_ts
            else truncates.commit_ts
        end as valid_to_ts,
        coalesce(
            partition_cuts.cut.change_id, versions.next_change_id, truncates.change_id
        ) as valid_to_change_id,
        case
            when partition_cuts.cut is not null then 'truncate'
            when versions.next_change_id is not null then versions.next_operation
            when truncates.change_id is not null then 'truncate'
        end as ended_by
    from identified_versions as versions
    left join partition_cuts
        on
            versions.version_id = partition_cuts.version_id
            and versions.row_key = partition_cuts.row_key
            and versions.occurrence = partition_cuts.occurrence
    left join truncates
        on
            versions.source_system = truncates.source_system
            and versions.log_stream = truncates.log_stream
            and versions.table_schema <=> truncates.table_schema
            and versions.table_name = truncates.table_name
            and versions.epoch = truncates.ended_epoch
)

select
    *,
    valid_to_change_id is null as is_current
from closed

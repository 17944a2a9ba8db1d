-- A view: the statements are written when a script is asked for, not for every change at each
-- build. Each value becomes a SQL constant once (macro sql_constants, expanded twice), which
-- keeps the view's text under the 32,700 characters the embedded Derby metastore keeps.
{{ config(materialized='view') }}
-- UNDO and REDO SQL of every committed change, in the source database's dialect (the
-- constants are in macros/change_sql.sql): REDO applies the change again, UNDO reverses it.
-- Run REDO in commit order (`order by commit_position, change_seq`) and UNDO in the reverse
-- order. A row is found by the table's key (fct_changes.key_columns), else by every column of
-- its image that can be compared. A truncate's REDO is a DELETE without WHERE (what TRUNCATE
-- does, in any of the dialects and inside a unit of work); its UNDO inserts again the rows the
-- log shows in the table at that point (fct_row_history). A partition-level truncate
-- (fct_changes.truncate_scope 'partition': Log Master DM of LOAD REPLACE PART) deletes the
-- rows of its key range: DELETE ... WHERE above the low limit key and at or below the high one
-- (macro sql_partition_range); its UNDO inserts again the rows the row history ended by it,
-- which are those of the range (fct_row_history, macro in_partition_range).
-- A value the log does not carry (fct_changes.before_unavailable / after_unavailable) is never
-- written: an INSERT lists, an UPDATE sets and a WHERE compares only the columns whose values
-- are there, and statement_warnings names the columns left out and why; a truncate's UNDO
-- leaves out of each row's INSERT the columns fct_row_history.unavailable names, with a
-- comment after it (`-- left out, not in the log: DOC (not_logged_lob)`).
with

changes as (
    select * from {{ ref('fct_changes') }}
    where disposition = 'committed'
),

available as (
    -- the images without the columns whose values the log does not carry
    select
        * except (before_image, after_image),
        map_filter(
            before_image,
            (k, v) -> not map_contains_key(coalesce(before_unavailable, map()), k)
        ) as before_image,
        map_filter(
            after_image,
            (k, v) -> not map_contains_key(coalesce(after_unavailable, map()), k)
        ) as after_image,
        array_distinct(
            concat(
                transform(
                    array_sort(map_keys(coalesce(before_unavailable, map()))),
                    k -> concat(k, ' (', before_unavailable[k], ')')
                ),
                transform(
                    array_sort(map_keys(coalesce(after_unavailable, map()))),
                    k -> concat(k, ' (', after_unavailable[k], ')')
                )
            )
        ) as left_out_columns
    from changes
),

row_versions_truncated as (
    -- the row versions a truncate ended, without the columns whose values the log does not
    -- carry (fct_row_history.unavailable), and the names of those columns
    select
        *,
        map_filter(
            row_image, (k, v) -> not map_contains_key(coalesce(unavailable, map()), k)
        ) as available_image,
        transform(
            array_sort(map_keys(coalesce(unavailable, map()))),
            k -> concat(k, ' (', unavailable[k], ')')
        ) as left_out_columns
    from {{ ref('fct_row_history') }}
    where ended_by = 'truncate'
),

truncated_rows as (
    -- a truncate's UNDO: an INSERT of each row version it ended, without the columns whose
    -- values the log does not carry (fct_row_history.unavailable), a comment naming them
    select
        valid_to_change_id as change_id,
        count(*) as truncated_row_count,
        array_sort(
            collect_list(
                concat(
                    'INSERT INTO ',
                    {{ sql_table_name('table_schema', 'table_name') }},
                    ' ',
                    {{ sql_insert_values('available_constants') }},
                    ';',
                    if(
                        size(left_out_columns) = 0,
                        '',
                        ' -- left out, not in the log: ' || array_join(left_out_columns, ', ')
                    )
                )
            )
        ) as truncated_row_statements,
        array_sort(array_distinct(flatten(collect_list(left_out_columns))))
            as truncated_left_out_columns
    from (
        select
            *,
            {{ sql_constants('array(available_image)', 'column_types') }}[0] as available_constants
        from row_versions_truncated
    )
    group by valid_to_change_id
),

with_constants as (
    -- each value of the change's images and partition limit keys as a SQL constant, once
    select
        *,
        {{ sql_constants(
            'array(before_image, after_image, partition_low_key, partition_high_key)',
            'column_types'
        ) }} as constants
    from available
),

located as (
    select
        *,
        constants[0] as before_constants,
        constants[1] as after_constants,
        {{ sql_table_name('table_schema', 'table_name') }} as table_ref,
        {{ sql_match_columns('before_image', 'column_types', 'key_columns') }}
            as before_match_columns,
        {{ sql_match_columns('after_image', 'column_types', 'key_columns') }}
            as after_match_columns,
        size(key_columns) > 0
        and forall(
            key_columns, k -> map_contains_key(coalesce(before_image, after_image), k)
        ) as has_key,
        filter(
            map_keys(after_image), k -> not after_image[k] <=> before_image[k]
        ) as changed_columns,
        -- the columns an UPDATE sets: those changed, and those whose value is known on the
        -- side set but not on the other (it may have changed); all of that side when none
        filter(
            map_keys(after_image),
            k -> not map_contains_key(before_image, k) or not after_image[k] <=> before_image[k]
        ) as redo_set_columns,
        filter(
            map_keys(before_image),
            k -> not map_contains_key(after_image, k) or not after_image[k] <=> before_image[k]
        ) as undo_set_columns,
        -- a partition-level truncate's key range ('' = no bound on either side)
        if(
            coalesce(truncate_scope = 'partition', false),
            {{ sql_partition_range('constants[2]', 'constants[3]', 'partition_key_columns') }},
            ''
        ) as partition_range
    from with_constants
),

with_truncated_rows as (
    select
        located.*,
        truncated_rows.truncated_row_count,
        truncated_rows.truncated_row_statements,
        array_distinct(
            concat(
                located.left_out_columns,
                coalesce(truncated_rows.truncated_left_out_columns, array())
            )
        ) as statement_left_out_columns
    from located
    left join truncated_rows
        on located.change_id = truncated_rows.change_id
),

statements as (
    select
        *,
        change_kind in ('update_before_only', 'update_after_only') as is_half_update,
        case operation
            when 'insert'
                then concat(
                    'INSERT INTO ', table_ref, ' ',
                    {{ sql_insert_values('after_constants') }}, ';'
                )
            when 'delete'
                then concat(
                    'DELETE FROM ', table_ref,
                    ' WHERE ',
                    {{ sql_match('before_constants', 'before_match_columns') }},
                    ';'
                )
            when 'update'
                then concat(
                    'UPDATE ', table_ref,
                    ' SET ', {{ sql_assignments(
                    'after_constants',
                    'if(size(redo_set_columns) > 0, redo_set_columns, map_keys(after_image))'
                ) }},
                    ' WHERE ',
                    {{ sql_match('before_constants', 'before_match_columns') }},
                    ';'
                )
            when 'truncate'
                then concat(
                    'DELETE FROM ', table_ref,
                    if(partition_range = '', '', concat(' WHERE ', partition_range)),
                    ';'
                )
        end as redo_statement,
        case operation
            when 'insert'
                then concat(
                    'DELETE FROM ', table_ref,
                    ' WHERE ',
                    {{ sql_match('after_constants', 'after_match_columns') }},
                    ';'
                )
            when 'delete'
                then concat(
                    'INSERT INTO ', table_ref, ' ',
                    {{ sql_insert_values('before_constants') }}, ';'
                )
            when 'update'
                then concat(
                    'UPDATE ', table_ref,
                    ' SET ', {{ sql_assignments(
                    'before_constants',
                    'if(size(undo_set_columns) > 0, undo_set_columns, map_keys(before_image))'
                ) }},
                    ' WHERE ',
                    {{ sql_match('after_constants', 'after_match_columns') }},
                    ';'
                )
            when 'truncate' then array_join(truncated_row_statements, '\n')
        end as undo_statement
    from with_truncated_rows
),

described as (
    select
        change_id,
        source_system,
        log_stream,
        capture,
        table_schema,
        table_name,
        transaction_id,
        commit_position,
        change_seq,
        commit_ts,
        operation,
        change_kind,
        generated_by,
        -- each source's dialect, from its registration (udfs/<folder>/registration.py)
        {%- set dialects = logmart_registry('logmart_sql_dialects') %}
        case source_system
            {%- for system in logmart_registry('logmart_source_systems') %}
                when {{ logmart_string_literal(system) }}
                    then {{ logmart_string_literal(dialects[system]) }}
            {%- endfor %}
        end as sql_dialect,
        case
            when operation = 'truncate' then null
            when has_key then 'key'
            else 'all_columns'
        end as match_by,
        -- a WHERE clause needs a column to compare: none when the image has only LOBs
        -- and an INSERT or an UPDATE needs a column whose value is in the log
        if(
            is_half_update
            or (operation in ('update', 'delete') and size(before_match_columns) = 0)
            or (operation in ('insert', 'update') and size(map_keys(after_image)) = 0),
            null,
            redo_statement
        ) as redo_sql,
        if(
            is_half_update
            or (operation in ('insert', 'update') and size(after_match_columns) = 0)
            or (operation in ('delete', 'update') and size(map_keys(before_image)) = 0),
            null,
            undo_statement
        ) as undo_sql,
        filter(
            array(
                if(
                    is_half_update,
                    'only one image of this update is in the capture: no UNDO or REDO',
                    null
                ),
                if(
                    operation != 'truncate' and not has_key,
                    'no key known: the WHERE clause compares every column but LOB and LONG '
                    || 'ones, and affects every row with those values',
                    null
                ),
                if(
                    operation != 'truncate' and column_types is null,
                    'column types unknown: every value is written as a string constant',
                    null
                ),
                if(
                    size(decode_warnings) > 0,
                    'values decoded with warnings: ' || array_join(decode_warnings, '; '),
                    null
                ),
                if(
                    size(statement_left_out_columns) > 0,
                    'left out of the statements, their values are not in the log: '
                    || array_join(statement_left_out_columns, ', '),
                    null
                ),
                if(
                    coalesce(truncate_scope = 'partition', false),
                    'partition-level delete (LOAD REPLACE of partition '
                    || coalesce(cast(partition_number as string), '?')
                    || '): REDO deletes the rows of its key range, compared by the database '
                    || '(character keys in its collating sequence); UNDO inserts again the rows '
                    || 'the log shows in that range, compared as fct_row_history does',
                    null
                ),
                case
                    when operation != 'truncate' then null
                    when truncated_row_count is null
                        then
                            'no row of the '
                            || if(truncate_scope = 'partition', 'partition', 'table')
                            || ' is known from the log at this truncate: '
                            || 'no UNDO (rows from before the log cannot be restored)'
                    else
                        'UNDO inserts the ' || truncated_row_count || ' rows the log shows '
                        || 'in the '
                        || if(truncate_scope = 'partition', 'partition', 'table')
                        || ' at this truncate; rows from before the log are not known'
                end
            ),
            message -> message is not null
        ) as statement_warnings
    from statements
)

select * from described

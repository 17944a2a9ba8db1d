-- Backout integrity for BI (docs/operations.md): each committed change (not one Db2 made
-- itself: a default UNDO leaves those out) paired with every later committed change of its log
-- stream that its UNDO would undo over: a change to the same row (by key, else by the whole
-- image), a truncate or mass delete of its table, or any change of the table after a truncate
-- being backed out. What `logmart sql undo` checks for a selection (udfs/backout.py), for
-- every change at once. A view: `logmart build` computes nothing; a query filtered on the
-- transactions to back out joins their changes only. Backing out several transactions
-- together, leave their own later changes out: where transaction_id in (…) and
-- later_transaction_id not in (…).
{#- the columns of a (backed-out change, later change) pair, and the join of two changes of
    one table of one log stream: shared by same_rows and same_tables -#}
{%- set pair_columns -%}
backed_out.source_system,
        backed_out.log_stream,
        backed_out.change_id,
        backed_out.transaction_id,
        backed_out.operation,
        concat(backed_out.table_schema, '.', backed_out.table_name) as table_full_name,
        backed_out.commit_position,
        backed_out.change_seq,
        backed_out.generated_by,
        later.change_id as later_change_id,
        later.transaction_id as later_transaction_id,
        later.operation as later_operation,
        later.commit_position as later_commit_position,
        later.change_seq as later_change_seq,
        later.commit_ts as later_commit_ts,
{%- endset -%}
{%- set same_table -%}
backed_out.source_system = later.source_system
            and backed_out.log_stream = later.log_stream
            and backed_out.table_schema = later.table_schema
            and backed_out.table_name = later.table_name
{%- endset %}

with

committed_changes as (
    select
        source_system,
        log_stream,
        change_id,
        table_schema,
        table_name,
        transaction_id,
        commit_position,
        change_seq,
        commit_ts,
        operation,
        change_kind,
        generated_by,
        {{ backout_row_identity('before_image') }} as before_row,
        {{ backout_row_identity('after_image') }} as after_row
    from {{ ref('fct_changes') }}
    where disposition = 'committed'
),

changed_rows as (
    select
        *,
        explode(
            array_distinct(filter(array(before_row, after_row), r -> r is not null))
        ) as row_identity
    from committed_changes
),

same_rows as (
    select
        {{ pair_columns }}
        concat('changes the same row, ', backed_out.row_identity) as reason
    from changed_rows as backed_out
    inner join changed_rows as later
        on
            {{ same_table }}
            and backed_out.row_identity = later.row_identity
),

same_tables as (
    select
        {{ pair_columns }}
        case
            when later.operation = 'truncate'
                then concat('empties the table (', later.change_kind, ')')
            else 'changes the table after the truncate backed out'
        end as reason
    from committed_changes as backed_out
    inner join committed_changes as later
        on
            {{ same_table }}
    where later.operation = 'truncate' or backed_out.operation = 'truncate'
),

pairs as (
    select * from same_rows
    union all
    select * from same_tables
)

-- grouped by every column but the reason, so that a filter on the backed-out transaction
-- reaches the join's backed-out side
select
    source_system,
    log_stream,
    change_id,
    transaction_id,
    operation,
    table_full_name,
    commit_position,
    later_change_id,
    later_transaction_id,
    later_operation,
    later_commit_position,
    later_commit_ts,
    array_join(array_sort(collect_set(reason)), '; ') as reason
from pairs
where
    generated_by is null
    -- later in the stream's commit order: commit position, transaction, change sequence
    and (
        later_commit_position > commit_position
        or (
            later_commit_position = commit_position
            and (
                later_transaction_id > transaction_id
                or (later_transaction_id = transaction_id and later_change_seq > change_seq)
            )
        )
    )
group by
    source_system,
    log_stream,
    change_id,
    transaction_id,
    operation,
    table_full_name,
    commit_position,
    change_seq,
    later_change_id,
    later_transaction_id,
    later_operation,
    later_commit_position,
    later_change_seq,
    later_commit_ts

-- Decoded Log Master row changes in logmart's change contract (see fct_changes).
-- A UR is settled over every extract of its log stream: an extract that ends while the UR is
-- open logs its records without UORDISP; the next extract's records of the UR carry UORDISP
-- and the commit point, and settle the records of both. A UR's catalog records (CO, E, CM,
-- SC: DDL and commands) settle it too: its last records may be DDL.
-- Incremental by capture (macros/incremental.sql): a build decodes the row images of new or
-- changed extracts only (int_logmaster_row_images_decoded, ephemeral), takes the changes of
-- the extracts built before from this table, and settles the URs over both; the UR fields
-- the settlement reads (uordisp, uorcommitlrsn, uortimestamp, uorcommittimestamp, logrecdisp)
-- are kept for that. Only the partitions a new extract reaches are written again: a UR of the
-- new extracts is settled with its changes read back from the extracts before, and those
-- extracts' partitions are written again whole, their other URs as they were settled (a UR's
-- settlement depends on its own records alone). When an extract changed or is gone (the
-- pre-hook drops its partition), every UR is settled again: one it touched may be in any
-- partition.
-- One table instead of the images' own and this one: the images are written once
-- (docs/performance.md, "2026-11-29, late morning").
-- The captures filter refs the captures inside a condition, which dbt does not see:
-- depends_on: {{ ref('stg_logmart__captures') }}
-- The catalog records' UR fields, and on an incremental build the new extracts' URs, are
-- read from the records' headers:
-- depends_on: {{ ref('stg_logmaster__lldf') }}
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['capture_fingerprint'],
    on_schema_change='fail',
    pre_hook="{{ drop_stale_capture_partitions('db2zos', decode_settings('logmaster')) }}"
) }}
{#- an incremental build where no partition goes: only the partitions of the URs the new
    extracts touch are written again -#}
{%- set reopen_touched = is_incremental()
    and not stale_capture_partitions('db2zos', decode_settings('logmaster')) -%}
{#- the extracts this build decodes, as a predicate on `capture` (asked once: on an incremental
    build it queries the captures and the table's partitions) -#}
{%- set new_captures_filter = captures_to_build_filter('db2zos', decode_settings('logmaster')) -%}
{#- a change's columns before its UR is settled: computed from the images of the extracts
    being built, read back from this table for the others -#}
{%- set change_columns = [
    'change_id', 'source_system', 'capture', 'raw_file', 'raw_offset', 'raw_records',
    'table_schema', 'table_name', 'operation', 'change_kind', 'source_change_type',
    'generated_by', 'before_image', 'after_image', 'key_columns', 'truncate_scope',
    'partition_number', 'partition_key_columns', 'partition_low_key', 'partition_high_key',
    'column_types', 'decode_warnings', 'log_stream', 'transaction_id', 'log_position',
    'change_ts', 'authid', 'plan_name', 'correlation_id', 'connection_id', 'connection_type',
    'incomplete_transaction', 'incomplete_dependency', 'has_compensation',
    'before_unavailable', 'after_unavailable', 'logrecdisp', 'uordisp', 'uorcommitlrsn',
    'uortimestamp', 'uorcommittimestamp', 'capture_fingerprint'
] -%}
with

decoded as (
    -- the changes of the extracts this build decodes
    select
        *,
        {{ log_stream('capture') }} as log_stream,
        {{ logmaster_transaction_id('uorid', 'memberid') }} as transaction_id
    from {{ ref('int_logmaster_row_images_decoded') }}
    where
        decode_error is null
        and {{ new_captures_filter }}
),

change_types as (
    select * from {{ ref('logmaster_change_types') }}
),

typed_changes as (
    select
        decoded.*,
        change_types.operation,
        change_types.change_kind,
        decoded.change_type = 'DM'
        and (decoded.before_image is not null or decoded.after_image is not null)
            as is_partition_mass_delete
    from decoded
    inner join change_types
        on decoded.change_type = change_types.change_type
),

new_changes as (
    select
        -- identity and provenance
        concat('db2zos:', raw_file, ':', raw_offset) as change_id,
        source_system,
        capture,
        raw_file,
        raw_offset,
        raw_records,
        -- what changed
        coalesce(table_schema, tableowner) as table_schema,
        coalesce(table_name, tablename) as table_name,
        operation,
        change_kind,
        change_type as source_change_type,
        -- a change Db2 made itself (LLDF SQLSRCTYPE): the target's own constraints and
        -- triggers make it again, so a REDO or UNDO leaves it out (fct_changes.generated_by)
        case sqlsrctype
            when 'R' then 'ri_constraint'
            when 'T' then 'trigger'
            when 'B' then 'ri_constraint_and_trigger'
            when 'H' then 'temporal_history'
        end as generated_by,
        if(is_partition_mass_delete, null, before_image) as before_image,
        if(is_partition_mass_delete, null, after_image) as after_image,
        key_columns,
        -- a truncate empties the whole table, or (a DM of LOAD REPLACE PART n, whose DATA
        -- holds the limit keys) one partition: keys above the low limit key (the previous
        -- partition's) and at or below the high one (its own); an empty map is no bound
        case
            when is_partition_mass_delete then 'partition'
            when operation = 'truncate' then 'table'
        end as truncate_scope,
        if(is_partition_mass_delete, partnum, null) as partition_number,
        if(
            is_partition_mass_delete,
            slice(
                key_columns, 1, greatest(size(before_image), size(after_image))
            ),
            null
        ) as partition_key_columns,
        if(is_partition_mass_delete, before_image, null) as partition_low_key,
        if(is_partition_mass_delete, after_image, null) as partition_high_key,
        column_types,
        decode_warnings,
        -- transaction (URID = RBA of the UR's first record; qualified by member in data
        -- sharing), settled over the log stream below
        log_stream,
        transaction_id,
        -- order: committed URs by UORCOMMITLRSN; inside one, LOGLRSN then LOGRBA
        concat(loglrsn, logrba) as log_position,
        log_timestamp as change_ts,
        -- who
        authid,
        plan as plan_name,
        correlationid as correlation_id,
        connectid as connection_id,
        connectiontype as connection_type,
        -- what Log Master says of the transaction's completeness (LLDF): a log record it
        -- could not complete, a dependency on such a transaction, compensation records
        incompletetrans = 'Y' as incomplete_transaction,
        incompletedep = 'Y' as incomplete_dependency,
        uorhascomp = 'Y' as has_compensation,
        -- values the log does not carry (udfs/unavailable.py), beside each image
        before_unavailable,
        after_unavailable,
        -- what the settlement reads of the record and its UR
        logrecdisp,
        uordisp,
        uorcommitlrsn,
        uortimestamp,
        uorcommittimestamp,
        capture_fingerprint
    from typed_changes
),

{%- if reopen_touched %}

    touched_transactions as (
        -- the URs the new extracts have records of, from the records' headers (not from the
        -- decoded changes: a CTE read three times is computed three times)
        select distinct
            {{ log_stream('capture') }} as log_stream,
            {{ logmaster_transaction_id('uorid', 'memberid') }} as transaction_id
        from {{ ref('stg_logmaster__lldf') }}
        where {{ new_captures_filter }}
    ),

    reopened_partitions as (
        -- the partitions built before that hold changes of those URs (usually the stream's
        -- previous extract, or none)
        select distinct built.capture_fingerprint
        from {{ this }} as built
        left semi join touched_transactions
            on
                built.log_stream = touched_transactions.log_stream
                and built.transaction_id = touched_transactions.transaction_id
    ),

    reopened_changes as (
        -- every change of those partitions, read whole, and whether its UR is settled again; the
        -- partitions broadcast, so that Spark prunes the others at run time (dynamic partition
        -- pruning wants a broadcast join: without it, every change built before was read and
        -- shuffled, 33 s of a new 100k capture's build at 1M records, warm)
        select /*+ broadcast(reopened_partitions) */
            built.*,
            touched_transactions.transaction_id is not null as is_touched
        from {{ this }} as built
        left semi join reopened_partitions
            on built.capture_fingerprint = reopened_partitions.capture_fingerprint
        left join touched_transactions
            on
                built.log_stream = touched_transactions.log_stream
                and built.transaction_id = touched_transactions.transaction_id
    ),
{%- endif %}

changes as (
    select {{ change_columns | join(', ') }} from new_changes
    {%- if reopen_touched %}
        union all
        -- the changes built before of the URs the new extracts touch
        select {{ change_columns | join(', ') }} from reopened_changes
        where is_touched
    {%- elif is_incremental() %}
        union all
        -- every extract built before (the pre-hook dropped those that changed)
        select {{ change_columns | join(', ') }} from {{ this }}
    {%- endif %}
),

settled as (
    -- what each change's UR comes to over its changes in the log stream, in one pass of
    -- windows over the UR's changes (the UR's ordering serves change_seq too)
    select
        *,
        count_if(uordisp = 'C') over ur_changes as committed_records,
        count_if(uordisp = 'A') over ur_changes as aborted_records,
        max({{ logmaster_commit_position('uordisp', 'uorcommitlrsn') }}) over ur_changes
            as changes_commit_position,
        min(uortimestamp) over ur_changes as changes_begin_ts,
        max(uorcommittimestamp) over ur_changes as changes_commit_ts,
        row_number() over ur_order as change_seq
    from changes
    window
        ur_order as (
            partition by log_stream, transaction_id
            order by log_position, raw_file, raw_offset
        ),
        ur_changes as (
            partition by log_stream, transaction_id
            order by log_position, raw_file, raw_offset
            rows between unbounded preceding and unbounded following
        )
),

catalog_records as (
    -- the UR fields of the stream's catalog records (CO, E, CM, SC) that settle their UR: a
    -- UR whose records in a later extract are DDL or commands only is settled by them. All
    -- extracts', or on a build that reopens only the touched URs, the new extracts' (an
    -- earlier extract's record of a touched UR was logged while it was open).
    select
        {{ log_stream('records.capture') }} as log_stream,
        {{ logmaster_transaction_id('records.uorid', 'records.memberid') }} as transaction_id,
        records.uordisp,
        records.uorcommitlrsn,
        records.uortimestamp,
        records.uorcommittimestamp
    from {{ ref('stg_logmaster__lldf') }} as records
    left semi join change_types
        on records.change_type = change_types.change_type and not change_types.is_row_change
    where
        records.uordisp in ('C', 'A')
        {%- if reopen_touched %}
            and {{ new_captures_filter }}
        {%- endif %}
),

catalog_units_of_recovery as (
    select
        log_stream,
        transaction_id,
        count_if(uordisp = 'C') as committed_records,
        count_if(uordisp = 'A') as aborted_records,
        max({{ logmaster_commit_position('uordisp', 'uorcommitlrsn') }}) as commit_position,
        min(uortimestamp) as begin_ts,
        max(uorcommittimestamp) as commit_ts
    from catalog_records
    group by log_stream, transaction_id
),

settled_with_catalog as (
    -- the UR over its changes and its catalog records (few: broadcast, so the changes are
    -- not shuffled again); greatest() and least() skip nulls
    select /*+ broadcast(by_catalog) */
        settled.*,
        {{ logmaster_settled_disposition(
            'settled.committed_records + coalesce(by_catalog.committed_records, 0)',
            'settled.aborted_records + coalesce(by_catalog.aborted_records, 0)'
        ) }} as transaction_disposition,
        greatest(settled.changes_commit_position, by_catalog.commit_position) as commit_position,
        least(settled.changes_begin_ts, by_catalog.begin_ts) as begin_ts,
        greatest(settled.changes_commit_ts, by_catalog.commit_ts) as commit_ts
    from settled
    left join catalog_units_of_recovery as by_catalog
        on
            settled.log_stream = by_catalog.log_stream
            and settled.transaction_id = by_catalog.transaction_id
)

select
    change_id,
    source_system,
    capture,
    raw_file,
    raw_offset,
    raw_records,
    table_schema,
    table_name,
    operation,
    change_kind,
    source_change_type,
    generated_by,
    before_image,
    after_image,
    key_columns,
    truncate_scope,
    partition_number,
    partition_key_columns,
    partition_low_key,
    partition_high_key,
    column_types,
    decode_warnings,
    log_stream,
    transaction_id,
    {{ logmaster_record_disposition('logrecdisp', 'transaction_disposition') }} as disposition,
    transaction_disposition,
    commit_position,
    log_position,
    change_ts,
    begin_ts,
    commit_ts,
    authid,
    plan_name,
    correlation_id,
    connection_id,
    connection_type,
    change_seq,
    incomplete_transaction,
    incomplete_dependency,
    has_compensation,
    before_unavailable,
    after_unavailable,
    logrecdisp,
    uordisp,
    uorcommitlrsn,
    uortimestamp,
    uorcommittimestamp,
    capture_fingerprint
from settled_with_catalog
{%- if reopen_touched %}
    union all
    -- the other URs of the partitions written again, as they were settled
    select * except (is_touched) from reopened_changes
    where not is_touched
{%- endif %}

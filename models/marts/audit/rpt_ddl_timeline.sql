-- The DDL timeline of each log stream (all its captures), every source: its schema changes
-- in log order, when they happened (the event's own time, else its transaction's commit
-- time; solidDB logs neither),
-- what kind of change on which table or object, by whom, and whether it took effect (its
-- transaction committed and it was not rolled back). What `logmart report` charts and lists.
with

schema_changes as (
    select * from {{ ref('fct_schema_changes') }}
),

kinds as (
    select * from {{ ref('schema_change_kinds') }}
),

timeline as (
    select
        schema_changes.source_system,
        schema_changes.log_stream,
        schema_changes.capture,
        schema_changes.schema_change_id,
        row_number() over (
            partition by schema_changes.source_system, schema_changes.log_stream
            order by
                schema_changes.log_position, schema_changes.raw_file, schema_changes.raw_offset
        ) as timeline_seq,
        coalesce(schema_changes.event_ts, schema_changes.commit_ts) as happened_ts,
        date_trunc(
            'hour', coalesce(schema_changes.event_ts, schema_changes.commit_ts)
        ) as happened_hour,
        schema_changes.change_kind,
        kinds.object_type,
        kinds.description as change_kind_description,
        nullif(concat_ws('.', schema_changes.table_schema, schema_changes.table_name), '')
            as table_full_name,
        schema_changes.object_name,
        schema_changes.disposition,
        schema_changes.disposition = 'committed' as took_effect,
        coalesce(
            schema_changes.sql_text,
            concat(
                '[', replace(schema_changes.change_kind, '_', ' '), '] ',
                concat_ws(
                    ' ',
                    nullif(
                        concat_ws('.', schema_changes.table_schema, schema_changes.table_name), ''
                    ),
                    schema_changes.object_name,
                    schema_changes.details
                )
            )
        ) as statement_text,
        schema_changes.old_definition,
        schema_changes.new_definition,
        schema_changes.authid,
        schema_changes.transaction_id,
        schema_changes.commit_position,
        schema_changes.log_position
    from schema_changes
    left join kinds
        on schema_changes.change_kind = kinds.change_kind
)

select * from timeline

-- Db2 LUW DDL and object records in the contract of fct_schema_changes: DOM create/drop
-- table and index, truncate, reorg, activate not logged initially; DMS initialize table,
-- add/drop/alter column, alter table attribute, rename, partition state; RDS DDL statements.
-- Undo records (compensation of a rolled-back DDL) are not
-- events: the event they undo shows its transaction's disposition. The table's column layout
-- before and after a record that changes it comes from the table's versions: the version
-- ending at the record's LSN, and the version in force at it (a created table's first
-- version starts at its create table record, before its initialize-table record). A truncate
-- is also a change in fct_changes, with the same id.
-- sql_text (docs/db2luw.md interpretation 20): the RDS DDL statement records of a transaction
-- are put together into statements (a piece whose text left is the whole length starts one,
-- the pieces after it in its transaction continue it, as udfs/db2luw/records.ddl_statements
-- does; text decoded as UTF-8 once whole, null when pieces are missing). Every other event
-- takes the statement of its own transaction nearest before it in the log, or, when none is
-- before it, the first one after it. A statement some event takes is not an event of its own;
-- one no event takes (CREATE VIEW, GRANT …) stays one, kind read from its text.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

events as (
    select
        *,
        concat(
            'TBSPACEID=', table_space_identifier, ',TABLEID=', table_identifier
        ) as table_object_id
    from {{ ref('int_db2luw_catalog_events_extracted') }}
    where not startswith(event_kind, 'undo_')
),

statement_pieces as (
    select
        capture,
        transaction_id,
        event_id,
        lsn,
        statement_text,
        statement_text_length,
        max(case when statement_text_left = statement_text_length then lsn end) over (
            partition by capture, transaction_id
            order by lsn
            rows between unbounded preceding and current row
        ) as statement_lsn
    from events
    where event_kind = 'ddl_statement'
),

statements as (
    select
        capture,
        transaction_id,
        statement_lsn,
        case
            when sum(octet_length(statement_text)) = max(statement_text_length)
                then decode(
                    aggregate(
                        transform(
                            array_sort(
                                collect_list(named_struct('lsn', lsn, 'piece', statement_text))
                            ),
                            p -> p.piece
                        ),
                        cast('' as binary),
                        (joined, piece) -> concat(joined, piece)
                    ),
                    'UTF-8'
                )
        end as sql_text
    from statement_pieces
    where statement_lsn is not null
    group by capture, transaction_id, statement_lsn
),

event_statements as (
    select
        events.event_id,
        events.capture,
        events.transaction_id,
        coalesce(
            max(
                case
                    when statements.statement_lsn < events.lsn then statements.statement_lsn
                end
            ),
            min(statements.statement_lsn)
        ) as statement_lsn
    from events
    inner join statements
        on
            events.capture = statements.capture
            and events.transaction_id = statements.transaction_id
    where events.event_kind != 'ddl_statement'
    group by events.event_id, events.capture, events.transaction_id
),

claimed_statements as (
    select distinct
        capture,
        transaction_id,
        statement_lsn
    from event_statements
),

versions as (
    select
        capture,
        table_object_id,
        valid_from_position,
        valid_to_position,
        {{ table_version_layout('columns') }} as column_layout
    from {{ ref('int_db2luw_table_versions_standardized') }}
),

standardized as (
    select
        events.event_id as schema_change_id,
        events.source_system,
        events.capture,
        events.table_schema,
        events.table_name,
        cast(null as string) as object_name,
        case events.event_kind
            when 'ddl_create_table' then 'create_table'
            when 'ddl_drop_table' then 'drop_table'
            when 'ddl_create_index' then 'create_index'
            when 'ddl_drop_index' then 'drop_index'
            when 'ddl_truncate' then 'truncate'
            when 'ddl_reorg' then 'reorg_table'
            when 'ddl_activate_not_logged_initially' then 'activate_not_logged_initially'
            when 'ddl_initialize_table' then 'initialize_table'
            when 'ddl_add_columns' then 'add_column'
            when 'ddl_drop_columns' then 'drop_column'
            when 'ddl_alter_column' then 'alter_column'
            when 'ddl_rename' then 'rename_table'
            when 'ddl_alter_table' then 'alter_table'
            when 'ddl_partition_state' then 'partition_state'
            when 'ddl_statement'
                then coalesce({{ ddl_statement_kind('statements.sql_text') }}, 'ddl_statement')
            else 'other_ddl'
        end as change_kind,
        events.source_change_type,
        old_versions.column_layout as old_definition,
        new_versions.column_layout as new_definition,
        statements.sql_text,
        nullif(concat_ws(
            '; ',
            case
                when events.index_token is not null
                    then concat('index token ', events.index_token)
            end,
            case
                when events.altered_attributes is not null
                    then concat(
                        'altered: ', array_join(events.altered_attributes, ', '),
                        '; now on: ', array_join(events.attributes_on, ', ')
                    )
            end,
            case
                when events.partition_action_name is not null
                    then concat(
                        'partition ', events.data_partition_identifier, ': ',
                        events.partition_action_name
                    )
            end,
            events.note
        ), '') as details,
        events.transaction_id,
        coalesce(events.transaction_disposition, 'in_flight') as disposition,
        coalesce(events.transaction_disposition, 'in_flight') as transaction_disposition,
        events.commit_position,
        events.commit_ts,
        events.log_position,
        cast(null as timestamp) as event_ts,
        events.authid,
        events.raw_file,
        events.raw_offset
    from events
    left join statement_pieces
        on events.event_id = statement_pieces.event_id
    left join event_statements
        on events.event_id = event_statements.event_id
    left join statements
        on
            events.capture = statements.capture
            and events.transaction_id = statements.transaction_id
            and coalesce(event_statements.statement_lsn, statement_pieces.statement_lsn)
            = statements.statement_lsn
    left join claimed_statements
        on
            events.capture = claimed_statements.capture
            and events.transaction_id = claimed_statements.transaction_id
            and statement_pieces.statement_lsn = claimed_statements.statement_lsn
    left join versions as old_versions
        on
            events.capture = old_versions.capture
            and events.table_object_id = old_versions.table_object_id
            and events.log_position = old_versions.valid_to_position
    left join versions as new_versions
        on
            events.capture = new_versions.capture
            and events.table_object_id = new_versions.table_object_id
            and events.event_kind in (
                'ddl_create_table', 'ddl_initialize_table', 'ddl_add_columns',
                'ddl_drop_columns', 'ddl_alter_column'
            )
            and coalesce(events.log_position >= new_versions.valid_from_position, true)
            and coalesce(events.log_position < new_versions.valid_to_position, true)
    -- a statement record is an event of its own only at its first piece and when no other
    -- event of its transaction took its text
    where
        events.event_kind != 'ddl_statement'
        or (
            coalesce(statement_pieces.statement_lsn = events.lsn, true)
            and claimed_statements.statement_lsn is null
        )
)

select * from standardized

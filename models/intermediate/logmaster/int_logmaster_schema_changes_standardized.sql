-- Log Master catalog events (CO, CM, SC, E) and truncates (DT, DR) in the contract of
-- fct_schema_changes. A CO record's text is a DDL statement: its kind comes from its leading
-- words (macro ddl_statement_kind); CM and SC texts are a Db2 command and a status message.
-- DATA is read by logmart_logmaster_catalog_event (udfs/logmaster/catalog.py) in the
-- extract's EBCDIC code page. A truncate is also a change in fct_changes, with the same id.
-- A catalog event's UR is settled over its log stream, as a row change's is: by the UR's
-- other catalog events and its row changes (as int_logmaster_changes_standardized settled
-- them), so that DDL of a UR open when its extract ended is committed when the next commits it.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
with

events as (
    select * from {{ ref('int_logmaster_catalog_events_extracted') }}
),

code_pages as (
    select
        capture,
        min(ebcdicsbcsccsid) as ebcdic_ccsid
    from {{ ref('stg_logmaster__xtyp') }}
    group by capture
),

read_events as (
    select
        events.*,
        logmart_logmaster_catalog_event(
            events.data,
            events.source_change_type,
            coalesce(
                nullif('{{ var("logmaster_ebcdic_codepage") }}', ''),
                concat('ccsid:', coalesce(code_pages.ebcdic_ccsid, 37))
            )
        ) as content
    from events
    left join code_pages
        on events.capture = code_pages.capture
),

catalog_events as (
    select
        event_id as schema_change_id,
        source_system,
        capture,
        table_schema,
        table_name,
        case
            when source_change_type = 'E'
                then concat_ws('.', content.clone_owner, content.clone_name)
            when source_change_type = 'CO' then {{ ddl_statement_object('content.text') }}
        end as object_name,
        case source_change_type
            when 'E' then 'exchange'
            when 'CM' then 'db2_command'
            when 'SC' then 'status_change'
            else coalesce({{ ddl_statement_kind('content.text') }}, 'other_ddl')
        end as change_kind,
        source_change_type,
        cast(null as string) as old_definition,
        cast(null as string) as new_definition,
        content.text as sql_text,
        content.error as details,
        {{ log_stream('capture') }} as log_stream,
        transaction_id,
        logrecdisp,
        uordisp,
        {{ logmaster_commit_position('uordisp', 'uorcommitlrsn') }} as commit_position,
        commit_ts,
        concat(loglrsn, logrba) as log_position,
        event_ts,
        authid,
        raw_file,
        raw_offset
    from read_events
),

event_units_of_recovery as (
    select distinct
        log_stream,
        transaction_id
    from catalog_events
),

unit_of_recovery_records as (
    -- what each record of those URs says of its UR: the catalog events' own fields, and the
    -- row changes' as settled (broadcast: the URs with DDL are few; the changes are not
    -- shuffled)
    select
        log_stream,
        transaction_id,
        uordisp = 'C' as says_committed,
        uordisp = 'A' as says_aborted,
        commit_position,
        commit_ts
    from catalog_events
    union all
    select /*+ broadcast(event_units_of_recovery) */
        changes.log_stream,
        changes.transaction_id,
        changes.transaction_disposition = 'committed' as says_committed,
        changes.transaction_disposition = 'aborted' as says_aborted,
        changes.commit_position,
        changes.commit_ts
    from {{ ref('int_logmaster_changes_standardized') }} as changes
    left semi join event_units_of_recovery
        on
            changes.log_stream = event_units_of_recovery.log_stream
            and changes.transaction_id = event_units_of_recovery.transaction_id
),

settled_units_of_recovery as (
    select
        log_stream,
        transaction_id,
        {{ logmaster_settled_disposition(
            'count_if(says_committed)', 'count_if(says_aborted)'
        ) }} as transaction_disposition,
        max(commit_position) as commit_position,
        max(commit_ts) as commit_ts
    from unit_of_recovery_records
    group by log_stream, transaction_id
),

settled_events as (
    select
        catalog_events.schema_change_id,
        catalog_events.source_system,
        catalog_events.capture,
        catalog_events.table_schema,
        catalog_events.table_name,
        catalog_events.object_name,
        catalog_events.change_kind,
        catalog_events.source_change_type,
        catalog_events.old_definition,
        catalog_events.new_definition,
        catalog_events.sql_text,
        catalog_events.details,
        catalog_events.transaction_id,
        {{ logmaster_record_disposition(
            'catalog_events.logrecdisp', 'settled.transaction_disposition'
        ) }} as disposition,
        settled.transaction_disposition,
        settled.commit_position,
        settled.commit_ts,
        catalog_events.log_position,
        catalog_events.event_ts,
        catalog_events.authid,
        catalog_events.raw_file,
        catalog_events.raw_offset
    from catalog_events
    inner join settled_units_of_recovery as settled
        on
            catalog_events.log_stream = settled.log_stream
            and catalog_events.transaction_id <=> settled.transaction_id
),

truncates as (
    select
        change_id as schema_change_id,
        source_system,
        capture,
        table_schema,
        table_name,
        cast(null as string) as object_name,
        'truncate' as change_kind,
        source_change_type,
        cast(null as string) as old_definition,
        cast(null as string) as new_definition,
        cast(null as string) as sql_text,
        if(change_kind = 'truncate_reuse_storage', 'REUSE STORAGE', null) as details,
        transaction_id,
        disposition,
        transaction_disposition,
        commit_position,
        commit_ts,
        log_position,
        change_ts as event_ts,
        authid,
        raw_file,
        raw_offset
    from {{ ref('int_logmaster_changes_standardized') }}
    where change_kind in ('truncate', 'truncate_reuse_storage')
)

select * from settled_events
union all
select * from truncates

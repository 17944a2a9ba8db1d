-- Log Master catalog events (CO, CM, SC, E) and truncates (DT, DR) in the contract of
-- fct_schema_changes. A CO record's text is a DDL statement: its kind comes from its leading
-- words (macro ddl_statement_kind); CM and SC texts are a Db2 command and a status message.
-- DATA is read by logmart_logmaster_catalog_event (udfs/logmaster/catalog.py) in the
-- extract's EBCDIC code page. A truncate is also a change in fct_changes, with the same id.
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
        transaction_id,
        case logrecdisp
            when 'A' then 'aborted'
            when 'S' then 'savepoint_rollback'
            when 'O' then 'reversed'
            else
                case uordisp
                    when 'C' then 'committed'
                    when 'A' then 'aborted'
                    else 'in_flight'
                end
        end as disposition,
        case uordisp
            when 'C' then 'committed'
            when 'A' then 'aborted'
            else 'in_flight'
        end as transaction_disposition,
        case
            when uordisp = 'C' and not {{ is_zero_position('uorcommitlrsn') }}
                then uorcommitlrsn
        end as commit_position,
        commit_ts,
        concat(loglrsn, logrba) as log_position,
        event_ts,
        authid,
        raw_file,
        raw_offset
    from read_events
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

select * from catalog_events
union all
select * from truncates

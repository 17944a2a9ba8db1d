{{ config(materialized='view') }}
-- One row per DDL or catalog event read from a database log, every source: which table (or
-- index, view, …) it is about, what kind of change it is (seed schema_change_kinds), the
-- table's column layout before and after where the log describes it, the statement's text
-- where the log has it, and its transaction and place in the log. A truncate is here (the
-- statement) and in fct_changes (the change that empties the table), with the same id.
-- Each source's int_<source>_schema_changes_standardized feeds it.
with

schema_changes as (
    {% for source in logmart_sources() -%}
        select
            schema_change_id,
            source_system,
            {{ log_stream('capture') }} as log_stream,
            capture,
            table_schema,
            table_name,
            object_name,
            change_kind,
            source_change_type,
            old_definition,
            new_definition,
            sql_text,
            details,
            transaction_id,
            disposition,
            transaction_disposition,
            commit_position,
            commit_ts,
            log_position,
            event_ts,
            authid,
            raw_file,
            raw_offset
        from {{ ref('int_' ~ source ~ '_schema_changes_standardized') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from schema_changes

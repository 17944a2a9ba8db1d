{#-
    The columns of a change's row event in fct_row_history (events), from `epochs`: what a
    base snapshot's row (docs/snapshots.md) also has, so both union into one event stream.
    `opens_from_start`: the version it opens was there from the start (a snapshot's row
    taken before the log's first commit); never for a change.
-#}
{% macro row_event_columns() -%}
    source_system,
    log_stream,
    capture,
    table_schema,
    table_name,
    epoch,
    key_columns,
    column_types,
    change_id,
    commit_position,
    commit_ts,
    change_order,
    operation,
    false as opens_from_start
{%- endmacro %}

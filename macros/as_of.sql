{#-
    Point in time over marts.fct_row_history: which row versions were the table's rows as of a
    commit position or a timestamp.
    `point` is a Spark SQL expression of type string: a commit position (the source's own
    text, e.g. 20 hex digits for Log Master; the state after every transaction committed at
    or before it) or a timestamp `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (the state after every
    transaction committed at or before it, by commit_ts on the server's clock; sources that
    log no commit times, like solidDB, need a position).
    Versions from before the log (valid_from_position null: rows the log deletes or updates
    before it inserts them) count as there from the start.
-#}
{% macro as_of_condition(point) -%}
    if(
        {{ point }} rlike '^[0-9]{4}-[0-9]{2}-[0-9]{2}',
        coalesce(valid_from_ts <= cast({{ point }} as timestamp), valid_from_position is null)
        and coalesce(valid_to_ts > cast({{ point }} as timestamp), valid_to_position is null),
        coalesce(valid_from_position <= {{ point }}, valid_from_position is null)
        and coalesce(valid_to_position > {{ point }}, valid_to_position is null)
    )
{%- endmacro %}

{#- A Python string as a Spark SQL string literal. -#}
{% macro spark_string_literal(text) -%}
    '{{ text | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{#-
    The rows of one table as of a position or timestamp, as a query: one row per row of the
    table then, with its values in `row_image` (column name -> value text), the columns whose
    values the log does not carry in `unavailable` (column name -> reason; their row_image
    value is null but not known to be NULL) and the version it comes from. For dbt analyses
    and `logmart dbt show --inline`:
        select * from ({{ table_as_of('SALES', 'CUSTOMER', '00DECFC4922F6A000000') }})
    Give source_system / log_stream when the same table name is in more than one log stream
    (a stream is one database's log, all its captures: README, Sources).
    `logmart query` has the same as a SQL table function, marts.table_as_of(schema, table,
    position_or_ts), which create_table_as_of_function() defines.
-#}
{% macro table_as_of(
    table_schema, table_name, position_or_ts, source_system=none, log_stream=none
) -%}
    select
        source_system,
        log_stream,
        capture,
        table_schema,
        table_name,
        row_key,
        occurrence,
        row_image,
        unavailable,
        column_types,
        valid_from_position,
        valid_from_ts,
        valid_from_change_id
    from {{ ref('fct_row_history') }}
    where
        {{ as_of_condition(spark_string_literal(position_or_ts)) }}
        and table_schema = {{ spark_string_literal(table_schema) }}
        and table_name = {{ spark_string_literal(table_name) }}
        and source_system = coalesce({{ spark_optional_literal(source_system) }}, source_system)
        and log_stream = coalesce({{ spark_optional_literal(log_stream) }}, log_stream)
{%- endmacro %}

{#- A Spark SQL string literal, or null for none. -#}
{% macro spark_optional_literal(text) -%}
    {{ 'cast(null as string)' if text is none else spark_string_literal(text) }}
{%- endmacro %}

{#-
    A post-hook of fct_row_history: the SQL table function `marts.table_as_of(table_schema,
    table_name, position_or_ts)` (same rows as the table_as_of macro, every source and
    log stream), kept in the metastore, for `logmart query` and any Spark SQL client.
-#}
{% macro create_table_as_of_function() -%}
    create or replace function {{ this.schema }}.table_as_of(
        as_of_schema string, as_of_table string, position_or_ts string
    )
    returns table (
        source_system string,
        log_stream string,
        capture string,
        table_schema string,
        table_name string,
        row_key string,
        occurrence bigint,
        row_image map<string, string>,
        unavailable map<string, string>,
        column_types map<string, string>,
        valid_from_position string,
        valid_from_ts timestamp,
        valid_from_change_id string
    )
    comment 'Rows of one table as of a commit position or a timestamp (marts.fct_row_history)'
    return
        select
            source_system,
            log_stream,
            capture,
            table_schema,
            table_name,
            row_key,
            occurrence,
            row_image,
            unavailable,
            column_types,
            valid_from_position,
            valid_from_ts,
            valid_from_change_id
        from {{ this }}
        where
            table_schema <=> as_of_schema  -- a table without a schema: null
            and table_name = as_of_table
            and {{ as_of_condition('position_or_ts') }}
{%- endmacro %}

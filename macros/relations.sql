{#-
    `relation` (a ref or source) as the warehouse has it, or none: while dbt parses (nothing
    is built then) and when the relation is not built yet.
-#}
{% macro built_relation(relation) %}
    {% if not execute %}
        {{ return(none) }}
    {% endif %}
    {{ return(load_relation(relation)) }}
{% endmacro %}

{#-
    The column names (lower case) of `relation` (a ref) as the warehouse has it: lets a shared
    model read a column of the change contract that only some sources give (e.g.
    `column_types`). Empty when it is not built (built_relation). One `describe` per relation:
    a model asks once and looks its optional columns up in the list.
-#}
{% macro relation_column_names(relation) %}
    {% set loaded = built_relation(relation) %}
    {% if loaded is none %}
        {{ return([]) }}
    {% endif %}
    {% set columns = adapter.get_columns_in_relation(loaded) %}
    {{ return(columns | map(attribute='name') | map('lower') | list) }}
{% endmacro %}

{#-
    The value of a column of the change contract that only some sources give: `column` when
    it is among `column_names` (relation_column_names of the relation read), else a typed
    null (also when `column_names` is none: sqlfluff's templater, whose macros return
    nothing). For use inside an expression; optional_column names it.
-#}
{% macro optional_value(column_names, column, data_type) -%}
    {%- if column | lower in (column_names or []) -%}
        {{ column }}
    {%- else -%}
        cast(null as {{ data_type }})
    {%- endif -%}
{%- endmacro %}

{#- optional_value as a select-list column under its own name. -#}
{% macro optional_column(column_names, column, data_type) -%}
    {{ optional_value(column_names, column, data_type) }}
    {%- if column | lower not in (column_names or []) %} as {{ column }}{% endif -%}
{%- endmacro %}

{#-
    Whether `relation` (a ref or source) holds no row, asked when the model compiles: a model
    whose input is empty in most builds (the base snapshots) filters it with `false`, so that
    Spark's optimizer drops the joins to the large tables it would otherwise read for nothing.
    False when it is not built (built_relation). A unit test of such a model overrides this
    macro (its given rows are not the warehouse's).
-#}
{% macro relation_is_empty(relation) %}
    {% set loaded = built_relation(relation) %}
    {% if loaded is none %}
        {{ return(false) }}
    {% endif %}
    {% set found = run_query('select 1 from ' ~ loaded ~ ' limit 1') %}
    {{ return(found.rows | length == 0) }}
{% endmacro %}

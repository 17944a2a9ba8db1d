{#-
    Whether `relation` (a ref) exists and has `column`: lets a shared model read a column of
    the change contract that only some sources give (e.g. `column_types`). False while dbt
    parses (nothing is built then) and when the relation is not built yet.
-#}
{% macro relation_has_column(relation, column) %}
    {% if not execute %}
        {{ return(false) }}
    {% endif %}
    {% set loaded = load_relation(relation) %}
    {% if loaded is none %}
        {{ return(false) }}
    {% endif %}
    {% set columns = adapter.get_columns_in_relation(loaded) %}
    {% set names = columns | map(attribute='name') | map('lower') | list %}
    {{ return(column | lower in names) }}
{% endmacro %}

{#-
    A column of the change contract that only some sources give: `column` when `relation`
    has it, else a typed null under that name.
-#}
{% macro optional_column(relation, column, data_type) -%}
    {%- if relation_has_column(relation, column) -%}
        {{ column }}
    {%- else -%}
        cast(null as {{ data_type }}) as {{ column }}
    {%- endif -%}
{%- endmacro %}

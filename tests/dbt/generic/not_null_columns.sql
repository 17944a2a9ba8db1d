{#-
    Fails once for each of `columns` that holds a null, with the number of rows that do. It is
    dbt's not_null for several columns in one query: a not_null test per column is a query per
    column, and on a view (staging, most marts) each of those runs the view's whole query
    again. Declared beside the model's other tests in its .yml; `config: where:` keeps working
    (dbt filters `model` before the test sees it).
-#}
{% test not_null_columns(model, columns) %}

with null_counts as (
    select
        {%- for column in columns %}
            count_if({{ column }} is null) as null_rows_{{ loop.index }}
            {{- "," if not loop.last }}
        {%- endfor %}
    from {{ model }}
)

select
    columns_with_nulls.column_name,
    columns_with_nulls.null_rows
from null_counts
    lateral view stack(
        {{ columns | length }},
        {%- for column in columns %}
            '{{ column }}', null_rows_{{ loop.index }}{{ "," if not loop.last }}
        {%- endfor %}
    ) columns_with_nulls as column_name, null_rows
where columns_with_nulls.null_rows > 0

{% endtest %}

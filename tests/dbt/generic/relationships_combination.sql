{#-
    The multi-column form of dbt's `relationships` test: fails on every row whose `columns`
    (all non-null) have no row with the same values in `to`, where the columns have the same
    names. E.g. a change whose (source_system, capture, transaction_id) is no transaction.
-#}
{% test relationships_combination(model, columns, to) %}

select
    {% for column in columns -%}
        child.{{ column }}{% if not loop.last %},{% endif %}
    {% endfor %}
from {{ model }} as child
left anti join {{ to }} as parent
    on
    {% for column in columns -%}
        {% if not loop.first %}and {% endif %}child.{{ column }} = parent.{{ column }}
    {% endfor %}
where
    {% for column in columns -%}
        {% if not loop.first %}and {% endif %}child.{{ column }} is not null
    {% endfor %}

{% endtest %}

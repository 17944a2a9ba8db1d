{#-
    Fails on every combination of `columns` that more than one row of the model holds (the
    dbt_utils test of the same idea; no packages can be installed here). Rows where any of the
    columns is null are compared too: a null in a key is a duplicate waiting to happen.
-#}
{% test unique_combination(model, columns) %}

select
    {{ columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1

{% endtest %}

{#-
    Fails on every row of the model where `expression` is not true (false or null), e.g.
    `change_count = insert_count + update_count + delete_count + truncate_count`.
-#}
{% test expression_is_true(model, expression) %}

select *
from {{ model }}
where not coalesce({{ expression }}, false)

{% endtest %}

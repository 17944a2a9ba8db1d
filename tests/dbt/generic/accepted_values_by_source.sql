{#-
    Fails on every row whose `column_name` is not one of the values its source accepts:
    `values_by_source` maps each source_system (the model's column of that name) to its
    values (e.g. var('logmart_file_kinds'), from the registry of sources, udfs/sources.py). A
    row of a source not in the map fails; a null value passes (as in accepted_values).
-#}
{% test accepted_values_by_source(model, column_name, values_by_source) %}

select source_system, {{ column_name }} as value_field
from {{ model }}
where
    {{ column_name }} is not null
    and not (
        {%- for system, values in values_by_source.items() %}
        (source_system = '{{ system }}' and {{ column_name }} in (
            {%- for value in values %}'{{ value }}'{{ ", " if not loop.last }}{% endfor -%}
        )){{ " or" if not loop.last }}
        {%- endfor %}
    )

{% endtest %}

{#- The row an image shows, as text, for backout integrity (rpt_backout_conflicts; the same
    rule as udfs/backout.py row_identity): 'key {...}' by the table's key columns when the
    image holds them all, else 'row {...}' by every column of the image; null for no image. -#}
{% macro backout_row_identity(image) -%}
    case
        when {{ image }} is null then null
        when
            size(key_columns) > 0
            and forall(key_columns, k -> map_contains_key({{ image }}, k))
            then concat(
                'key ',
                to_json(map_from_arrays(key_columns, transform(key_columns, k -> {{ image }}[k])))
            )
        else concat(
            'row ',
            to_json(
                map_from_arrays(
                    array_sort(map_keys({{ image }})),
                    transform(array_sort(map_keys({{ image }})), k -> {{ image }}[k])
                )
            )
        )
    end
{%- endmacro %}

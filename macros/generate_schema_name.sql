{#-
    Use a model's custom schema as-is (dbt's default prefixes the target schema, giving
    `marts_staging`), so the schemas are literally staging, intermediate, marts and seeds.
-#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}

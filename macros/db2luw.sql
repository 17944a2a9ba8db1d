{#- The Db2 LUW catalog export files a capture may hold, each a stg_db2luw__catalog_<name>
    model whose rows the reconciliation counts and the quarantine lists. -#}
{% macro db2luw_catalog_files() -%}
    {{ return(['tables', 'columns', 'datapartitions', 'datatypes']) }}
{%- endmacro %}

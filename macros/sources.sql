{#-
    The log sources whose models feed the shared marts. Each source <s> provides
    int_<s>_changes_standardized (the change contract of fct_changes),
    int_<s>_schema_changes_standardized and int_<s>_table_versions_standardized,
    int_<s>_records_quarantined (quarantine rows), int_<s>_records_accounted (where each
    record read ended up), int_<s>_records_read (every record read, for reconciliation),
    int_<s>_file_problems (its own rules on a capture's files) and
    int_<s>_transaction_records (fct_transactions): docs/adding-a-source.md, checked by
    tests/test_sources_contract.py.

    The sources are those registered (udfs/sources.py, REGISTERED): the build passes their
    folders as the var `logmart_source_folders` (dbt_project.yml holds the same default). A
    build enables only the sources with files in the raw folder: `logmart build` sets the
    var `logmart_sources` (udfs/pipeline.py), and dbt_project.yml enables each source's models
    by it, so a source with nothing to read costs nothing. Without the var (a plain
    `logmart dbt docs generate`) every source is in the graph.
-#}
{% macro logmart_sources() %}
    {%- set every = var('logmart_source_folders') -%}
    {%- set enabled = var('logmart_sources', every) -%}
    {%- if enabled is string -%}{%- set enabled = every -%}{%- endif -%}  {#- sqlfluff's var() #}
    {{ return(every | select('in', enabled) | list) }}
{% endmacro %}

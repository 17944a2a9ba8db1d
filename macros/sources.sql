{#-
    The log sources whose models feed the shared marts. Each source <s> provides
    int_<s>_changes_standardized (the change contract of fct_changes),
    int_<s>_schema_changes_standardized and int_<s>_table_versions_standardized,
    int_<s>_records_quarantined (quarantine rows), int_<s>_records_accounted (where each
    record read ended up), int_<s>_records_read (every record read, for reconciliation),
    int_<s>_file_problems (its own rules on a capture's files) and
    int_<s>_transaction_records (fct_transactions): docs/adding-a-source.md, checked by
    tests/test_sources_contract.py.

    The sources are those registered (udfs/sources.py, REGISTERED). dbt cannot import Python,
    so logmart passes what dbt needs of the registry as vars on every dbt command it runs
    (udfs.sources.dbt_vars, added by udfs.dbt_runner.dbt_args): `logmart_source_folders` and
    the others read through logmart_registry(). dbt_project.yml names no source. A build
    enables only the sources with files in the raw folder: `logmart build` sets the var
    `logmart_sources` (udfs/pipeline.py), and each source's models say
    `config(enabled=logmart_source_enabled('<folder>'))`, so a source with nothing to read
    costs nothing. Without that var (`logmart dbt docs generate`) every source is in the graph.
-#}
{% macro logmart_sources() %}
    {%- set every = logmart_registry('logmart_source_folders') -%}
    {%- set enabled = var('logmart_sources', every) -%}
    {%- if enabled is string -%}{%- set enabled = every -%}{%- endif -%}  {#- sqlfluff's var() #}
    {{ return(every | select('in', enabled) | list) }}
{% endmacro %}

{#- Whether the models of source folder `folder` are in this build's graph (the config of every
    model in models/*/<folder>/). -#}
{% macro logmart_source_enabled(folder) %}
    {{ return(folder in logmart_sources()) }}
{% endmacro %}

{#- The registry var `name` (udfs.sources.dbt_vars), which logmart passes on every dbt command;
    a dbt run without it was not started by logmart. -#}
{% macro logmart_registry(name) %}
    {%- set value = var(name, none) -%}
    {%- if value is none -%}
        {{ exceptions.raise_compiler_error(
            "dbt has no var " ~ name ~ ": logmart passes the registry of sources "
            ~ "(udfs/sources.py) as vars on every dbt command it runs. Run dbt as "
            ~ "`logmart dbt <command>` (or `logmart build`), not as a plain `dbt` command."
        ) }}
    {%- endif -%}
    {{ return(value) }}
{% endmacro %}

{#- Whether this build's graph has the base snapshots' edge into fct_row_history. `logmart build`
    sets the var `logmart_snapshots` false when the raw folder holds no snapshot or side file
    and the build runs no unit test (udfs/pipeline.py): fct_row_history then does not ref
    int_logmart_snapshots_resolved, and starts as soon as the changes are settled instead of
    behind the transactions and table versions that model reads. Without the var (`logmart
    dbt docs generate`, a unit test's given snapshots) the edge is there. -#}
{% macro logmart_has_snapshots() %}
    {%- set has = var('logmart_snapshots', true) -%}
    {{ return(has is string or has) }}  {#- sqlfluff's var() renders a string: the edge #}
{% endmacro %}

-- LT02 off: these macros are fragments of the models that call them, indented as they read
-- there; sqlfluff renders their bodies on their own and misjudges the indents.
-- noqa: disable=LT02
{#-
    Incremental models by capture (docs/architecture.md "Incremental builds").

    Such a model is `incremental` with `insert_overwrite`, partitioned by
    `capture_fingerprint`: the fingerprint of the row's capture (stg_logmart__captures: its
    decoded files, settings and logmart's code) combined with the dbt vars the model decodes
    with. A build computes only the captures whose fingerprint is not yet a partition (new or
    changed captures) and its pre-hook drops the partitions whose fingerprint is no longer
    current (a capture that changed or is gone), so the table always equals a full rebuild.

        {{ config(
            materialized='incremental',
            incremental_strategy='insert_overwrite',
            partition_by=['capture_fingerprint'],
            on_schema_change='fail',
            pre_hook="{{ drop_stale_capture_partitions('db2luw', 'settings') }}"
        ) }}
        ... from records where {{ captures_to_build_filter('db2luw', 'settings') }}
        ... inner join ({{ captures_to_build('db2luw', 'settings') }}) as captures using (capture)

    `settings` is the text of the vars the model's output depends on.
-#}

{% macro capture_fingerprint_expression(settings) -%}
    sha2(concat(fingerprint, '|', {{ logmart_string_literal(settings) }}), 256)
{%- endmacro %}

{#- The captures of `source_system` to compute: all of them, or on an incremental run those
    whose fingerprint is not a partition of the model yet. Columns capture, capture_fingerprint. -#}
{% macro captures_to_build(source_system, settings) -%}
    select
        capture,
        {{ capture_fingerprint_expression(settings) }} as capture_fingerprint
    from {{ ref('stg_logmart__captures') }}
    where
        source_system = '{{ source_system }}'
        {%- if execute and is_incremental() %}
            {#- the partitions the model has: the table's partition list, a metastore call (a
                `select distinct` of the partition column opens every file of the table: 5 s
                of a new capture's build at 1M records) #}
            {%- set built = capture_partitions(this) %}
            {%- if built %}
            and {{ capture_fingerprint_expression(settings) }} not in (
                {%- for fingerprint in built -%}
                    {{ logmart_string_literal(fingerprint) }}{{ ", " if not loop.last }}
                {%- endfor -%}
            )
            {%- endif %}
        {%- endif %}
{%- endmacro %}

{#- The capture fingerprints of `relation`'s partitions (`capture_fingerprint=...`). -#}
{% macro capture_partitions(relation) -%}
    {%- set fingerprints = [] -%}
    {%- for partition in run_query('show partitions ' ~ relation).columns[0].values() -%}
        {%- do fingerprints.append(partition.split('=', 1)[1]) -%}
    {%- endfor -%}
    {{- return(fingerprints) -}}
{%- endmacro %}

{#- A predicate on `column` (a capture) keeping the captures to compute, as literals so that
    the scan of the raw Parquet files skips the others (row group statistics). -#}
{% macro captures_to_build_filter(source_system, settings, column='capture') -%}
    {%- if execute and is_incremental() -%}
        {%- set captures = run_query(captures_to_build(source_system, settings)) -%}
        {%- set names = captures.columns[0].values() | list -%}
        {%- if names | length == 0 -%}
            false
        {%- else -%}
            {{ column }} in (
                {%- for name in names -%}
                    {{ logmart_string_literal(name) }}{{ ", " if not loop.last }}
                {%- endfor -%}
            )
        {%- endif -%}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{#- The fingerprints of this model's partitions that are no longer those of a current capture
    of `source_system` (a capture that changed or is gone): what the pre-hook drops. Asked at
    compile time too, before the pre-hook runs (the Log Master settlement settles every
    partition again when one goes). -#}
{% macro stale_capture_partitions(source_system, settings) %}
    {%- set stale = [] -%}
    {%- if execute and is_incremental() -%}
        {%- set current_sql -%}
            select {{ capture_fingerprint_expression(settings) }}
            from {{ ref('stg_logmart__captures') }}
            where source_system = '{{ source_system }}'
        {%- endset -%}
        {%- set current = run_query(current_sql).columns[0].values() | list -%}
        {%- for fingerprint in capture_partitions(this) -%}
            {%- if fingerprint not in current -%}
                {%- do stale.append(fingerprint) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{- return(stale) -}}
{% endmacro %}

{#- Pre-hook: drop the partitions whose fingerprint is no longer that of a current capture.
    Runs its statements itself and renders nothing. -#}
{% macro drop_stale_capture_partitions(source_system, settings) %}
    {%- for fingerprint in stale_capture_partitions(source_system, settings) -%}
        {%- do run_query(
            'alter table ' ~ this ~ ' drop if exists partition (capture_fingerprint = '
            ~ logmart_string_literal(fingerprint) ~ ')'
        ) -%}
    {%- endfor -%}
{% endmacro %}

{#- A Spark SQL string literal of `text`. -#}
{% macro logmart_string_literal(text) -%}
    '{{ text | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{#- The dbt vars a source's decoded rows depend on, as one text (part of the fingerprint of an
    incremental model: changing one recomputes every capture of that source). Each source
    declares them (udfs/<folder>/registration.py, DbtVar); logmart passes them as the registry
    var logmart_decode_vars (macros/sources.sql). -#}
{% macro decode_settings(source) -%}
    {%- set names = logmart_registry('logmart_decode_vars')[source] -%}
    {%- set values = [] -%}
    {%- for name in names -%}
        {%- do values.append(name ~ '=' ~ var(name, '')) -%}
    {%- endfor -%}
    {{- return(values | join(';')) -}}
{%- endmacro %}

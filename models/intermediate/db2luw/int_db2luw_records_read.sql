-- Every record read from a Db2 LUW capture (log records and catalog export rows), decoded or
-- not: the left side of the reconciliation.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

log_records as (
    select
        source_system,
        capture,
        source_file,
        raw_offset
    from {{ ref('stg_db2luw__log_records') }}
),

catalog_rows as (
    {% for catalog in db2luw_catalog_files() -%}
        select
            source_system,
            capture,
            source_file,
            raw_offset
        from {{ ref('stg_db2luw__catalog_' ~ catalog) }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from log_records
union all
select * from catalog_rows

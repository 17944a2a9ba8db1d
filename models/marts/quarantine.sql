-- Every record logmart could not decode, every source: where it is (file, offset), its
-- bytes, which stage rejected it and why. The build goes on without it.
with

quarantined as (
    {% for source in logmart_sources() -%}
        select
            source_system,
            capture,
            source_file,
            raw_offset,
            record_length,
            record_bytes,
            record_type,
            stage,
            reason
        from {{ ref('int_' ~ source ~ '_records_quarantined') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select * from quarantined

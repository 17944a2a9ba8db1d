-- Per file: records read = records decoded + records quarantined. "Decoded" counts records
-- found in an output (a control record, a row change, a catalog event), independently of the
-- raw count, so a record lost on the way breaks the equation (and the dbt test).
with

files as (
    select * from {{ ref('stg_logmart__files') }}
),

records_read as (
    select
        source_system,
        source_file,
        count(*) as records_read
    from (
        {% for source in logmart_sources() -%}
            select
                source_system,
                source_file
            from {{ ref('int_' ~ source ~ '_records_read') }}
            {% if not loop.last %}union all{% endif %}
        {% endfor %}
    ) as raw_records
    group by source_system, source_file
),

accounted as (
    select
        source_system,
        source_file,
        count(distinct case when outcome != 'quarantined' then raw_offset end)
            as records_decoded,
        count(distinct case when outcome = 'quarantined' then raw_offset end)
            as records_quarantined
    from (
        {% for source in logmart_sources() -%}
            select
                source_system,
                source_file,
                raw_offset,
                outcome
            from {{ ref('int_' ~ source ~ '_records_accounted') }}
            {% if not loop.last %}union all{% endif %}
        {% endfor %}
    ) as outcomes
    group by source_system, source_file
),

reconciled as (
    select
        files.source_system,
        files.capture,
        files.source_file,
        files.file_kind,
        files.size_bytes,
        coalesce(records_read.records_read, 0) as records_read,
        coalesce(accounted.records_decoded, 0) as records_decoded,
        coalesce(accounted.records_quarantined, 0) as records_quarantined
    from files
    left join records_read
        on
            files.source_system = records_read.source_system
            and files.source_file = records_read.source_file
    left join accounted
        on
            files.source_system = accounted.source_system
            and files.source_file = accounted.source_file
)

select
    *,
    records_read = records_decoded + records_quarantined as is_reconciled
from reconciled

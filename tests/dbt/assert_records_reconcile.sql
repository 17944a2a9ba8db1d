{{ config(tags=['data_check']) }}
-- Every record read is accounted for exactly once. Fails with one row per problem:
--   * a file whose records_read != records_decoded + records_quarantined (reconciliation);
--   * a record found both in an output and in quarantine (records_accounted);
--   * a record read but found in no output, or found in an output but never read.
-- Each row names the file, and the record's offset where there is one.
with

unreconciled_files as (
    select
        source_system,
        source_file,
        cast(null as bigint) as raw_offset,
        concat(
            -- (a null count would make the whole text null)
            'records read ', coalesce(cast(records_read as string), 'null'),
            ' != decoded ', coalesce(cast(records_decoded as string), 'null'),
            ' + quarantined ', coalesce(cast(records_quarantined as string), 'null')
        ) as problem
    from {{ ref('reconciliation') }}
    where
        records_read != records_decoded + records_quarantined
        or records_read is null
        or records_decoded is null
        or records_quarantined is null
),

accounted as (
    {% for source in logmart_sources() -%}
        select
            source_system,
            source_file,
            raw_offset,
            outcome
        from {{ ref('int_' ~ source ~ '_records_accounted') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

records_read as (
    {% for source in logmart_sources() -%}
        select
            source_system,
            source_file,
            raw_offset
        from {{ ref('int_' ~ source ~ '_records_read') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

decoded_and_quarantined as (
    select
        source_system,
        source_file,
        raw_offset,
        concat(
            'record both decoded (',
            array_join(array_sort(array_remove(collect_set(outcome), 'quarantined')), ', '),
            ') and quarantined'
        ) as problem
    from accounted
    group by source_system, source_file, raw_offset
    having
        count_if(outcome = 'quarantined') > 0
        and count_if(outcome != 'quarantined') > 0
),

read_not_accounted as (
    select
        records_read.source_system,
        records_read.source_file,
        records_read.raw_offset,
        'record read but found in no output and not quarantined' as problem
    from records_read
    left anti join accounted
        on
            records_read.source_file = accounted.source_file
            and records_read.raw_offset = accounted.raw_offset
),

accounted_not_read as (
    select
        accounted.source_system,
        accounted.source_file,
        accounted.raw_offset,
        concat('record found as ', accounted.outcome, ' but never read') as problem
    from accounted
    left anti join records_read
        on
            accounted.source_file = records_read.source_file
            and accounted.raw_offset = records_read.raw_offset
)

select * from unreconciled_files
union all
select * from decoded_and_quarantined
union all
select * from read_not_accounted
union all
select * from accounted_not_read

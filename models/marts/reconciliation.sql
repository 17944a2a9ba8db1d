-- Per file: records read = records decoded + records quarantined. "Decoded" counts records
-- found in an output (a control record, a row change, a catalog event), independently of the
-- raw count, so a record lost on the way breaks the equation (and the dbt test). `problem`
-- says what is wrong with the file or its capture as a whole (a file the capture lacks, a
-- file no record could be read from), which no record can carry; a copy of another file
-- (`duplicate_of`) reads no record of its own and is not a problem. A source's own rules
-- (what makes its capture incomplete) are in its int_<source>_file_problems model.
with

files as (
    select * from {{ ref('stg_logmart__files') }}
),

source_problems as (
    -- each source's own rules (int_<source>_file_problems: a Log Master data set the control
    -- file lists and the extract lacks, a Db2 LUW .log file missing from the numbering, ...)
    {% for source in logmart_sources() -%}
        select
            source_system,
            source_file,
            problem
        from {{ ref('int_' ~ source ~ '_file_problems') }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
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
        files.duplicate_of,
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
),

problems as (
    select
        reconciled.*,
        case
            when reconciled.file_kind in ('ignored', 'other')
                then 'not read: logmart reads only the files docs/operations.md lists here'
            -- a base snapshot is read by the snapshot loader: its problems are in quarantine
            when reconciled.file_kind in ('snapshot', 'snapshot_side') then null
            -- a byte-for-byte copy is read once, from the file it copies: not a problem
            when reconciled.duplicate_of is not null then null
            when
                reconciled.records_read = 0
                and reconciled.size_bytes > 0
                and reconciled.file_kind != 'empty'
                then concat(
                    'no record could be read from its ', reconciled.size_bytes, ' bytes: ',
                    'check that the file is complete and of the kind its name says'
                )
            else source_problems.problem
        end as problem
    from reconciled
    left join source_problems
        on
            reconciled.source_system = source_problems.source_system
            and reconciled.source_file = source_problems.source_file
)

select
    *,
    records_read = records_decoded + records_quarantined as is_reconciled
from problems

{{ config(tags=['data_check'], severity='warn') }}
-- A warning, not a failure: records that could not be decoded are in marts.quarantine (the
-- build goes on without them; `logmart build --strict` fails on them instead). One row per
-- file with quarantined records, saying how many, at which stages and what to do.
select
    source_system,
    source_file,
    count(*) as records_quarantined,
    array_join(array_sort(collect_set(stage)), ', ') as quarantine_stages,
    min(what_to_do) as what_to_do
from {{ ref('quarantine') }}
group by source_system, source_file

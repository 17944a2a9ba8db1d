-- Every solidDB transaction its records show (int_soliddb_records_grouped), one row per
-- transaction and capture, in the columns fct_transactions takes from every source. SYS_LOG
-- has no commit time and no user.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
{{ config(materialized='view') }}

select distinct
    source_system,
    log_stream,
    capture,
    transaction_id,
    transaction_disposition,
    cast(null as timestamp) as commit_ts,
    commit_position,
    cast(null as string) as authid
from {{ ref('int_soliddb_records_grouped') }}
where transaction_id is not null

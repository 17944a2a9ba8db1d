-- Every Db2 LUW transaction its commit, abort and row records show
-- (int_db2luw_transactions_resolved), in the columns fct_transactions takes from every
-- source: a transaction known only by its abort record is still a transaction.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
{{ config(materialized='view') }}

select
    'db2luw' as source_system,
    {{ log_stream('capture') }} as log_stream,
    capture,
    tid as transaction_id,
    transaction_disposition,
    commit_ts,
    commit_position,
    authid
from {{ ref('int_db2luw_transactions_resolved') }}

-- Log Master lists no transaction records of its own: its transactions are those of its row
-- changes (fct_changes) and catalog changes (fct_schema_changes). The contract's columns,
-- no rows.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
{{ config(materialized='view') }}

select
    cast(null as string) as source_system,
    cast(null as string) as log_stream,
    cast(null as string) as capture,
    cast(null as string) as transaction_id,
    cast(null as string) as transaction_disposition,
    cast(null as timestamp) as commit_ts,
    cast(null as string) as commit_position,
    cast(null as string) as authid
where false

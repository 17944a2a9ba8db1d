-- The rows changed most often, every source: per table, the ten rows (by key, or by value hash
-- when the table has no key) with the most committed versions in fct_row_history, over each
-- log stream (all its captures: a row's history runs across them).
with

versions as (
    select * from {{ ref('fct_row_history') }}
    where valid_from_change_id is not null
),

per_row as (
    select
        source_system,
        log_stream,
        table_schema,
        table_name,
        row_key,
        row_key_kind,
        count(*) as version_count,
        min(valid_from_position) as first_position,
        max(valid_from_position) as last_position,
        min(valid_from_ts) as first_ts,
        max(valid_from_ts) as last_ts,
        max_by(row_image, valid_from_position) as last_image
    from versions
    group by source_system, log_stream, table_schema, table_name, row_key, row_key_kind
),

ranked as (
    select
        *,
        row_number() over (
            partition by source_system, log_stream, table_schema, table_name
            order by version_count desc, row_key asc
        ) as rank_in_table
    from per_row
)

select * from ranked
where rank_in_table <= 10

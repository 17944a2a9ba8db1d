{{ config(materialized='view') }}
-- One row per row change, every source: what changed (before/after images), in which
-- transaction, its disposition and its place in commit order.
-- `order by commit_position, change_seq` over committed changes is the log order of the work.
-- `column_types` is optional in the contract: null for a source whose model lacks it; so are
-- `before_unavailable` / `after_unavailable` (udfs/unavailable.py: the columns of each image
-- whose value the log does not carry, and why; such a column's value in the image is null).
-- `op` / `_change_type` name each change as Debezium and Delta's change data feed do.
-- A transaction is (source_system, log_stream, transaction_id): it may span captures.
with

changes as (
    {% for source in logmart_sources() -%}
        {%- set standardized = ref('int_' ~ source ~ '_changes_standardized') %}
        {#- its columns, looked up once (one describe) #}
        {%- set columns = relation_column_names(standardized) -%}
        select
            change_id,
            source_system,
            capture,
            table_schema,
            table_name,
            operation,
            change_kind,
            source_change_type,
            before_image,
            after_image,
            key_columns,
            transaction_id,
            disposition,
            transaction_disposition,
            commit_position,
            change_seq,
            log_position,
            change_ts,
            begin_ts,
            commit_ts,
            authid,
            plan_name,
            correlation_id,
            connection_id,
            connection_type,
            decode_warnings,
            raw_file,
            raw_offset,
            {{ optional_column(columns, 'column_types', 'map<string,string>') }},
            {{ optional_column(columns, 'generated_by', 'string') }},
            {{ optional_column(columns, 'incomplete_transaction', 'boolean') }},
            {{ optional_column(columns, 'incomplete_dependency', 'boolean') }},
            {{ optional_column(columns, 'has_compensation', 'boolean') }},
            {{ optional_column(columns, 'before_unavailable', 'map<string,string>') }},
            {{ optional_column(columns, 'after_unavailable', 'map<string,string>') }},
            -- a truncate's scope: 'table', or 'partition' with its key range (Log Master DM
            -- of LOAD REPLACE PART); a source without the column: 'table' for its truncates
            coalesce(
                {{ optional_value(columns, 'truncate_scope', 'string') }},
                if(operation = 'truncate', 'table', null)
            ) as truncate_scope,
            {{ optional_column(columns, 'partition_number', 'int') }},
            {{ optional_column(columns, 'partition_key_columns', 'array<string>') }},
            {{ optional_column(columns, 'partition_low_key', 'map<string,string>') }},
            {{ optional_column(columns, 'partition_high_key', 'map<string,string>') }}
        from {{ standardized }}
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
)

select
    *,
    {{ log_stream('capture') }} as log_stream,
    case operation
        when 'insert' then 'c'
        when 'update' then 'u'
        when 'delete' then 'd'
        when 'truncate' then 't'
    end as op,
    case
        when change_kind = 'update_before_only' then 'update_preimage'
        when operation = 'update' then 'update_postimage'
        else operation
    end as _change_type
from changes

-- Decoded solidDB row changes in logmart's change contract (see fct_changes). Changes of
-- CAPTURE_OFF transactions are left out (they must not be propagated; int_soliddb_changes_paired
-- keeps them), as are changes that could not be decoded (quarantined). solidDB logs no times,
-- users or programs: those columns are null.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

changes as (
    select * from {{ ref('int_soliddb_changes_paired') }}
    where decode_error is null and not is_capture_off_transaction
),

standardized as (
    select
        -- identity and provenance
        concat('soliddb:', raw_file, ':', raw_offset) as change_id,
        source_system,
        capture,
        raw_file,
        raw_offset,
        raw_records,
        -- what changed
        table_schema,
        table_name,
        operation,
        case
            when pairing = 'before_only' then 'update_before_only'
            when pairing = 'after_only' then 'update_after_only'
            else operation
        end as change_kind,
        source_change_type,
        before_image,
        after_image,
        coalesce(key_columns, cast(array() as array<string>)) as key_columns,
        column_types,
        decode_warnings,
        -- transaction (TRXID, "#n" for its n-th incarnation when TRXIDs restart)
        transaction_id,
        transaction_disposition as disposition,
        transaction_disposition,
        -- order: committed transactions by their COMMIT's LOGADDR; inside one, by LOGADDR
        commit_position,
        log_position,
        cast(null as timestamp) as change_ts,
        cast(null as timestamp) as begin_ts,
        cast(null as timestamp) as commit_ts,
        -- who (not in SYS_LOG)
        cast(null as string) as authid,
        cast(null as string) as plan_name,
        cast(null as string) as correlation_id,
        cast(null as string) as connection_id,
        cast(null as string) as connection_type,
        change_seq,
        -- values the log does not carry (udfs/unavailable.py, udfs/soliddb/records.py
        -- UNAVAILABLE_REASONS): a column added after the row was written ('not_in_record')
        {%- for image in ['before', 'after'] %}
            case
                when {{ image }}_image is not null
                    then transform_values(
                        map_filter(
                            coalesce({{ image }}_null_reasons, map()),
                            (column_name, reason) -> reason = 'not_in_record'
                        ),
                        (column_name, reason) -> 'added_after_row'
                    )
            end as {{ image }}_unavailable{% if not loop.last %},{% endif %}
        {%- endfor %}
    from changes
)

select * from standardized

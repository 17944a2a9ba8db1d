-- Decoded Log Master row changes in logmart's change contract (see fct_changes).
-- A UR is settled over every extract of its log stream: an extract that ends while the UR is
-- open logs its records without UORDISP; the next extract's records of the UR carry UORDISP
-- and the commit point, and settle the records of both.
with

decoded as (
    select
        *,
        {{ log_stream('capture') }} as log_stream,
        case
            when memberid > 0 then concat(uorid, '-M', memberid)
            else uorid
        end as transaction_id
    from {{ ref('int_logmaster_row_images_decoded') }}
    where decode_error is null
),

transactions as (
    select
        log_stream,
        transaction_id,
        case
            when count_if(uordisp = 'C') > 0 then 'committed'
            when count_if(uordisp = 'A') > 0 then 'aborted'
            else 'in_flight'
        end as transaction_disposition,
        max(
            case
                when uordisp = 'C' and not {{ is_zero_position('uorcommitlrsn') }}
                    then uorcommitlrsn
            end
        ) as commit_position,
        min(uortimestamp) as begin_ts,
        max(uorcommittimestamp) as commit_ts
    from decoded
    group by log_stream, transaction_id
),

change_types as (
    select * from {{ ref('logmaster_change_types') }}
),

standardized as (
    select
        -- identity and provenance
        concat('db2zos:', decoded.raw_file, ':', decoded.raw_offset) as change_id,
        decoded.source_system,
        decoded.capture,
        decoded.raw_file,
        decoded.raw_offset,
        decoded.raw_records,
        -- what changed
        coalesce(decoded.table_schema, decoded.tableowner) as table_schema,
        coalesce(decoded.table_name, decoded.tablename) as table_name,
        change_types.operation,
        change_types.change_kind,
        decoded.change_type as source_change_type,
        decoded.before_image,
        decoded.after_image,
        decoded.key_columns,
        decoded.column_types,
        decoded.decode_warnings,
        -- transaction (URID = RBA of the UR's first record; qualified by member in data
        -- sharing), settled over the log stream
        decoded.log_stream,
        decoded.transaction_id,
        case decoded.logrecdisp
            when 'A' then 'aborted'
            when 'S' then 'savepoint_rollback'
            when 'O' then 'reversed'
            else transactions.transaction_disposition
        end as disposition,
        transactions.transaction_disposition,
        -- order: committed URs by UORCOMMITLRSN; inside one, LOGLRSN then LOGRBA
        transactions.commit_position,
        concat(decoded.loglrsn, decoded.logrba) as log_position,
        decoded.log_timestamp as change_ts,
        transactions.begin_ts,
        transactions.commit_ts,
        -- who
        decoded.authid,
        decoded.plan as plan_name,
        decoded.correlationid as correlation_id,
        decoded.connectid as connection_id,
        decoded.connectiontype as connection_type
    from decoded
    inner join change_types
        on decoded.change_type = change_types.change_type
    inner join transactions
        on
            decoded.log_stream = transactions.log_stream
            and decoded.transaction_id = transactions.transaction_id
),

sequenced as (
    select
        *,
        row_number() over (
            partition by source_system, log_stream, transaction_id
            order by log_position, raw_file, raw_offset
        ) as change_seq
    from standardized
)

select * from sequenced

-- Decoded Log Master row changes in logmart's change contract (see fct_changes).
with

decoded as (
    select * from {{ ref('int_logmaster_row_images_decoded') }}
    where decode_error is null
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
        -- transaction (URID = RBA of the UR's first record; qualified by member in data sharing)
        case
            when decoded.memberid > 0 then concat(decoded.uorid, '-M', decoded.memberid)
            else decoded.uorid
        end as transaction_id,
        case decoded.logrecdisp
            when 'A' then 'aborted'
            when 'S' then 'savepoint_rollback'
            when 'O' then 'reversed'
            else
                case decoded.uordisp
                    when 'C' then 'committed'
                    when 'A' then 'aborted'
                    else 'in_flight'
                end
        end as disposition,
        case decoded.uordisp
            when 'C' then 'committed'
            when 'A' then 'aborted'
            else 'in_flight'
        end as transaction_disposition,
        -- order: committed URs by UORCOMMITLRSN; inside one, LOGLRSN then LOGRBA
        case
            when decoded.uordisp = 'C' and not {{ is_zero_position('decoded.uorcommitlrsn') }}
                then decoded.uorcommitlrsn
        end as commit_position,
        concat(decoded.loglrsn, decoded.logrba) as log_position,
        decoded.log_timestamp as change_ts,
        decoded.uortimestamp as begin_ts,
        decoded.uorcommittimestamp as commit_ts,
        -- who
        decoded.authid,
        decoded.plan as plan_name,
        decoded.correlationid as correlation_id,
        decoded.connectid as connection_id,
        decoded.connectiontype as connection_type
    from decoded
    inner join change_types
        on decoded.change_type = change_types.change_type
),

sequenced as (
    select
        *,
        row_number() over (
            partition by source_system, capture, transaction_id
            order by log_position, raw_file, raw_offset
        ) as change_seq
    from standardized
)

select * from sequenced

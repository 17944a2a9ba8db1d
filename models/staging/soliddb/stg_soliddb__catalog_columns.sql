-- SYS_COLUMNS rows of each capture's catalog export, typed. DATA_TYPE and NULLABLE stay as
-- exported (a name or an ODBC number; YES/NO, Y/N, 1/0): the layout function reads them.
{{ config(enabled=logmart_source_enabled('soliddb')) }}
with

source as (
    select * from {{ source('soliddb', 'catalog_columns') }}
),

renamed as (
    select
        -- provenance
        source_system,
        capture,
        source_file,
        raw_offset,
        record_length,
        record_bytes,
        decode_error,
        decode_error is null as is_decoded,
        -- column
        cast(rel_id as bigint) as rel_id,
        column_name,
        cast(column_number as int) as column_number,
        -- type
        data_type,
        data_type_number,
        cast(char_max_length as bigint) as char_max_length,
        cast(numeric_precision as int) as numeric_precision,
        cast(numeric_scale as int) as numeric_scale,
        nullable,
        -- solidDB's hidden system columns hold no user data (left out of layouts)
        column_name in ('ROWID', 'ROWVER') as is_hidden
    from source
)

select * from renamed

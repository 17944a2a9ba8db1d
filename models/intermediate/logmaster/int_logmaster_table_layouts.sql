-- One row per table version of an extract (DTBI) with its row image layout (DLCI): full
-- names (README interpretation 9), column names and key columns in order, and the layout
-- JSON the row image decoder reads.
with

tables as (
    select * from {{ ref('stg_logmaster__dtbi') }}
),

table_columns as (
    select * from {{ ref('stg_logmaster__dlci') }}
),

code_pages as (
    select
        capture,
        min(ebcdicsbcsccsid) as ebcdic_ccsid
    from {{ ref('stg_logmaster__xtyp') }}
    group by capture
),

column_lists as (
    select
        capture,
        dbid,
        tbobid,
        sequencenumber,
        array_sort(
            collect_list(
                named_struct(
                    'num', llcolumnnum,
                    'name', columnname,
                    'type', llcolumntype,
                    'len', llcolumnlen,
                    'scale', llscale,
                    'nulls', llnulls,
                    'subtype', llcolumnsubtype,
                    'pos', llcolumnpos,
                    'keyseq', keyseq
                )
            )
        ) as layout_columns
    from table_columns
    group by capture, dbid, tbobid, sequencenumber
),

layouts as (
    select
        tables.capture,
        tables.dbid,
        tables.psid,
        tables.tbobid,
        tables.sequencenumber,
        tables.createrba,
        tables.droprba,
        tables.shortowner,
        tables.shortname,
        tables.encodingscheme,
        tables.lobsincluded,
        count(*) over (
            partition by tables.capture, tables.dbid, tables.tbobid
        ) as version_count,
        case
            when tables.has_untranslatable_owner and tables.unitableowner != ''
                then tables.unitableowner
            else tables.tableowner
        end as table_schema,
        case
            when tables.has_untranslatable_name and tables.unitablename != ''
                then tables.unitablename
            else tables.tablename
        end as table_name,
        transform(column_lists.layout_columns, c -> c.name) as column_names,
        transform(
            array_sort(
                transform(
                    filter(column_lists.layout_columns, c -> c.keyseq > 0),
                    c -> named_struct('keyseq', c.keyseq, 'name', c.name)
                )
            ),
            k -> k.name
        ) as key_columns,
        -- the compact layout text udfs/logmaster/rowimage.py parse_layout reads
        case
            when size(column_lists.layout_columns) > 0
                then concat_ws(
                    '|',
                    tables.encodingscheme,
                    coalesce(
                        nullif('{{ var("logmaster_ebcdic_codepage") }}', ''),
                        concat('ccsid:', coalesce(code_pages.ebcdic_ccsid, 37))
                    ),
                    '{{ var("logmaster_ascii_codepage") }}',
                    '{{ var("logmaster_float_format") }}',
                    coalesce(tables.lobsincluded, 'Y'),
                    concat_ws(
                        ';',
                        transform(
                            column_lists.layout_columns,
                            c -> concat_ws(
                                ',',
                                c.num, c.type, c.len, c.scale, c.nulls,
                                coalesce(c.subtype, ''), coalesce(cast(c.pos as string), '')
                            )
                        )
                    )
                )
        end as layout_text
    from tables
    left join column_lists
        on
            tables.capture = column_lists.capture
            and tables.dbid = column_lists.dbid
            and tables.tbobid = column_lists.tbobid
            and tables.sequencenumber = column_lists.sequencenumber
    left join code_pages
        on tables.capture = code_pages.capture
)

select * from layouts

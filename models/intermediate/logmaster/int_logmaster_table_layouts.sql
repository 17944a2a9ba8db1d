-- One row per table version of an extract (DTBI) with its row image layout (DLCI): full
-- names (README interpretation 9), column names and key columns in order, and the layout
-- text the row image decoder reads, and its digest.
{{ config(enabled=logmart_source_enabled('logmaster')) }}
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
        min(ebcdicsbcsccsid) as ebcdic_ccsid,
        -- the mixed SBCS/DBCS code pages logmart decodes (udfs/values.py ebcdic_mixed_codec)
        min(
            case
                when ebcdicmixedccsid in (930, 5026, 939, 5035, 1390, 1399, 933, 935, 937)
                    then ebcdicmixedccsid
            end
        ) as ebcdic_mixed_ccsid
    from {{ ref('stg_logmaster__xtyp') }}
    group by capture
),

-- the extract's DLDS DATEFORMAT when it is not DB2I (udfs/logmaster/batch_rows.py does the same)
date_formats as (
    select
        capture,
        nullif(min(nullif(upper(trim(dateformat)), '')), 'DB2I') as dateformat
    from {{ ref('stg_logmaster__dlds') }}
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
        tables.xmlincluded,
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
        -- each column's SQL data type, as Db2 DDL spells it (literals of UNDO/REDO SQL);
        -- graphic data of EBCDIC/ASCII tables is shown as hex: `CCSID EBCDIC|ASCII` says so
        transform(
            column_lists.layout_columns,
            c -> concat(
                case c.type
                    when 'INT'
                        then
                            case c.len
                                when 2 then 'SMALLINT' when 8 then 'BIGINT' else 'INTEGER'
                            end
                    when 'DEC' then concat('DECIMAL(', 2 * c.len - 1, ',', c.scale, ')')
                    when 'FLOT' then case c.len when 4 then 'REAL' else 'DOUBLE' end
                    when 'DTTM' then 'TIMESTAMP'
                    when 'DTTZ' then 'TIMESTAMP WITH TIME ZONE'
                    when 'CHAR' then concat('CHAR(', c.len, ')')
                    when 'VCHR' then concat('VARCHAR(', c.len, ')')
                    when 'LVCH' then 'LONG VARCHAR'
                    when 'CLOB' then concat('CLOB(', c.len, ')')
                    when 'BLOB' then concat('BLOB(', c.len, ')')
                    when 'ROWI' then 'ROWID'
                    when 'GRPH' then concat('GRAPHIC(', cast(c.len / 2 as int), ')')
                    when 'VGRF' then concat('VARGRAPHIC(', cast(c.len / 2 as int), ')')
                    when 'LVGR' then 'LONG VARGRAPHIC'
                    when 'DBCL' then concat('DBCLOB(', cast(c.len / 2 as int), ')')
                    else c.type  -- DATE, TIME
                end,
                case
                    when c.subtype = 'B' and c.type in ('CHAR', 'VCHR', 'LVCH')
                        then ' FOR BIT DATA'
                    when
                        c.type in ('GRPH', 'VGRF', 'LVGR', 'DBCL')
                        and coalesce(tables.encodingscheme, '') != 'U'
                        then
                            if(tables.encodingscheme = 'A', ' CCSID ASCII', ' CCSID EBCDIC')
                    else ''
                end
            )
        ) as column_types,
        transform(
            array_sort(
                transform(
                    filter(column_lists.layout_columns, c -> c.keyseq > 0),
                    c -> named_struct('keyseq', c.keyseq, 'name', c.name)
                )
            ),
            k -> k.name
        ) as key_columns,
        -- the compact layout text udfs/logmaster/rows.py parse_layout reads
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
                    -- LOBSINCLUDED, then a second N when XMLINCLUDED is N
                    concat(
                        coalesce(tables.lobsincluded, 'Y'),
                        if(coalesce(tables.xmlincluded, 'Y') = 'N', 'N', '')
                    ),
                    concat_ws(
                        ';',
                        transform(
                            column_lists.layout_columns,
                            c -> concat(
                                concat_ws(
                                    ',',
                                    c.num, c.type, c.len, c.scale, c.nulls,
                                    coalesce(c.subtype, ''), coalesce(cast(c.pos as string), '')
                                ),
                                -- a key column's KEYSEQ (a partition-level DM's limit keys)
                                if(coalesce(c.keyseq, 0) > 0, concat(',', c.keyseq), '')
                            )
                        )
                    ),
                    -- optional 7th field: the extract's mixed code page (subtype M, graphic),
                    -- empty when there is none but an 8th field follows
                    coalesce(
                        concat('ccsid:', code_pages.ebcdic_mixed_ccsid),
                        case when date_formats.dateformat is not null then '' end
                    ),
                    -- optional 8th field: the DLDS DATEFORMAT, when not DB2I
                    date_formats.dateformat
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
    left join date_formats
        on tables.capture = date_formats.capture
)

select
    *,
    -- what names a decoding (udfs/logmaster/batch_rows.py image_digest): the data source's row
    -- images of a change are used when they were decoded with the same digest
    sha2(concat_ws(char(0), layout_text, column_names), 256) as image_digest
from layouts

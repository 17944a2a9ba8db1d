-- One row per layout version of every Db2 LUW table of a capture: the catalog export's layout,
-- or an initialize-table record's, then one version per add/drop/alter column record, built by
-- the registered UDF logmart_db2luw_layout_history (udfs/db2luw/functions.py). A row change is
-- decoded with the version in force at its LSN: valid_from_lsn <= lsn < valid_to_lsn. A DROP
-- TABLE ends a table's versions after the drop record; a table created later with the same
-- table space and table ids is another incarnation, with its own layout and name. A data
-- partition's ids take its table's layout and name (docs/db2luw.md interpretation 21): from
-- the start when catalog/datapartitions.csv lists them, else from the log's ADD/ATTACH
-- PARTITION record (update partition state, 137) on, until a DETACH PARTITION record.
{{ config(enabled=logmart_source_enabled('db2luw')) }}
with

catalog_tables as (
    select * from {{ ref('stg_db2luw__catalog_tables') }}
    where is_decoded
),

catalog_columns as (
    select * from {{ ref('stg_db2luw__catalog_columns') }}
    where is_decoded
),

catalog_datapartitions as (
    select * from {{ ref('stg_db2luw__catalog_datapartitions') }}
    where is_decoded
),

catalog_datatypes as (
    -- distinct types (METATYPE 'T'), by schema and name (docs/db2luw.md interpretation 21)
    select * from {{ ref('stg_db2luw__catalog_datatypes') }}
    where is_decoded and coalesce(metatype, 'T') = 'T' and sourcename is not null
),

catalog_ids as (
    -- each table's own ids, and each of its data partitions' (TBSPACEID, PARTITIONOBJECTID):
    -- the ids a partition's records carry, decoded with the table's layout and name; a
    -- partition's master ids are its table's
    select
        capture,
        tabschema,
        tabname,
        tbspaceid,
        tableid,
        cast(null as int) as master_tbspaceid,
        cast(null as int) as master_tableid
    from catalog_tables
    union
    select
        catalog_datapartitions.capture,
        catalog_datapartitions.tabschema,
        catalog_datapartitions.tabname,
        catalog_datapartitions.tbspaceid,
        catalog_datapartitions.partitionobjectid as tableid,
        owners.tbspaceid as master_tbspaceid,
        owners.tableid as master_tableid
    from catalog_datapartitions
    inner join catalog_tables as owners
        on
            catalog_datapartitions.capture = owners.capture
            and catalog_datapartitions.tabschema = owners.tabschema
            and catalog_datapartitions.tabname = owners.tabname
    left anti join catalog_tables
        on
            catalog_datapartitions.capture = catalog_tables.capture
            and catalog_datapartitions.tbspaceid = catalog_tables.tbspaceid
            and catalog_datapartitions.partitionobjectid = catalog_tables.tableid
),

catalog_layouts as (
    select
        catalog_ids.capture,
        catalog_ids.tbspaceid as table_space_identifier,
        catalog_ids.tableid as table_identifier,
        catalog_tables.tabschema as table_schema,
        catalog_tables.tabname as table_name,  -- noqa: RF04
        transform(
            array_sort(
                collect_list(
                    case
                        when catalog_columns.keyseq > 0
                            then named_struct(
                                'keyseq', catalog_columns.keyseq,
                                'name', catalog_columns.colname
                            )
                    end
                )
            ),
            k -> k.name
        ) as key_columns,
        to_json(
            named_struct(
                'tabschema', catalog_tables.tabschema,
                'tabname', catalog_tables.tabname,
                'tbspaceid', catalog_ids.tbspaceid,
                'tableid', catalog_ids.tableid,
                'master_tbspaceid', catalog_ids.master_tbspaceid,
                'master_tableid', catalog_ids.master_tableid,
                'compression', catalog_tables.compression,
                'columns', collect_list(
                    case
                        when catalog_columns.colname is not null
                            then named_struct(
                                'colname', catalog_columns.colname,
                                'colno', catalog_columns.colno,
                                'typename', catalog_columns.typename,
                                'length', catalog_columns.length,
                                'scale', catalog_columns.scale,
                                'nulls', catalog_columns.nulls,
                                'compress', catalog_columns.compress,
                                'inline_length', catalog_columns.inline_length,
                                'codepage', catalog_columns.codepage,
                                'keyseq', catalog_columns.keyseq,
                                'sourcename', catalog_datatypes.sourcename,
                                'type_length', catalog_datatypes.length,
                                'type_scale', catalog_datatypes.scale
                            )
                    end
                )
            )
        ) as catalog_json
    from catalog_ids
    inner join catalog_tables
        on
            catalog_ids.capture = catalog_tables.capture
            and catalog_ids.tabschema = catalog_tables.tabschema
            and catalog_ids.tabname = catalog_tables.tabname
    left join catalog_columns
        on
            catalog_tables.capture = catalog_columns.capture
            and catalog_tables.tabschema = catalog_columns.tabschema
            and catalog_tables.tabname = catalog_columns.tabname
    left join catalog_datatypes
        on
            catalog_columns.capture = catalog_datatypes.capture
            and catalog_columns.typename = catalog_datatypes.typename
            and coalesce(catalog_columns.typeschema, catalog_datatypes.typeschema)
            = catalog_datatypes.typeschema
    group by
        catalog_ids.capture,
        catalog_ids.tbspaceid,
        catalog_ids.tableid,
        catalog_ids.master_tbspaceid,
        catalog_ids.master_tableid,
        catalog_tables.tabschema,
        catalog_tables.tabname,
        catalog_tables.compression
),

layout_records as (
    -- layout and create/drop table records; and update partition state records (137, undo
    -- 108) of a master table the catalog has, each carrying that table's catalog JSON (the
    -- layout its partition's ids take)
    select
        ddl_records.*,
        masters.catalog_json as master_catalog
    from {{ ref('stg_db2luw__ddl_records') }} as ddl_records
    left join catalog_layouts as masters
        on
            ddl_records.kind in ('ddl_partition_state', 'undo_ddl_partition_state')
            and ddl_records.capture = masters.capture
            and ddl_records.master_table_space_identifier = masters.table_space_identifier
            and ddl_records.master_table_identifier = masters.table_identifier
    where ddl_records.changes_layout or masters.catalog_json is not null
),

layout_record_lists as (
    select
        capture,
        table_space_identifier,
        table_identifier,
        collect_list(
            named_struct(
                'lsn', lsn,
                'kind', kind,
                'table_space_identifier', table_space_identifier,
                'table_identifier', table_identifier,
                'old_columns', old_columns,
                'new_columns', new_columns,
                'column_id', column_id,
                'master_table_space_identifier', master_table_space_identifier,
                'master_table_identifier', master_table_identifier,
                'partition_action', partition_action,
                'master_catalog', master_catalog
            )
        ) as layout_records
    from layout_records
    group by capture, table_space_identifier, table_identifier
),

described_tables as (
    select
        coalesce(catalog_layouts.capture, layout_record_lists.capture) as capture,
        coalesce(
            catalog_layouts.table_space_identifier, layout_record_lists.table_space_identifier
        ) as table_space_identifier,
        coalesce(
            catalog_layouts.table_identifier, layout_record_lists.table_identifier
        ) as table_identifier,
        catalog_layouts.table_schema,
        catalog_layouts.table_name,
        catalog_layouts.key_columns,
        logmart_db2luw_layout_history(
            catalog_layouts.catalog_json,
            to_json(
                named_struct(
                    'codec', '{{ var("db2luw_codepage", "utf-8") }}',
                    'graphic_codec', '{{ var("db2luw_graphic_codepage", "utf-16-be") }}'
                )
            ),
            layout_record_lists.layout_records
        ) as versions
    from catalog_layouts
    full outer join layout_record_lists
        on
            catalog_layouts.capture = layout_record_lists.capture
            and catalog_layouts.table_space_identifier
            = layout_record_lists.table_space_identifier
            and catalog_layouts.table_identifier = layout_record_lists.table_identifier
),

versions as (
    select
        described_tables.capture,
        described_tables.table_space_identifier,
        described_tables.table_identifier,
        table_version.incarnation,
        case
            when table_version.table_name is null then described_tables.table_schema
            else table_version.table_schema
        end as table_schema,
        table_version.valid_from_lsn,
        table_version.valid_to_lsn,
        table_version.dropped_lsn,
        table_version.layout_source,
        table_version.column_names,
        table_version.column_types,
        table_version.layout_json,
        table_version.error as layout_error,
        table_version.master_table_space_identifier,
        table_version.master_table_identifier,
        coalesce(
            table_version.table_name,
            described_tables.table_name,
            concat(
                'TBSPACEID=', described_tables.table_space_identifier,
                ',TABLEID=', described_tables.table_identifier
            )
        ) as table_name,  -- noqa: RF04
        coalesce(
            table_version.key_columns, described_tables.key_columns, array()
        ) as key_columns,
        version_number + 1 as version_number
    -- outer, then the filter: an inner posexplode makes Spark filter on the UDF's result
    -- first (size > 0), which runs the UDF twice
    from described_tables
        lateral view outer posexplode(
            described_tables.versions
        ) exploded as version_number, table_version
    where exploded.version_number is not null
)

select * from versions

"""solidDB (SYS_LOG exports): what logmart knows of this source (udfs.source_declaration)."""

from udfs.soliddb.source import SolidDbDataSource, discover
from udfs.source_declaration import DbtVar, FileKind, RawTable, Source

SOLIDDB = Source(
    system="soliddb",
    folder="soliddb",
    display_name="solidDB",
    sql_dialect="solidDB",
    data_source=SolidDbDataSource,
    discover=discover,
    raw_tables=(
        RawTable(
            "soliddb_sys_log",
            {"records": "sys_log"},
            frozenset({"parquet", "csv", "jsonl"}),
            "One row per SYS_LOG row exported (Parquet, CSV or JSON lines).",
        ),
        RawTable(
            "soliddb_catalog_tables",
            {"records": "catalog_tables"},
            frozenset({"catalog_tables"}),
            "The rows of each capture's catalog/SYS_TABLES.csv.",
        ),
        RawTable(
            "soliddb_catalog_columns",
            {"records": "catalog_columns"},
            frozenset({"catalog_columns"}),
            "The rows of each capture's catalog/SYS_COLUMNS.csv.",
        ),
    ),
    files=(
        FileKind("parquet", "data", "<capture>/sys_log*.parquet"),
        FileKind("csv", "data", "<capture>/sys_log*.csv"),
        FileKind("jsonl", "data", "<capture>/sys_log*.{jsonl,ndjson,json}"),
        FileKind("catalog_tables", "context", "<capture>/catalog/SYS_TABLES.csv (any case)"),
        FileKind("catalog_columns", "context", "<capture>/catalog/SYS_COLUMNS.csv (any case)"),
        FileKind("empty", "ignored", "an export or catalog file of 0 bytes"),
        FileKind("other", "ignored", "anything else (listed, not read)"),
    ),
    sql_function_module="udfs.soliddb.sql_functions",
    sql_functions=(
        "logmart_soliddb_statement",
        "logmart_soliddb_layout_history",
        "logmart_soliddb_row",
    ),
    generator="soliddb",
    dbt_vars=(
        DbtVar("soliddb_char_codec", "utf-8", "CHAR types (latin-1 for partial Unicode)"),
        DbtVar("soliddb_wchar_codec", "utf-16-be", "W types"),
    ),
    commit_position_digits=40,
    commit_time_zone="UTC",  # SYS_LOG has no time column: commit_ts is null
    raw_offset_unit="row",  # raw_offset is the row's number in the export
)

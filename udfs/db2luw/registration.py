"""Db2 for Linux, UNIX and Windows: what logmart knows of this source
(udfs.source_declaration)."""

from udfs.db2luw.source import Db2LuwDataSource, discover
from udfs.source_declaration import DbtVar, FileKind, RawTable, Setting, Source


def _catalog_table(name: str) -> RawTable:
    return RawTable(
        f"db2luw_catalog_{name}",
        {"records": f"catalog_{name}"},
        frozenset({"catalog"}),
        f"The rows of each capture's catalog export catalog/{name}.csv.",
    )


DB2LUW = Source(
    system="db2luw",
    folder="db2luw",
    display_name="Db2 LUW",
    sql_dialect="Db2 LUW",
    data_source=Db2LuwDataSource,
    discover=discover,
    raw_tables=(
        RawTable(
            "db2luw_log_records",
            # images: each record's images decoded with its table's catalog layout while the
            # file is read (udfs/db2luw/batch_rows.py; int_db2luw_row_images_decoded takes them)
            {"records": "log", "images": "true"},
            frozenset({"log"}),
            "One row per log record of the db2ReadLog output files, every record type.",
            settings=("framing", "byteorder"),
        ),
        *(_catalog_table(name) for name in ("tables", "columns", "datapartitions", "datatypes")),
    ),
    files=(
        FileKind("log", "data", "<capture>/*.log"),
        FileKind("catalog", "context", "<capture>/catalog/{tables,columns,...}.csv"),
        FileKind("empty", "ignored", "<capture>/*.log of 0 bytes"),
        FileKind("ignored", "ignored", "anything else (listed, so the reconciliation shows it)"),
    ),
    settings=(
        Setting(
            "framing",
            "LOGMART_DB2LUW_FRAMING",
            ("filter", "lsn"),
            "filter",
            "Db2 LUW capture files: each record after db2ReadLogFilterData (filter, the "
            "default) or after an 8-byte LSN (db2ReadLogNoConn); a wrong one is detected",
        ),
        Setting(
            "byteorder",
            "LOGMART_DB2LUW_BYTEORDER",
            ("little", "big"),
            "little",
            "byte order of the Db2 LUW server (little: x86-64 Linux/Windows, the default; "
            "big: AIX/POWER); a wrong one is detected",
        ),
    ),
    sql_function_module="udfs.db2luw.sql_functions",
    sql_functions=("logmart_db2luw_layout_history", "logmart_db2luw_row"),
    generator="db2luw",
    dbt_vars=(
        DbtVar("db2luw_codepage", "utf-8", "CHAR/VARCHAR/CLOB code page (CCSID 1208 = utf-8)"),
        DbtVar(
            "db2luw_graphic_codepage",
            "utf-16-be",
            "GRAPHIC/VARGRAPHIC/DBCLOB code page (CCSID 1200 = utf-16-be)",
        ),
    ),
    commit_position_digits=32,  # LFS and LSN, 16 digits each
    # the commit record holds "u64 commit time, seconds since 1970 UTC" (Db2 docs, "Transaction
    # manager log records"; /work/shared/specs/README.md)
    commit_time_zone="UTC",
)

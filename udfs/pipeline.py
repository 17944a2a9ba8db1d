"""The build: raw files -> raw tables (Spark data sources, on executors) -> ``dbt build``.

Each source contributes a :class:`RawTable` list: a Spark data source read that frames and
decodes its files, written as a Parquet table in schema ``raw``. A source whose folder is
absent still gets its (empty) tables, so the dbt models always have their sources.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from udfs.errors import LogmartError

RAW_SCHEMA = "raw"


@dataclass(frozen=True)
class RawTable:
    """One raw table: which data source reads it and with what options."""

    name: str
    data_source: str
    folder: str  # under the raw root
    options: dict[str, str] = field(default_factory=dict)
    # Options a user sets: option -> (environment variable, accepted values). The CLI's flags
    # (e.g. `logmart build --db2luw-byteorder big`) set these variables.
    settings: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)

    def resolved_options(self, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The options with the user's settings applied; a bad value is a LogmartError."""
        environ = os.environ if environ is None else environ
        options = dict(self.options)
        for option, (variable, accepted) in self.settings.items():
            value = environ.get(variable)
            if value is None or value == "":
                continue
            if value not in accepted:
                raise LogmartError(
                    f"{variable}={value} is not one of {', '.join(accepted)}; "
                    f"set it to the {option} your capture files were written with"
                )
            options[option] = value
        return options

    def read(self, spark: SparkSession, raw_root: Path) -> DataFrame:
        reader = spark.read.format(self.data_source)
        reader = reader.option("path", str(raw_root / self.folder))
        reader = reader.option("raw_root", str(raw_root))
        for key, value in self.resolved_options().items():
            reader = reader.option(key, value)
        return reader.load()


# Db2 LUW capture settings: db2ReadLog framing and the database server's byte order.
DB2LUW_FRAMING = ("LOGMART_DB2LUW_FRAMING", ("filter", "lsn"))
DB2LUW_BYTEORDER = ("LOGMART_DB2LUW_BYTEORDER", ("little", "big"))


RAW_TABLES = [
    RawTable("logmaster_control_records", "logmart_logmaster", "logmaster", {"records": "control"}),
    RawTable("logmaster_data_records", "logmart_logmaster", "logmaster", {"records": "data"}),
    # Db2 LUW: framing (filter | lsn) and byte order (little | big) of the capture files.
    RawTable(
        "db2luw_log_records",
        "logmart_db2luw",
        "db2luw",
        {"records": "log", "framing": "filter", "byteorder": "little"},
        {"framing": DB2LUW_FRAMING, "byteorder": DB2LUW_BYTEORDER},
    ),
    RawTable("db2luw_catalog_tables", "logmart_db2luw", "db2luw", {"records": "catalog_tables"}),
    RawTable("db2luw_catalog_columns", "logmart_db2luw", "db2luw", {"records": "catalog_columns"}),
    # solidDB: SYS_LOG exports and catalog exports (code pages are dbt vars: soliddb_*_codec).
    RawTable("soliddb_sys_log", "logmart_soliddb", "soliddb", {"records": "sys_log"}),
    RawTable("soliddb_catalog_tables", "logmart_soliddb", "soliddb", {"records": "catalog_tables"}),
    RawTable(
        "soliddb_catalog_columns", "logmart_soliddb", "soliddb", {"records": "catalog_columns"}
    ),
]


def data_sources() -> list[type]:
    """Every source's Spark Python data source class."""
    from udfs.db2luw.source import Db2LuwDataSource
    from udfs.logmaster.source import LogMasterDataSource
    from udfs.soliddb.source import SolidDbDataSource

    return [LogMasterDataSource, Db2LuwDataSource, SolidDbDataSource]


def register_udfs(spark: SparkSession) -> None:
    """Register logmart's data sources and SQL functions on ``spark`` (idempotent)."""
    from udfs.spark_udfs import register_functions

    for source in data_sources():
        spark.dataSource.register(source)
    register_functions(spark)


FILES_SCHEMA = (
    "source_system string, capture string, source_file string, file_kind string, size_bytes bigint"
)


def list_files(raw_root: Path) -> list[tuple]:
    """Every file of every source under ``raw_root`` (a listing; nothing is read but a few
    first bytes): what the reconciliation counts from, so an empty file still shows."""
    from udfs.db2luw import source as db2luw
    from udfs.logmaster.source import discover
    from udfs.soliddb import source as soliddb

    rows = []
    for log_file in discover(raw_root / "logmaster", raw_root):
        rows.append(("db2zos", log_file.capture, log_file.relative, log_file.kind, log_file.size))
    for f in db2luw.discover(raw_root / "db2luw", raw_root):
        rows.append(("db2luw", f.capture, f.relative, f.kind, f.size))
    for f in soliddb.discover(raw_root / "soliddb", raw_root):
        rows.append(("soliddb", f.capture, f.relative, f.kind, f.size))
    return rows


def load_raw(spark: SparkSession, raw_root: Path) -> None:
    """Frame and decode every file under ``raw_root`` into the ``raw`` tables."""
    spark.sql(f"create database if not exists {RAW_SCHEMA}")
    for table in RAW_TABLES:
        frame = table.read(spark, raw_root)
        frame.write.mode("overwrite").format("parquet").saveAsTable(f"{RAW_SCHEMA}.{table.name}")
    files = spark.createDataFrame(list_files(raw_root), FILES_SCHEMA)
    files.write.mode("overwrite").format("parquet").saveAsTable(f"{RAW_SCHEMA}.files")


def build(spark: SparkSession, raw_root: Path, warehouse: Path, target: str = "local") -> dict:
    """Load the raw tables, run ``dbt build``, and return the summary the CLI prints."""
    from udfs.dbt_runner import run_dbt

    raw_root = Path(raw_root).expanduser().resolve()
    register_udfs(spark)
    load_raw(spark, raw_root)
    if not run_dbt(spark, ["build"], warehouse, target):
        raise LogmartError(
            f"dbt build failed; see {Path(warehouse) / 'dbt' / 'logs' / 'dbt.log'} and rerun "
            "`logmart dbt build` after fixing the cause"
        )
    return summary(spark)


def summary(spark: SparkSession) -> dict[str, Any]:
    """Records read/decoded/quarantined per source, changes/transactions per table."""
    sources = [
        row.asDict()
        for row in spark.sql(
            "select source_system, sum(records_read) as records_read, "
            "sum(records_decoded) as records_decoded, "
            "sum(records_quarantined) as records_quarantined "
            "from marts.reconciliation group by source_system order by source_system"
        ).collect()
    ]
    tables = [
        row.asDict()
        for row in spark.sql(
            "select source_system, table_schema, table_name, count(*) as changes, "
            "count(distinct transaction_id) as transactions from marts.fct_changes "
            "group by source_system, table_schema, table_name "
            "order by source_system, table_schema, table_name"
        ).collect()
    ]
    return {"sources": sources, "tables": tables}

"""The `logmart_soliddb` data source's pieces, without Spark: discovery, splits, reading."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from logmart_generators.soliddb import generate, generate_benchmark
from udfs.soliddb.source import (
    ARROW_SCHEMAS,
    ExportFile,
    SolidDbDataSource,
    discover,
    parquet_splits,
    read_catalog_file,
    read_sys_log_file,
    spark_schema,
)


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("raw")
    generate(out, 40, 3, formats=("parquet", "csv"))
    (out / "soliddb" / "capture01_csv" / "README.txt").write_text("notes")
    (out / "soliddb" / "empty" / "sys_log.jsonl").parent.mkdir()
    (out / "soliddb" / "empty" / "sys_log.jsonl").write_text("")
    return out


def test_discovery_names_each_file_its_capture_and_kind(raw: Path):
    found = {f.relative: (f.capture, f.kind) for f in discover(raw / "soliddb", raw)}
    assert found == {
        "soliddb/capture01_csv/README.txt": ("capture01_csv", "other"),
        "soliddb/capture01_csv/catalog/SYS_COLUMNS.csv": ("capture01_csv", "catalog_columns"),
        "soliddb/capture01_csv/catalog/SYS_TABLES.csv": ("capture01_csv", "catalog_tables"),
        "soliddb/capture01_csv/sys_log.csv": ("capture01_csv", "csv"),
        "soliddb/capture01_parquet/catalog/SYS_COLUMNS.csv": (
            "capture01_parquet",
            "catalog_columns",
        ),
        "soliddb/capture01_parquet/catalog/SYS_TABLES.csv": ("capture01_parquet", "catalog_tables"),
        "soliddb/capture01_parquet/sys_log.parquet": ("capture01_parquet", "parquet"),
        "soliddb/empty/sys_log.jsonl": ("empty", "empty"),
    }
    assert discover(raw / "nothing", raw) == []


def test_schemas_match_the_arrow_batches():
    assert spark_schema("sys_log").startswith(
        "source_system string, capture string, source_file string, raw_offset bigint, "
        "record_length bigint, record_bytes binary, decode_error string, recid int"
    )
    assert "logaddr binary, logaddr_hex string, data binary" in spark_schema("sys_log")
    assert spark_schema("catalog_tables").endswith("id string, table_name string, schema string")
    with pytest.raises(ValueError, match="option records must be one of sys_log"):
        SolidDbDataSource({"path": "x", "records": "frames"}).schema()


def test_the_same_rows_from_parquet_and_csv(raw: Path):
    exports = {f.kind: f for f in discover(raw / "soliddb", raw)}
    parquet = pa.Table.from_batches(list(read_sys_log_file(exports["parquet"])))
    text = pa.Table.from_batches(list(read_sys_log_file(exports["csv"])))
    assert parquet.schema == ARROW_SCHEMAS["sys_log"]
    keep = ["raw_offset", "recid", "trxid", "relid", "flags", "logaddr", "logaddr_hex", "data"]
    assert parquet.select(keep).to_pylist() == text.select(keep).to_pylist()
    assert parquet.column("decode_error").null_count == parquet.num_rows
    assert parquet.column("raw_offset").to_pylist() == list(range(parquet.num_rows))
    first = text.slice(0, 1).to_pylist()[0]
    assert first["record_length"] == len(first["record_bytes"])
    assert first["source_file"] == "soliddb/capture01_csv/sys_log.csv"


def test_large_parquet_files_split_by_row_groups(tmp_path: Path):
    path = tmp_path / "bench" / "sys_log.parquet"
    generate_benchmark(path, 1000, row_group_rows=100)
    splits = parquet_splits(path, 250)
    assert splits == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    export = ExportFile(
        path, "soliddb/bench/sys_log.parquet", "bench", path.stat().st_size, "parquet"
    )
    offsets = [
        offset
        for split in splits
        for batch in read_sys_log_file(export, split)
        for offset in batch.column("raw_offset").to_pylist()
    ]
    assert offsets == list(range(1000))


def test_an_unreadable_file_is_one_row_with_its_first_bytes(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    path.write_bytes(b"not parquet at all")
    assert parquet_splits(path, 10) == [None]
    export = ExportFile(path, "soliddb/sys_log.parquet", "", path.stat().st_size, "parquet")
    (row,) = pa.Table.from_batches(list(read_sys_log_file(export))).to_pylist()
    assert row["raw_offset"] == 0 and row["record_bytes"] == b"not parquet at all"
    assert row["decode_error"].startswith("the file could not be read as a parquet SYS_LOG export")


def test_catalog_rows_keep_the_columns_logmart_uses(tmp_path: Path):
    path = tmp_path / "catalog" / "SYS_TABLES.csv"
    path.parent.mkdir()
    path.write_text("id,Table_Name,TABLE_SCHEMA,EXTRA\n1,T,S,x\n,U,S,x\n2,V\n")
    export = ExportFile(path, "soliddb/catalog/SYS_TABLES.csv", "", path.stat().st_size, "")
    rows = pa.Table.from_batches(list(read_catalog_file(export, "catalog_tables"))).to_pylist()
    assert [(r["id"], r["table_name"], r["schema"]) for r in rows] == [
        ("1", "T", "S"),
        (None, "U", "S"),
        ("2", "V", None),
    ]
    assert [r["decode_error"] for r in rows] == [
        None,
        "SYS_TABLES.csv: the row has no ID (a value is required)",
        None,
    ]
    assert rows[0]["record_bytes"] == b"1,T,S,x\n" and rows[2]["raw_offset"] == 2


def test_a_catalog_without_a_required_column_says_so_on_every_row(tmp_path: Path):
    path = tmp_path / "catalog" / "SYS_COLUMNS.csv"
    path.parent.mkdir()
    path.write_text("REL_ID,COLUMN_NAME\n1,A\n")
    export = ExportFile(path, "soliddb/catalog/SYS_COLUMNS.csv", "", path.stat().st_size, "")
    (row,) = pa.Table.from_batches(list(read_catalog_file(export, "catalog_columns"))).to_pylist()
    assert row["decode_error"] == (
        "SYS_COLUMNS.csv has no COLUMN_NUMBER column in its header row; "
        "export the table with SELECT * and a header row"
    )


def test_hex_strings_in_parquet_are_read_like_csv(tmp_path: Path):
    path = tmp_path / "sys_log.parquet"
    pq.write_table(pa.table({"LOGADDR": ["00" * 20, "zz"], "FLAGS": [0, 1]}), path)
    export = ExportFile(path, "soliddb/sys_log.parquet", "", path.stat().st_size, "parquet")
    rows = pa.Table.from_batches(list(read_sys_log_file(export))).to_pylist()
    assert rows[0]["logaddr_hex"] == "00" * 20 and rows[0]["decode_error"] is None
    assert rows[1]["decode_error"] == "LOGADDR is not hex: 'zz'"

"""Base snapshots without Spark: where they are, side files, CSV and Parquet reading, rendering."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from udfs import raw_files, snapshots
from udfs.snapshots import SideFile, SnapshotProblem


def test_files_in_a_streams_snapshots_folder_are_snapshots() -> None:
    assert snapshots.file_kind("PROD/snapshots/ORDERS.csv") == "snapshot"
    assert snapshots.file_kind("PROD/snapshots/ORDERS.PARQUET") == "snapshot"
    assert snapshots.file_kind("PROD/snapshots/ORDERS.json") == "snapshot_side"
    assert snapshots.file_kind("PROD/snapshots/ORDERS.yml") == "snapshot_side"
    assert snapshots.file_kind("PROD/snapshots/notes.txt") == "ignored"
    assert snapshots.file_kind("PROD/c1/sys_log.csv") is None
    assert snapshots.file_kind("PROD/c1/snapshots/x.csv") is None  # only right under a stream


def test_the_listing_keeps_snapshots_out_of_the_captures(tmp_path: Path) -> None:
    capture = tmp_path / "soliddb" / "PROD" / "c1"
    capture.mkdir(parents=True)
    (capture / "sys_log.csv").write_text("a\n")
    folder = tmp_path / "soliddb" / "PROD" / "snapshots"
    folder.mkdir()
    (folder / "T.csv").write_text("K\n1\n")
    (folder / "T.json").write_text('{"table": "T", "position": "01"}')
    (tmp_path / "logmaster" / "DB2P" / "snapshots").mkdir(parents=True)
    (tmp_path / "logmaster" / "DB2P" / "snapshots" / "A.parquet").write_bytes(b"PAR1")
    files = {f.source_file: f for f in raw_files.list_files(tmp_path)}
    assert files["soliddb/PROD/snapshots/T.csv"].file_kind == "snapshot"
    assert files["soliddb/PROD/snapshots/T.json"].file_kind == "snapshot_side"
    assert files["soliddb/PROD/snapshots/T.csv"].capture == "PROD/snapshots"
    assert files["soliddb/PROD/snapshots/T.csv"].log_stream == "PROD"
    assert files["logmaster/DB2P/snapshots/A.parquet"].file_kind == "snapshot"  # not 'data'
    assert not files["soliddb/PROD/snapshots/T.csv"].loads
    rows = raw_files.capture_rows(list(files.values()), {}, "v1")
    assert [row[2] for row in rows] == ["PROD/c1"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, None),
        (Decimal("52750.00"), "52750.00"),
        (Decimal("-0.01"), "-0.01"),
        (Decimal("1E+3"), "1000"),
        (1500.5, "1500.5"),
        (42, "42"),
        (True, "true"),
        (dt.date(2024, 2, 29), "2024-02-29"),
        (dt.time(8, 32, 30), "08:32:30"),
        (dt.datetime(2024, 2, 29, 8, 32, 30), "2024-02-29 08:32:30"),
        (dt.datetime(2024, 2, 29, 8, 32, 30, 120000), "2024-02-29 08:32:30.120000"),
        (dt.datetime(2024, 1, 1, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
         "2024-01-01 00:00:00"),
        (b"\x0a\xff", "0AFF"),
        ("  padded ", "  padded "),
    ],
)  # fmt: skip
def test_parquet_values_render_as_the_marts_images(value: object, text: str | None) -> None:
    assert snapshots.render_value(value) == text


def test_a_side_file_names_a_table_and_a_position_or_a_time() -> None:
    side = snapshots.parse_side_file(
        '{"schema": "APP", "table": "ORDERS", "position": "0000000000A1"}', "ORDERS.json"
    )
    assert side == SideFile("APP", "ORDERS", position="0000000000A1")
    side = snapshots.parse_side_file("table: ORDERS\ntaken_at: '2024-05-01 10:00:00'\n", "O.yaml")
    assert side.taken_at == dt.datetime(2024, 5, 1, 10, 0)
    assert side.table_schema is None and side.position is None
    side = snapshots.parse_side_file(
        '{"table": "T", "taken_at": "2024-05-01T10:00:00+02:00", "csv_null": "NULL"}', "T.json"
    )
    assert side.taken_at == dt.datetime(2024, 5, 1, 8, 0)
    assert side.csv_null == "NULL"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not valid JSON"),
        ('["T"]', "one object"),
        ('{"position": "01"}', "names no table"),
        ('{"table": "T"}', "exactly one of position"),
        ('{"table": "T", "position": "01", "taken_at": "2024-01-01"}', "exactly one of"),
        ('{"table": "T", "position": "01", "lsn": "1"}', "unknown key(s) lsn"),
        ('{"table": "T", "taken_at": "yesterday"}', "is not YYYY-MM-DD"),
    ],
)
def test_a_bad_side_file_says_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(SnapshotProblem, match=r"T\.json") as caught:
        snapshots.parse_side_file(text, "T.json")
    assert words in str(caught.value)


def test_csv_values_are_text_and_empty_fields_are_null(tmp_path: Path) -> None:
    path = tmp_path / "T.csv"
    path.write_text('K,NAME,AMT\n1,"O\'Brien, Bob",52750.00\n2,,-0.01\n', "utf-8")
    columns, rows = snapshots.read_csv(path, SideFile(None, "T"))
    assert columns == ["K", "NAME", "AMT"]
    assert list(rows) == [
        {"K": "1", "NAME": "O'Brien, Bob", "AMT": "52750.00"},
        {"K": "2", "NAME": None, "AMT": "-0.01"},
    ]


def test_a_csv_null_marker_keeps_empty_strings(tmp_path: Path) -> None:
    path = tmp_path / "T.csv"
    path.write_text("K;V\n1;\n2;NULL\n", "utf-8")
    _, rows = snapshots.read_csv(path, SideFile(None, "T", csv_null="NULL", delimiter=";"))
    assert list(rows) == [{"K": "1", "V": ""}, {"K": "2", "V": None}]


def test_a_csv_row_with_too_many_fields_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "T.csv"
    path.write_text("K,V\n1,a\n2,b,c\n", "utf-8")
    _, rows = snapshots.read_csv(path, SideFile(None, "T"))
    with pytest.raises(SnapshotProblem, match=r"T\.csv line 3 has 3 fields, the header 2"):
        list(rows)


def test_a_csv_with_duplicate_columns_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "T.csv"
    path.write_text("K,K\n1,2\n", "utf-8")
    with pytest.raises(SnapshotProblem, match="duplicate or empty column names"):
        snapshots.read_csv(path, SideFile(None, "T"))


def test_parquet_values_are_rendered_by_type(tmp_path: Path) -> None:
    path = tmp_path / "T.parquet"
    table = pa.table(
        {
            "K": pa.array([1, 2], pa.int32()),
            "AMT": pa.array([Decimal("1.50"), None], pa.decimal128(7, 2)),
            "D": pa.array([dt.date(2024, 2, 29), dt.date(1, 1, 1)], pa.date32()),
            "TS": pa.array(
                [dt.datetime(2024, 2, 29, 8, 0, 0, 5), dt.datetime(2024, 3, 1)], pa.timestamp("us")
            ),
            "B": pa.array([b"\x00\x1f", b""], pa.binary()),
        }
    )
    pq.write_table(table, path, row_group_size=1)
    columns, rows = snapshots.read_parquet(path)
    assert columns == ["K", "AMT", "D", "TS", "B"]
    assert list(rows) == [
        {"K": "1", "AMT": "1.50", "D": "2024-02-29", "TS": "2024-02-29 08:00:00.000005",
         "B": "001F"},
        {"K": "2", "AMT": None, "D": "0001-01-01", "TS": "2024-03-01 00:00:00", "B": ""},
    ]  # fmt: skip


def _listed(tmp_path: Path, names: dict[str, bytes]) -> list[raw_files.RawFile]:
    folder = tmp_path / "db2luw" / "SAMPLE" / "snapshots"
    folder.mkdir(parents=True)
    for name, data in names.items():
        (folder / name).write_bytes(data)
    files = raw_files.list_files(tmp_path)
    for f in files:
        f.content_hash = raw_files.hash_file(str(f.path))
    return files


def test_snapshots_pair_with_their_side_files_or_say_what_is_missing(tmp_path: Path) -> None:
    files = _listed(
        tmp_path,
        {
            "A.csv": b"K,V\n1,x\n",
            "A.json": b'{"schema": "S", "table": "A", "position": "0001"}',
            "B.parquet": b"not parquet at all",
            "B.yaml": b"table: B\nposition: '0001'\n",
            "C.csv": b"K\n1\n",
            "D.json": b'{"table": "D", "position": "0001"}',
        },
    )
    found, orphans = snapshots.find_snapshots(files)
    by_name = {Path(s.source_file).name: snapshots.read_snapshot(s) for s in found}
    a = by_name["A.csv"]
    assert a.problem is None and a.columns == ["K", "V"] and a.rows == [{"K": "1", "V": "x"}]
    row = a.listing_row()
    assert row[:8] == ("db2luw", "SAMPLE", "SAMPLE/snapshots", "db2luw/SAMPLE/snapshots/A.csv",
                       "db2luw/SAMPLE/snapshots/A.json", "csv", "S", "A")  # fmt: skip
    assert row[8:] == ("0001", None, ["K", "V"], 1, None)
    assert "cannot read B.parquet as Parquet" in by_name["B.parquet"].problem
    assert "has no side file: add db2luw/SAMPLE/snapshots/C.json" in by_name["C.csv"].problem
    assert [o.source_file for o in orphans] == ["db2luw/SAMPLE/snapshots/D.json"]


def test_the_load_key_moves_with_a_snapshot_file_only(tmp_path: Path) -> None:
    files = _listed(tmp_path, {"A.csv": b"K\n1\n", "A.json": b'{"table": "A", "position": "1"}'})
    key = snapshots.load_key(files)
    assert snapshots.load_key(files) == key
    files[0].content_hash = "changed"
    assert snapshots.load_key(files) != key


def test_the_loader_reads_each_unload_in_a_task_and_drops_a_bad_ones_rows(
    spark, tmp_path: Path
) -> None:
    """load_snapshots on Spark: rows of good unloads land with their place; an unload found bad
    halfway (line 4) is listed with its problem and none of the rows read before it."""
    pq.write_table(pa.table({"K": pa.array([7], pa.int64())}), tmp_path / "P.parquet")
    files = _listed(
        tmp_path,
        {
            "A.csv": b"K,V\n1,x\n2,\n",
            "A.json": b'{"schema": "S", "table": "A", "position": "0001"}',
            "BAD.csv": b"K,V\n1,x\n2,y\n3,y,z\n4,w\n",
            "BAD.json": b'{"table": "BAD", "position": "0001"}',
            "P.parquet": (tmp_path / "P.parquet").read_bytes(),
            "P.yaml": b"table: P\ntaken_at: 2024-01-01 00:00:00\n",
            "NOSIDE.csv": b"K\n1\n",
        },
    )
    spark.sql("create database if not exists snapshot_loader_test")
    assert snapshots.load_snapshots(spark, files, "snapshot_loader_test")
    listed = {
        r["source_file"].rsplit("/", 1)[1]: r
        for r in spark.table("snapshot_loader_test.snapshots").collect()
    }
    assert {n: (r["row_count"], r["columns"]) for n, r in listed.items()} == {
        "A.csv": (2, ["K", "V"]), "BAD.csv": (0, []), "P.parquet": (1, ["K"]),
        "NOSIDE.csv": (0, []),
    }  # fmt: skip
    assert listed["A.csv"]["problem"] is None and listed["P.parquet"]["problem"] is None
    assert "BAD.csv line 4 has 3 fields, the header 2" in listed["BAD.csv"]["problem"]
    assert "has no side file" in listed["NOSIDE.csv"]["problem"]
    rows = sorted(
        (r["source_system"], r["log_stream"], r["source_file"].rsplit("/", 1)[1],
         r["row_number"], dict(r["row_image"]))
        for r in spark.table("snapshot_loader_test.snapshot_rows").collect()
    )  # fmt: skip
    assert rows == [
        ("db2luw", "SAMPLE", "A.csv", 1, {"K": "1", "V": "x"}),
        ("db2luw", "SAMPLE", "A.csv", 2, {"K": "2", "V": None}),
        ("db2luw", "SAMPLE", "P.parquet", 1, {"K": "7"}),
    ]
    # the same files again: nothing is read or written
    assert not snapshots.load_snapshots(spark, files, "snapshot_loader_test")


def test_a_damaged_parquet_row_group_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "T.parquet"
    pq.write_table(pa.table({"K": pa.array(range(1000), pa.int64())}), path, row_group_size=500)
    data = bytearray(path.read_bytes())
    data[10:600] = b"\xff" * 590  # the first row group's pages (the footer stays readable)
    path.write_bytes(bytes(data))
    _, rows = snapshots.read_parquet(path)
    with pytest.raises(SnapshotProblem, match=r"cannot read row group 0 of T\.parquet"):
        list(rows)

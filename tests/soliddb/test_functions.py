"""Bodies of the solidDB SQL functions, on hand-laid bytes and a generated capture (no Spark)."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

import pyarrow as pa
import pytest

from logmart_generators.soliddb import generate
from udfs.soliddb import functions
from udfs.soliddb.catalog import TableLayout, read_catalog
from udfs.soliddb.layouts import DdlLogRecId, RecId
from udfs.soliddb.readers import find_exports, read_sys_log
from udfs.soliddb.records import RECORD_KINDS, decode_capture

from .handmade import col, field, logaddr

SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def seed(name: str) -> list[dict]:
    with (SEEDS / f"{name}.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_seeds_hold_the_code_tables_of_the_spec():
    recids = {int(r["recid"]): r for r in seed("soliddb_recids")}
    assert {k: r["record_kind"] for k, r in recids.items()} == {
        int(k): v for k, v in RECORD_KINDS.items()
    }
    assert {k: r["recname"] for k, r in recids.items()} == {r.value: r.recname for r in RecId}
    logrecids = {int(r["logrecid"]): r["ddl_operation"] for r in seed("soliddb_ddl_logrecids")}
    assert logrecids == {d.value: d.operation for d in DdlLogRecId}


# --- logmart_soliddb_statement -------------------------------------------------------------------


def test_ddl_and_sql_records_are_decoded():
    ddl = field(struct.pack(">i", 73)) + field(b"SHOP.T")
    sql = field(b'ALTER TABLE s."Mixed" ADD COLUMN c INT')
    out = functions.statement_arrow(
        pa.array([13, 6, 1, 6, 13], pa.int32()),
        pa.array([ddl, sql, b"\x00", field(b"CREATE TABLE 'oops"), b"\x05ab"]),
        pa.array(["utf-8"] * 5),
    ).to_pylist()
    assert (out[0]["logrecid"], out[0]["info"], out[0]["error"]) == (73, "SHOP.T", None)
    assert (out[1]["sql_kind"], out[1]["table_schema"], out[1]["table_name"]) == (
        "add_column",
        "S",
        "Mixed",
    )
    assert out[2] == dict.fromkeys(out[2])  # not a DDL/SQL record: nothing
    assert out[3]["sql_text"] == "CREATE TABLE 'oops"
    assert out[3]["error"] == "SQL text has an unterminated ' quote"
    assert out[4]["error"] == "DATA field 1 at byte 0 says 5 bytes, only 2 remain"


def test_a_statement_with_an_unknown_code_page_says_which_setting():
    (out,) = functions.statement_arrow(
        pa.array([6], pa.int32()), pa.array([field(b"x")]), pa.array(["klingon"])
    ).to_pylist()
    assert out["error"].startswith("unknown code page 'klingon'")


# --- logmart_soliddb_layout_history ---------------------------------------------------------------


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    generate(out, 40, 5)
    return out / "soliddb" / "capture01"


def catalog_rows(capture: Path, name: str) -> list[dict]:
    with (capture / "catalog" / name).open(newline="") as handle:
        return [{k.lower(): v for k, v in row.items()} for row in csv.DictReader(handle)]


def test_layout_history_is_the_references(capture: Path):
    (export,) = find_exports(capture)
    records = [r for r in read_sys_log(export) if r["recid"] in (RecId.DDL, RecId.SQL)]
    entries = functions.layout_history(
        catalog_rows(capture, "SYS_TABLES.csv"),
        catalog_rows(capture, "SYS_COLUMNS.csv"),
        list(reversed(records)),  # any order
        "utf-8",
        "utf-16-be",
    )
    _, history = decode_capture(read_sys_log(export), read_catalog(capture / "catalog"))
    expected = [
        (rel_id, v.since.hex().upper(), v.layout)
        for rel_id, versions in sorted(history.versions().items())
        for v in versions
    ]
    got = []
    for e in entries:
        layout = None
        if e["layout_json"]:
            columns, char_codec, _ = functions.layout_from_json(e["layout_json"])
            assert char_codec == "utf-8"
            layout = [c.name for c in columns]
            assert e["column_names"] == layout
        got.append((e["rel_id"], e["valid_from_logaddr"], layout, e["column_types"]))
    assert got == [
        (
            rel_id,
            since,
            [c.name for c in layout.columns] if layout else None,
            [c.ddl_type for c in layout.columns] if layout else None,
        )
        for rel_id, since, layout in expected
    ]
    assert all(e["error"] is None for e in entries)
    assert [e["origin"] for e in entries].count("catalog") == 3


def test_statements_that_cannot_apply_and_a_bad_catalog_are_reported():
    records = [
        {
            "recid": 6,
            "trxid": 1,
            "stmttrxid": 1,
            "relid": None,
            "flags": 1,
            "logaddr": logaddr(0x20),
            "data": field(b"ALTER TABLE NOPE ADD COLUMN X INT"),
        }
    ]
    entries = functions.layout_history(
        [{"id": "x", "table_name": "T", "schema": "S"}], [], records, "utf-8", "utf-16-be"
    )
    assert [(e["origin"], e["valid_from_logaddr"], e["error"]) for e in entries] == [
        ("catalog", "", "catalog export unusable: SYS_TABLES.csv: ID 'x' is not a whole number"),
        (
            "sql",
            logaddr(0x20).hex().upper(),
            "ALTER TABLE: table NOPE is not known (or not unique) "
            f"(SQL at LOGADDR {logaddr(0x20).hex().upper()})",
        ),
    ]


# --- logmart_soliddb_row ---------------------------------------------------------------------

LAYOUT = functions.layout_to_json(
    TableLayout(
        1,
        "S",
        "T",
        (
            col("ID", "INTEGER", 1, nullable=False),
            col("NAME", "WVARCHAR", 2),
            col("AMOUNT", "NUMERIC", 3, scale=2),
            col("ADDED", "DATE", 4),
        ),
    ),
    {"char_codec": "utf-8", "wchar_codec": "utf-16-be"},
)


def test_rows_decode_with_null_reasons_in_column_order():
    data = [
        field(struct.pack(">i", 7)) + field("Zoë".encode("utf-16-be")) + field(b"52750.5"),
        field(struct.pack(">i", 8)) + field(b"") + field(b"-0.01") + field(b""),
        field(struct.pack(">i", 9)) + field(b"x") + field(b"1.234"),
        None,
    ]
    out = functions.row_arrow(pa.array(data, pa.binary()), pa.array([LAYOUT] * 4)).to_pylist()
    assert out[0] == {
        "values": ["7", "Zoë", "52750.50", None],
        "null_reasons": [None, None, None, "not_in_record"],
        "error": None,
    }
    assert out[1]["values"] == ["8", None, "-0.01", None]
    assert out[1]["null_reasons"] == [None, "logged_null", None, "logged_null"]
    assert out[2]["error"].startswith("column NAME (WVARCHAR): bytes 78 are not valid utf-16-be")
    assert out[3]["error"] == "the row record has no DATA"


def test_rows_without_a_usable_layout_say_why():
    document = json.loads(LAYOUT) | {"char_codec": "klingon"}
    out = functions.row_arrow(
        pa.array([b"\x00", b"\x00", b"\x00"]),
        pa.array([None, json.dumps(document), "{"]),
    ).to_pylist()
    assert out[0]["error"] == "no table layout for this table at this LOGADDR"
    assert out[1]["error"].startswith("table layout unusable: unknown code page 'klingon'")
    assert out[2]["error"].startswith("table layout unusable: Expecting property name")

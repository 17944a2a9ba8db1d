"""Property tests of the solidDB decoders beyond those in tests/soliddb (which already fuzz
decode_row_data, the batch row decoder against it on fixed layouts, the DATA field splitter and
the DDL parser): DDL/SQL record DATA, whole SYS_LOG records, the readers' cells and export
files, the catalog, and the SQL function bodies; values round-trip through the generator.
"""

from __future__ import annotations

import json
import random
import struct
import tempfile
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from logmart_generators import soliddb as gen
from tests.fuzz.support import decodes_or_rejects, fuzz
from udfs.errors import DecodeError
from udfs.soliddb import functions, readers, records, source
from udfs.soliddb.catalog import Column, LayoutHistory, TableLayout, numbered
from udfs.soliddb.data_format import frame_fields
from udfs.soliddb.layouts import TYPE_ENCODINGS, RecId

SQL_TYPES = [*sorted(TYPE_ENCODINGS), "GEOMETRY"]
CODECS = st.sampled_from(["utf-8", "latin-1", "utf-16-be", "cp037"])


def _framed(max_fields: int = 3):
    """Framed DATA of random fields, or any bytes."""
    framed = st.lists(st.binary(max_size=20), max_size=max_fields).map(frame_fields)
    return st.one_of(framed, st.binary(max_size=40))


# --- DDL and SQL records -----------------------------------------------------------------------


@fuzz(300)
@given(_framed(), CODECS)
def test_ddl_and_sql_data_on_any_bytes(data, codec):
    ddl = decodes_or_rejects(records.decode_ddl_data, data, char_codec=codec)
    assert ddl is None or set(ddl) == {"logrecid", "ddl_operation", "info"}
    decodes_or_rejects(records.decode_sql_data, data, char_codec=codec)


_SQL_WORDS = st.lists(st.sampled_from(["CREATE", "ALTER", "DROP", "TABLE", "S.T", "T", "(", ")",
                                       "A", "INT", "ADD", "COLUMN", ",", "RENAME", "TO", "X"]),
                      max_size=10).map(" ".join)  # fmt: skip


@fuzz(300)
@given(st.lists(st.tuples(
    st.one_of(st.none(), st.sampled_from([0, 1, 6, 13, 99])),
    st.one_of(st.none(), _framed(), _SQL_WORDS.map(lambda t: frame_fields([t.encode()]))),
    st.one_of(st.none(), CODECS, st.text(max_size=8)),
), min_size=1, max_size=8))  # fmt: skip
def test_statement_function_never_raises(items):
    result = functions.statement_arrow(
        pa.array([i[0] for i in items], pa.int32()),
        pa.array([i[1] for i in items], pa.binary()),
        pa.array([i[2] for i in items], pa.string()),
    ).to_pylist()
    assert len(result) == len(items)
    for (recid, _, _), out in zip(items, result, strict=True):
        if recid not in (RecId.DDL, RecId.SQL):
            assert set(out.values()) == {None}


# --- whole records and captures ------------------------------------------------------------------

_LOGADDRS = st.one_of(st.none(), st.binary(min_size=20, max_size=20), st.binary(max_size=4))


@st.composite
def layouts(draw, rel_id: int = 7) -> TableLayout:
    columns = [
        Column(f"C{n}", draw(st.sampled_from(SQL_TYPES)),
               scale=draw(st.one_of(st.none(), st.integers(0, 12))), nullable=draw(st.booleans()))
        for n in range(draw(st.integers(0, 5)))
    ]  # fmt: skip
    return TableLayout(rel_id, "S", "T", numbered(columns))


@st.composite
def sys_log_rows(draw) -> dict:
    return {
        "row_number": 0,
        "recid": draw(st.one_of(st.none(), st.sampled_from([0, 1, 3, 4, 5, 6, 7, 12, 13, 42]))),
        "trxid": draw(st.one_of(st.none(), st.integers(0, 3))),
        "stmttrxid": draw(st.one_of(st.none(), st.integers(0, 3))),
        "relid": draw(st.one_of(st.none(), st.sampled_from([7, 8]))),
        "flags": draw(st.one_of(st.none(), st.integers(0, 255))),
        "logaddr": draw(_LOGADDRS),
        "data": draw(st.one_of(st.none(), _framed(6),
                               _SQL_WORDS.map(lambda t: frame_fields([t.encode()])))),
        "decode_error": draw(st.one_of(st.none(), st.just("bad hex"))),
    }  # fmt: skip


@fuzz(300)
@given(layouts(), st.lists(sys_log_rows(), min_size=1, max_size=8), CODECS)
def test_records_and_captures_decode_or_say_why(layout, rows, codec):
    for row in rows:
        decoded = records.decode_record(row, LayoutHistory([layout]), char_codec=codec)
        assert decoded["record_kind"] in (*records.RECORD_KINDS.values(), "nop", "unknown")
        if row["decode_error"]:
            assert decoded["decode_error"] == row["decode_error"]
    decoded, _ = records.decode_capture(rows, [layout], char_codec=codec)
    assert len(decoded) == len(rows)


_CATALOG_TEXT = st.one_of(st.none(), st.text(st.sampled_from("0123456789-+ ²٣AZ"), max_size=4))


@st.composite
def catalog_rows(draw) -> tuple[list[dict], list[dict]]:
    tables = draw(st.lists(st.fixed_dictionaries({
        "id": st.one_of(st.sampled_from(["7", "8"]), _CATALOG_TEXT),
        "table_name": st.one_of(st.none(), st.sampled_from(["T", "U"])),
        "schema": st.one_of(st.none(), st.just("S")),
    }), max_size=3))  # fmt: skip
    columns = draw(st.lists(st.fixed_dictionaries({
        "rel_id": st.one_of(st.sampled_from(["7", "8"]), _CATALOG_TEXT),
        "column_name": st.one_of(st.none(), st.sampled_from(["A", "B", "ROWID"])),
        "column_number": st.one_of(st.sampled_from(["1", "2"]), _CATALOG_TEXT),
        "data_type": st.one_of(st.none(), st.sampled_from(SQL_TYPES), _CATALOG_TEXT),
        "data_type_number": st.one_of(st.none(), _CATALOG_TEXT),
        "char_max_length": _CATALOG_TEXT, "numeric_precision": _CATALOG_TEXT,
        "numeric_scale": _CATALOG_TEXT, "nullable": st.one_of(st.none(), st.sampled_from("YN")),
    }), max_size=4))  # fmt: skip
    return tables, columns


@fuzz(300)
@given(catalog_rows(), st.lists(sys_log_rows(), max_size=6), CODECS)
def test_layout_history_never_raises(catalog, rows, codec):
    tables, columns = catalog
    history_rows = [{k: v for k, v in row.items() if k not in ("row_number", "decode_error")}
                    for row in rows]  # fmt: skip
    entries = functions.layout_history(tables, columns, history_rows, codec, "utf-16-be")
    for entry in entries:
        assert entry["error"] is not None or entry["is_dropped"] or entry["layout_json"]
    result = functions.layout_history_arrow(
        pa.array([tables]), pa.array([columns]), pa.array([history_rows]),
        pa.array([codec]), pa.array(["utf-16-be"]),
    )  # fmt: skip
    assert len(result) == 1


# --- row function: batch decoding of random layouts against the reference ----------------------


@fuzz(300)
@given(layouts(), st.lists(st.one_of(st.none(), _framed(6)), min_size=1, max_size=10), CODECS)
def test_row_function_agrees_with_the_reference_on_any_layout(layout, datas, codec):
    text = functions.layout_to_json(layout, {"char_codec": codec, "wchar_codec": "utf-16-be"})
    result = functions.row_arrow(pa.array(datas, pa.binary()), pa.array([text] * len(datas)))
    result = result.to_pylist()
    for data, out in zip(datas, result, strict=True):
        if data is None:
            assert out["error"] == "the row record has no DATA"
            continue
        try:
            values_, reasons = records.decode_row_data(data, layout.columns, char_codec=codec)
        except DecodeError as exc:
            assert out == {"values": None, "null_reasons": None, "error": exc.reason}
            continue
        names = [c.name for c in layout.columns]
        assert out["error"] is None
        assert out["values"] == [values_[n] for n in names]
        assert out["null_reasons"] == [reasons.get(n) for n in names]


@fuzz(100)
@given(st.lists(st.tuples(st.one_of(st.none(), st.binary(max_size=10)),
                          st.one_of(st.none(), st.text(max_size=30))), min_size=1, max_size=6))  # fmt: skip  # noqa: E501
def test_row_function_never_raises_on_any_layout_text(items):
    result = functions.row_arrow(pa.array([i[0] for i in items], pa.binary()),
                                 pa.array([i[1] for i in items], pa.string()))  # fmt: skip
    assert len(result) == len(items)


# --- values round-trip through the generator's encoders ------------------------------------------

_GEN_TYPES = ["CHAR", "VARCHAR", "LONG VARCHAR", "WCHAR", "WVARCHAR", "BINARY", "VARBINARY",
              "FLOAT", "DOUBLE PRECISION", "REAL", "BIT", "TINYINT", "SMALLINT", "INTEGER",
              "BIGINT", "DATE", "TIME", "TIMESTAMP", "NUMERIC"]  # fmt: skip
_BMP = st.characters(exclude_categories=["Cs"], max_codepoint=0xFFFF)


def _gen_value(draw, sql_type: str):
    if sql_type in ("CHAR", "VARCHAR", "LONG VARCHAR", "WCHAR", "WVARCHAR"):
        return draw(st.text(_BMP, min_size=1, max_size=20))
    if sql_type in ("BINARY", "VARBINARY"):
        return draw(st.binary(min_size=1, max_size=20))
    if sql_type in ("FLOAT", "DOUBLE PRECISION"):
        return draw(st.floats(allow_nan=False, allow_infinity=False))
    if sql_type == "REAL":
        return draw(st.integers(-(2**12), 2**12)) / 2 ** draw(st.integers(0, 4))
    if sql_type in ("BIT", "TINYINT", "SMALLINT", "INTEGER"):
        return draw(st.integers(-(2**31), 2**31 - 1))
    if sql_type == "BIGINT":
        return draw(st.integers(-(2**63), 2**63 - 1))
    if sql_type == "DATE":
        moment = draw(st.dates())
        return (moment.year, moment.month, moment.day)
    if sql_type == "TIME":
        return (draw(st.integers(0, 23)), draw(st.integers(0, 59)), draw(st.integers(0, 59)))
    if sql_type == "TIMESTAMP":
        moment = draw(st.datetimes())
        return (moment.year, moment.month, moment.day, moment.hour, moment.minute,
                moment.second, draw(st.integers(0, 10**9 - 1)))  # fmt: skip
    return Decimal(draw(st.integers(-(10**12), 10**12))).scaleb(-3)


@fuzz(300)
@given(st.lists(st.sampled_from(_GEN_TYPES), min_size=1, max_size=8), st.data(),
       st.randoms(use_true_random=False))  # fmt: skip
def test_rows_round_trip_through_the_generator(types, data, rng: random.Random):
    gen_columns = [gen.GenColumn(f"C{n}", t, scale=3 if t == "NUMERIC" else None)
                   for n, t in enumerate(types)]  # fmt: skip
    row = [data.draw(st.one_of(st.none(), st.just(0)).flatmap(
        lambda none, t=t: st.just(None if none is None else _gen_value(data.draw, t))))
        for t in types]  # fmt: skip
    framed = gen.frame([None if v is None else gen.encode_value(v, c.sql_type, rng)
                        for v, c in zip(row, gen_columns, strict=True)])  # fmt: skip
    layout = numbered(Column(c.name, c.sql_type, scale=c.scale) for c in gen_columns)
    decoded, reasons = records.decode_row_data(framed, layout)
    expected = {c.name: _rendered(v, c) for v, c in zip(row, gen_columns, strict=True)}
    assert decoded == expected
    assert set(reasons) == {name for name, value in expected.items() if value is None}


def _rendered(value, column: gen.GenColumn) -> str | None:
    if value is None:
        return None
    if column.sql_type == "REAL":
        return repr(float(value))
    return gen.render(value, column)


# --- the readers: cells and whole export files ---------------------------------------------------


@fuzz(300)
@given(st.one_of(st.none(), st.text(max_size=30), st.integers(), st.floats(), st.booleans(),
                 st.binary(max_size=8)), st.sampled_from(["TRXID", "FLAGS", "RECID"]))  # fmt: skip
def test_reader_cells_on_any_value(value, name):
    number = decodes_or_rejects(readers.parse_integer, value, name)
    assert number is None or isinstance(number, int)
    raw = decodes_or_rejects(readers.parse_hex, value, "DATA")
    assert raw is None or isinstance(raw, bytes)


_HEADER = b"LOGADDR,TRXID,STMTTRXID,RECID,RECNAME,RELID,FLAGS,DATA\n"
_CSV_LINE = st.lists(st.sampled_from(["", "0", "12", "-3", "0x00FF", "X'AB'", "zz", '"a,b"',
                                      '"x\n"', "00" * 20, "1.5", "\u00e9"]),
                     min_size=1, max_size=9).map(",".join)  # fmt: skip


def _export(fmt: str):
    """(suffix, bytes) of an export file: its format's plausible lines mixed with any bytes."""
    if fmt == "csv":
        lines = st.lists(st.one_of(_CSV_LINE, st.text(max_size=20)), max_size=8)
        body = lines.map(lambda ls: _HEADER + "\n".join(ls).encode())
    else:
        names = st.sampled_from(["LOGADDR", "trxid", "RECID", "data", "FLAGS"])
        cells = st.one_of(st.none(), st.integers(-5, 2**40), st.text(max_size=6),
                          st.sampled_from(["00" * 20, "0x01"]))  # fmt: skip
        objects = st.dictionaries(names, cells, max_size=5)
        line = st.one_of(objects.map(json.dumps), st.text(max_size=12))
        body = st.lists(line, max_size=8).map(lambda ls: "\n".join(ls).encode())
    return st.one_of(body, st.binary(max_size=80)).map(lambda raw: (fmt, raw))


@fuzz(200)
@given(st.sampled_from(["csv", "jsonl"]).flatmap(_export))
def test_export_files_read_every_row_or_say_why(export):
    """The data source's file reader (run on executors) never raises; rows are numbered from 0
    without gaps; a CSV's rows are its lines after the header (blank lines aside)."""
    kind, raw = export
    folder = Path(tempfile.mkdtemp(prefix="logmart-fuzz-"))
    path = folder / f"sys_log.{kind}"
    path.write_bytes(raw)
    try:
        info = source.ExportFile(path, f"soliddb/c/{path.name}", "c", len(raw), kind)
        batches = list(source.read_sys_log_file(info))
    finally:
        path.unlink()
        folder.rmdir()
    table = pa.Table.from_batches(batches, schema=source.ARROW_SCHEMAS["sys_log"])
    numbers = table.column("raw_offset").to_pylist()
    assert numbers == list(range(len(numbers)))
    errors = table.column("decode_error").to_pylist()
    at = 0
    for error, row_bytes in zip(errors, table.column("record_bytes").to_pylist(), strict=True):
        if error is not None and "could not be read" in error:  # the unreadable rest: its head
            assert error == errors[-1] and raw.startswith(row_bytes)
            continue
        found = raw.find(row_bytes, at)  # each row's bytes, in file order, none twice
        assert found >= at, (row_bytes, raw)
        at = found + len(row_bytes)


@fuzz(150)
@given(st.sampled_from(["SYS_TABLES.CSV", "SYS_COLUMNS.CSV"]),
       st.lists(st.one_of(_CSV_LINE, st.text(max_size=20)), max_size=6),
       st.sampled_from([b"ID,TABLE_NAME,SCHEMA\n", b"REL_ID,COLUMN_NAME,COLUMN_NUMBER,DATA_TYPE\n",
                        b"", b"\xff\xfe\n"]))  # fmt: skip
def test_catalog_files_read_every_row_or_say_why(name, lines, header):
    folder = Path(tempfile.mkdtemp(prefix="logmart-fuzz-"))
    (folder / "catalog").mkdir()
    path = folder / "catalog" / name
    raw = header + "\n".join(lines).encode()
    path.write_bytes(raw)
    try:
        kind = source.CATALOG_FILES[name][0]
        info = source.ExportFile(path, f"soliddb/c/catalog/{name}", "c", len(raw), kind)
        batches = list(source.read_catalog_file(info, kind))
    finally:
        path.unlink()
        (folder / "catalog").rmdir()
        folder.rmdir()
    for batch in batches:
        assert batch.schema == source.ARROW_SCHEMAS[kind]


def test_round_trip_strategy_reaches_every_generator_type():
    assert set(_GEN_TYPES) <= set(TYPE_ENCODINGS)
    assert struct.calcsize(">HBBBBBI") == 11

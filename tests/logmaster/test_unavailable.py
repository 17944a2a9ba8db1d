"""Log Master: what the log does not carry is not NULL (issue 14 item 9).

DTBI LOBSINCLUDED (``000_…``: "N - LOBs excluded from output files"): a LOB column whose null
byte says a value is present has no value in the logical log; its value is null and the image's
``*_unavailable`` list says ``not_logged_lob``. A null byte x'FF' (``003_…``: "nullable (set to
null): ... Logical log: x'FF'x'0000'") is a real NULL. DATA laid by hand (interpretation 3)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from logmart_generators.logmaster import EXTRACT
from udfs import unavailable as na
from udfs.logmaster import batch_rows, rows
from udfs.logmaster.rows import Column, RowLayout, decode_data, layout_text

COLUMNS = (
    Column(1, "INT", 4, 0, "N", ""),
    Column(2, "CLOB", 100, 0, "L", ""),
    Column(3, "BLOB", 100, 0, "L", ""),
)
# UB: before image ID 1, CLOB present (x'00' + length 0: its value not in the file), BLOB NULL
# (x'FF' x'0000'); after image ID 1, CLOB NULL, BLOB present.
UB_DATA = bytes.fromhex(
    "001a"  # DATA total length 26
    "000a" "00000001" "00" "0000" "ff" "0000"  # before: length 10
    "000a" "00000001" "ff" "0000" "00" "0000"  # after: length 10
)  # fmt: skip


def test_lobs_excluded_are_unavailable_a_null_byte_ff_is_a_real_null():
    layout = RowLayout(COLUMNS, lobs_included=False)
    got = decode_data([UB_DATA], ["UB"], layout)
    assert got.errors == [None]
    assert got.before == [["1", None, None]] and got.after == [["1", None, None]]
    assert got.before_unavailable == [[None, na.NOT_LOGGED_LOB, None]]
    assert got.after_unavailable == [[None, None, na.NOT_LOGGED_LOB]]
    assert got.warnings == [["column 2: LOB not included in the logical log",
                             "column 3: LOB not included in the logical log"]]  # fmt: skip


def test_lobs_included_length_zero_is_an_empty_lob_not_null():
    layout = RowLayout(COLUMNS, lobs_included=True)
    got = decode_data([UB_DATA], ["UB"], layout)
    assert got.before == [["1", "", None]] and got.after == [["1", None, ""]]
    assert got.before_unavailable == [[None, None, None]]
    assert got.after_unavailable == [[None, None, None]]


def test_insert_and_delete_put_the_reasons_on_their_own_image():
    layout = RowLayout(COLUMNS, lobs_included=False)
    # ID 2, CLOB present: x'00' + length 3 + 'ABC' in EBCDIC (not kept), BLOB NULL
    image = bytes.fromhex("00000002 00 0003c1c2c3 ff0000")
    data = (len(image) + 4).to_bytes(2, "big") + len(image).to_bytes(2, "big") + image
    got = decode_data([data, data], ["I", "D"], layout)
    assert got.errors == [None, None]
    assert got.before_unavailable == [None, [None, na.NOT_LOGGED_LOB, None]]
    assert got.after_unavailable == [[None, na.NOT_LOGGED_LOB, None], None]
    assert got.before == [None, ["2", None, None]]


def test_the_udf_struct_carries_the_reasons_and_rows_without_layout_have_none():
    text = layout_text(RowLayout(COLUMNS, lobs_included=False))
    result = rows.row_images_arrow(
        pa.array([UB_DATA, UB_DATA], pa.binary()),
        pa.array(["UB", "UB"]),
        pa.array([text, None]),
    )
    empty = rows.decode_groups(
        pa.array([], pa.binary()), pa.array([], pa.string()), np.zeros(0, np.int64), []
    )
    assert result.type == empty.type
    assert result.field("before_unavailable").to_pylist() == [
        [None, na.NOT_LOGGED_LOB, None],
        None,
    ]
    assert result.field("after_unavailable").to_pylist()[0] == [None, None, na.NOT_LOGGED_LOB]
    assert result.field("error").to_pylist()[1] is not None


def _dlci(num: int, kind: str) -> dict:
    return {"llcolumnnum": num, "llcolumntype": kind, "llcolumnlen": 4, "llscale": 0,
            "llnulls": "L", "llcolumnsubtype": "", "llcolumnpos": None,
            "columnname": f"C{num}", "columnnamelen": 2}  # fmt: skip


def test_the_data_source_leaves_tables_with_excluded_lobs_to_the_udf():
    # only the UDF reports which LOB values are not in the log: such a table has no inline
    # layout (its changes are decoded by logmart_logmaster_row_images)
    settings = {**batch_rows.DEFAULT_SETTINGS, "mixed": ""}
    columns = [_dlci(1, "INT"), _dlci(2, "CLOB")]
    excluded = {"encodingscheme": "E", "sequencenumber": 1, "lobsincluded": "N"}
    assert batch_rows._layout_text(excluded, columns, "ccsid:37", settings) is None
    included = {**excluded, "lobsincluded": "Y"}
    assert batch_rows._layout_text(included, columns, "ccsid:37", settings) is not None
    no_lob = [_dlci(1, "INT")]
    assert batch_rows._layout_text(excluded, no_lob, "ccsid:37", settings) is not None


# A table whose third column was added after some of its rows were written: a row image of
# those rows ends after the second column (003_…: nullable = null byte first, VCHR = u16
# length then data, DEC = LLCOLUMNLEN packed bytes).
ADDED = (
    Column(1, "INT", 4, 0, "N", ""),
    Column(2, "VCHR", 10, 0, "Y", ""),
    Column(3, "DEC", 3, 2, "Y", ""),
)


def _data(*images: bytes) -> bytes:
    body = b"".join(len(image).to_bytes(2, "big") + image for image in images)
    return (len(body) + 2).to_bytes(2, "big") + body


def test_a_row_image_ending_before_added_columns_gives_added_after_row():
    short = bytes.fromhex("00000007" "00" "0002" "c1c2")  # ID 7, 'AB'; no third column  # fmt: skip
    full = bytes.fromhex("00000007" "00" "0002" "c1c2" "00" "01234c")  # ..., 12.34  # fmt: skip
    shortest = bytes.fromhex("00000008")  # ID 8 only: both later columns added after it
    got = decode_data([_data(short, full), _data(shortest)], ["UB", "I"], RowLayout(ADDED))
    assert got.errors == [None, None]
    assert got.before == [["7", "AB", None], None]
    assert got.before_unavailable == [[None, None, na.ADDED_AFTER_ROW], None]
    assert got.after == [["7", "AB", "12.34"], ["8", None, None]]
    assert got.after_unavailable == [
        [None, None, None],
        [None, na.ADDED_AFTER_ROW, na.ADDED_AFTER_ROW],
    ]


def test_a_logged_null_in_an_added_column_is_a_real_null():
    image = bytes.fromhex("00000009" "ff" "0000" "ff" "000000")  # VCHR NULL, DEC NULL  # fmt: skip
    got = decode_data([_data(image)], ["I"], RowLayout(ADDED))
    assert got.errors == [None]
    assert got.after == [["9", None, None]]
    assert got.after_unavailable == [[None, None, None]]


def test_a_row_image_ending_inside_a_column_is_still_an_error():
    inside = bytes.fromhex("00000007" "00" "0005" "c1c2")  # VCHR: 5 bytes, 2 follow  # fmt: skip
    no_first = b""  # not even the first column: not a row written before an ADD COLUMN
    got = decode_data([_data(inside), _data(no_first)], ["I", "I"], RowLayout(ADDED))
    assert "row image ends inside column 2 (VCHR)" in got.errors[0]
    assert "row image ends inside column 1 (INT)" in got.errors[1]


XML_COLUMNS = (Column(1, "INT", 4, 0, "N", ""), Column(2, "XML", 0, 0, "L", ""))
# ID 1 with an XML document '<a/>' (EBCDIC 4c 81 61 6e); ID 2 with the XML column NULL
XML_DOCUMENT = bytes.fromhex("00000001" "00" "0004" "4c81616e")  # fmt: skip
XML_NULL = bytes.fromhex("00000002" "ff" "0000")  # fmt: skip
XML_IMAGES = [_data(XML_DOCUMENT), _data(XML_NULL)]


def test_xml_excluded_is_not_logged_xml_and_a_null_byte_ff_is_a_real_null():
    got = decode_data(XML_IMAGES, ["I", "I"], RowLayout(XML_COLUMNS, xml_included=False))
    assert got.errors == [None, None]
    assert got.after == [["1", None], ["2", None]]
    assert got.after_unavailable == [[None, na.NOT_LOGGED_XML], [None, None]]
    assert got.warnings[0] == ["column 2: XML not included in the logical log"]


def test_xml_included_is_the_serialized_document():
    got = decode_data(XML_IMAGES, ["I", "I"], RowLayout(XML_COLUMNS))
    assert got.after == [["1", "<a/>"], ["2", None]]
    assert got.after_unavailable == [[None, None], [None, None]]


def test_the_layout_text_says_xml_excluded_with_a_second_n():
    excluded = layout_text(RowLayout(XML_COLUMNS, xml_included=False))
    assert excluded.split("|")[4] == "YN"
    assert rows.parse_layout(excluded).xml_included is False
    assert rows.parse_layout(excluded).lobs_included is True
    included = layout_text(RowLayout(XML_COLUMNS))
    assert included.split("|")[4] == "Y"
    assert rows.parse_layout(included).xml_included is True
    dtbi = {"encodingscheme": "E", "lobsincluded": "Y", "xmlincluded": "N"}
    assert rows.layout_from_control(dtbi, []).xml_included is False


def test_the_data_source_leaves_xml_excluded_and_short_rows_to_the_udf():
    settings = {**batch_rows.DEFAULT_SETTINGS, "mixed": ""}
    dtbi = {"encodingscheme": "E", "sequencenumber": 1, "lobsincluded": "Y", "xmlincluded": "N"}
    assert (
        batch_rows._layout_text(dtbi, [_dlci(1, "INT"), _dlci(2, "XML")], "ccsid:37", settings)
        is None
    )
    text, _ = batch_rows._layout_text(dtbi, [_dlci(1, "INT")], "ccsid:37", settings)
    assert text.split("|")[4] == "YN"
    decoded = rows.decode_groups(
        pa.array(
            [_data(bytes.fromhex("00000008")), _data(bytes.fromhex("00000008ff0000ff000000"))]
        ),
        pa.array(["I", "I"]),
        np.zeros(2, np.int64),
        [layout_text(RowLayout(ADDED))],
    )
    assert batch_rows._with_reasons(decoded).tolist() == [True, False]


def _control_layouts(path) -> dict[tuple[int, int], RowLayout]:
    """Per (DBID, OBID): the RowLayout of the control file's DTBI and DLCI records (the one
    version each generated table has), as the UDF path reads them."""
    from udfs.logmaster import control

    dtbis, dlcis = {}, {}
    for record in control.read_control_file(path, "cp037"):
        if record.error or not record.fields:
            continue
        key = (record.fields.get("dbid"), record.fields.get("tbobid"))
        if record.record_type == "DTBI":
            dtbis[key] = record.fields
        elif record.record_type == "DLCI":
            dlcis.setdefault(key, []).append(record.fields)
    return {
        (int(db, 16), int(ob, 16)): rows.layout_from_control(dtbi, dlcis[(db, ob)])
        for (db, ob), dtbi in dtbis.items()
    }


def _decoded_reasons(out, lines: list[dict]) -> dict[str, tuple]:
    """Per change (LRSN + RBA): the reasons logmaster.rows gives for its images with the layout the
    control file says, as the truth writes them (column -> reason; None without an image)."""
    from tests.logmaster.test_generator import control_file, folder_of, frames

    folder = folder_of(out)
    layouts = _control_layouts(control_file(folder))
    records = {p.name: dict(frames(p)) for p in folder.iterdir()}
    names = {(t.owner, t.name): (t, [c.name for c in t.columns]) for t in generator_tables()}
    got = {}
    for line in lines:
        table, columns = names[(line["table_owner"], line["table_name"])]
        data = b"".join(records[name][offset][288:] for name, offset in line["records"])
        layout = layouts[(table.dbid, table.tbobid)]
        decoded = decode_data([data], [line["change_type"]], layout)
        assert decoded.errors == [None], (line["log_lrsn"], decoded.errors)
        got[line["log_lrsn"] + line["log_rba"]] = tuple(
            None if side[0] is None else {n: r for n, r in zip(columns, side[0], strict=True) if r}
            for side in (decoded.before_unavailable, decoded.after_unavailable)
        )
    return got


def generator_tables():
    from logmart_generators.logmaster import _tables

    return _tables()


def test_the_generator_writes_xml_not_logged_and_rows_from_before_an_add_column(tmp_path):
    # DOCS.NOTE_REVIEW: DTBI XMLINCLUDED N (a present XML value: not_logged_xml) and its last
    # column added after its first rows (their images end before it: added_after_row). The
    # decoder, given the control file's layout, names in every row image what the truth names.
    from logmart_generators.logmaster import generate

    generate(tmp_path, transactions=120, seed=3)
    lines = [json.loads(line)
             for line in (tmp_path / "truth/db2zos/changes.jsonl").read_text().splitlines()
             if json.loads(line)["change_type"] in ("I", "IL", "UB", "D")]  # fmt: skip
    reasons = [r for line in lines for side in ("before_unavailable", "after_unavailable")
               for r in (line[side] or {}).values()]  # fmt: skip
    assert {na.NOT_LOGGED_LOB, na.NOT_LOGGED_XML, na.ADDED_AFTER_ROW} <= set(reasons)
    for line in lines:  # a value the log does not carry is null in the truth's image
        for side in ("before", "after"):
            for column in line[f"{side}_unavailable"] or {}:
                assert line[side][column] is None, (line["log_lrsn"], column)
    got = _decoded_reasons(tmp_path, lines)
    want = {line["log_lrsn"] + line["log_rba"]:
            (line["before_unavailable"], line["after_unavailable"]) for line in lines}  # fmt: skip
    assert got == want
    tables = json.loads((tmp_path / "truth/db2zos/tables.json").read_text())
    row_reasons = {r for row in tables["DOCS.NOTE_REVIEW"]["unavailable"] for r in row.values()}
    assert row_reasons == {na.NOT_LOGGED_XML, na.ADDED_AFTER_ROW}


@pytest.mark.spark
def test_the_pipeline_names_the_lobs_the_generator_left_out_as_its_truth_does(spark, demo):
    # DOCS.DOCUMENT_NOTE is generated with DTBI LOBSINCLUDED N: its truth names each present
    # CLOB value not_logged_lob; fct_changes must say the same of the same change, and keep a
    # NULL CLOB (x'FF') a real NULL (not named). DOCS.NOTE_REVIEW likewise with XMLINCLUDED N
    # (not_logged_xml) and rows written before its last column was added (added_after_row).
    truth = [
        json.loads(line)
        for line in (demo.raw / "truth" / "db2zos" / "changes.jsonl").read_text().splitlines()
    ]
    expected = {
        line["log_lrsn"] + line["log_rba"]: (line["before_unavailable"], line["after_unavailable"])
        for line in truth
        if line["table_name"] in ("DOCUMENT_NOTE", "NOTE_REVIEW")
        and line["change_type"] in ("I", "UB", "D")
    }
    got = {
        row.log_position: (row.before_unavailable, row.after_unavailable)
        for row in spark.sql(
            "select log_position, before_unavailable, after_unavailable from marts.fct_changes "
            f"where source_system = 'db2zos' and log_stream = '{EXTRACT}' "
            "and table_name in ('DOCUMENT_NOTE', 'NOTE_REVIEW') "
            "and operation in ('insert', 'update', 'delete')"
        ).collect()
    }
    assert got and all(expected[position] == value for position, value in got.items())
    committed = [
        position
        for position, line in ((line["log_lrsn"] + line["log_rba"], line) for line in truth)
        if position in expected and line["disposition"] == "C" and line["uor_disposition"] == "C"
    ]
    assert committed and set(committed) <= set(got)
    reasons = {reason for pair in expected.values() for side in pair if side
               for reason in side.values()}  # fmt: skip
    assert reasons == {na.NOT_LOGGED_LOB, na.NOT_LOGGED_XML, na.ADDED_AFTER_ROW}, reasons

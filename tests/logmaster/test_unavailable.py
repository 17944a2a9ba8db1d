"""Log Master: what the log does not carry is not NULL (issue 14 item 9).

DTBI LOBSINCLUDED (``000_…``: "N - LOBs excluded from output files"): a LOB column whose null
byte says a value is present has no value in the logical log; its value is null and the image's
``*_unavailable`` list says ``not_logged_lob``. A null byte x'FF' (``003_…``: "nullable (set to
null): ... Logical log: x'FF'x'0000'") is a real NULL. DATA laid by hand (interpretation 3)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from udfs import unavailable as na
from udfs.logmaster import images, rowimage
from udfs.logmaster.rowimage import Column, RowLayout, decode_data, layout_text

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
    result = rowimage.row_images_arrow(
        pa.array([UB_DATA, UB_DATA], pa.binary()),
        pa.array(["UB", "UB"]),
        pa.array([text, None]),
    )
    empty = rowimage.decode_groups(
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
    settings = {**images.DEFAULT_SETTINGS, "mixed": ""}
    columns = [_dlci(1, "INT"), _dlci(2, "CLOB")]
    excluded = {"encodingscheme": "E", "sequencenumber": 1, "lobsincluded": "N"}
    assert images._layout_text(excluded, columns, "ccsid:37", settings) is None
    included = {**excluded, "lobsincluded": "Y"}
    assert images._layout_text(included, columns, "ccsid:37", settings) is not None
    no_lob = [_dlci(1, "INT")]
    assert images._layout_text(excluded, no_lob, "ccsid:37", settings) is not None

"""A mass delete (DM) of one partition: its limit keys, from hand-laid DATA bytes.

``003_…``: "If CHANGE TYPE is set to DM (mass delete), data segments might or might not exist.
If the mass delete action is the result of a LOAD REPLACE of a specific partition, data
segments will exist defining the limit key values." The layout of those bytes is logmart's
reading (docs/logmaster.md "Mass delete of one partition"): DATA as always (``u16 total length
including itself``), then the low and the high limit key, each ``u16 length`` + the leading key
columns (DLCI KEYSEQ order) as a row image holds them.
"""

import pyarrow as pa
import pytest

from udfs.logmaster.rows import (
    Column,
    RowLayout,
    decode_data,
    layout_text,
    limit_keys,
    parse_layout,
    row_images_arrow,
)
from udfs.values import DecodeError

# KEYSEQ 1 = REGION CHAR(2), KEYSEQ 2 = WAREHOUSE_ID SMALLINT (nullable), a non-key column
# first in column order: the limit key follows KEYSEQ, not LLCOLUMNNUM.
LAYOUT = RowLayout(
    (
        Column(1, "DEC", 3, 2, "N", "", 4),
        Column(2, "INT", 2, 0, "Y", "", 7, keyseq=2),
        Column(3, "CHAR", 2, 0, "N", "S", 10, keyseq=1),
    )
)


def image(*parts: bytes) -> bytes:
    body = b"".join(parts)
    return len(body).to_bytes(2, "big") + body


def dm_data(*images: bytes) -> bytes:
    body = b"".join(images)
    return (len(body) + 2).to_bytes(2, "big") + body


def test_two_limit_keys_low_then_high_in_keyseq_order():
    # low: REGION 'EU' (x'C5E4' in cp037), WAREHOUSE_ID 4 (null byte x'00', x'0004');
    # high: REGION 'EU', WAREHOUSE_ID 9
    data = bytes.fromhex("0010 0005 c5e4 00 0004 0005 c5e4 00 0009")
    assert data == dm_data(image(b"\xc5\xe4", b"\x00\x00\x04"), image(b"\xc5\xe4", b"\x00\x00\x09"))
    keys = limit_keys(data, LAYOUT)
    assert (keys.low, keys.high, keys.warnings) == (["EU", "4"], ["EU", "9"], [])


def test_a_limit_key_may_hold_only_the_leading_key_columns():
    data = dm_data(image(b"\xc5\xe4"), image(b"\xe4\xe2"))  # 'EU' .. 'US'
    assert limit_keys(data, LAYOUT).high == ["US"]


def test_one_image_is_the_high_limit_and_an_empty_image_is_no_bound():
    first = limit_keys(dm_data(image(b"\xc5\xe4")), LAYOUT)
    assert (first.low, first.high) == ([], ["EU"])
    assert limit_keys(dm_data(image(b""), image(b"\xc5\xe4")), LAYOUT).low == []
    last = limit_keys(dm_data(image(b"\xe4\xe2"), image(b"")), LAYOUT)
    assert (last.low, last.high) == (["US"], [])


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x00\x09\x00\x01\xc5", "the DATA length field does not match DATA"),
        (dm_data(image(b"\xc5\xe4\x00\x00\x04\x00")), "longer than the table's 2 key columns"),
        (dm_data(image(b"\xc5\xe4\x07\x00\x04")), "null byte of column 2 (INT)"),
        (dm_data(b"\x00\x09\xc5"), "limit key image 1 ends after DATA"),
        (dm_data(*[image(b"\xc5\xe4")] * 3), "3 limit key images, not 1 or 2"),
    ],
)
def test_bad_limit_keys_say_why(data, reason):
    with pytest.raises(DecodeError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        limit_keys(data, LAYOUT)


def test_a_table_without_key_columns_cannot_read_limit_keys():
    keyless = RowLayout((Column(1, "INT", 2, 0, "N", ""),))
    result = decode_data([dm_data(image(b"\x00\x01"))], ["DM"], keyless)
    assert "needs the table's key columns (DLCI KEYSEQ)" in result.errors[0]


def test_the_batch_decoder_gives_a_partition_dm_its_limit_keys_and_leaves_a_table_dm_alone():
    data = dm_data(image(b"\xc5\xe4"), image(b"\xe4\xe2"))
    insert = image(b"\x00\x12\x3c", b"\x00\x00\x05", b"\xc5\xe4")  # 1.23, 5, 'EU'
    result = decode_data(
        [data, b"\x00\x02", None, (len(insert) + 2).to_bytes(2, "big") + insert],
        ["DM", "DM", "DM", "I"],
        LAYOUT,
    )
    assert result.errors == [None, None, None, None]
    assert (result.before[0], result.after[0]) == (["EU"], ["US"])  # low, high
    assert result.before[1:3] == [None, None] and result.after[1:3] == [None, None]
    assert result.after[3] == ["1.23", "5", "EU"]


def test_keyseq_travels_in_the_layout_text_only_for_key_columns():
    text = layout_text(LAYOUT)
    assert text == "E|cp037|latin-1|hfp|Y|1,DEC,3,2,N,,4;2,INT,2,0,Y,,7,2;3,CHAR,2,0,N,S,10,1"
    assert parse_layout(text) == LAYOUT


def test_without_a_layout_a_partition_dm_is_an_error_and_a_table_dm_is_not():
    result = row_images_arrow(
        pa.array([dm_data(image(b"\xc5\xe4")), b"\x00\x02"]),
        pa.array(["DM", "DM"]),
        pa.array([None, None], pa.string()),
    ).to_pylist()
    assert result[0]["error"].startswith("no table layout") and result[1]["error"] is None

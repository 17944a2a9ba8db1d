"""Row images (LLDF DATA) decoded from hand-laid bytes, per README interpretations 3-6."""

import struct

import pyarrow as pa
import pytest

from tests.logmaster.handmade import data_field
from udfs.logmaster.rows import (
    Column,
    RowLayout,
    decode_data,
    layout_text,
    parse_layout,
    row_images_arrow,
)


def e(text: str) -> bytes:
    return text.encode("cp037")


def decode_one(layout: RowLayout, change_type: str, *images: bytes):
    result = decode_data([data_field(*images)], [change_type], layout)
    return result.before[0], result.after[0], result.warnings[0], result.errors[0]


VCHR_NULLABLE = RowLayout((Column(1, "VCHR", 5, 0, "Y", "S"),))
VCHR_NOT_NULL = RowLayout((Column(1, "VCHR", 5, 0, "N", "S"),))


def test_spec_example_five_characters_not_nullable():
    # 003_…: "Logical log: x'0005'ABCDE"
    assert decode_one(VCHR_NOT_NULL, "I", b"\x00\x05" + e("ABCDE"))[1] == ["ABCDE"]


def test_spec_example_five_characters_nullable_not_null():
    # 003_…: "Logical log: x'00'x'0005'ABCDE" (null byte first, length without it)
    assert decode_one(VCHR_NULLABLE, "I", b"\x00\x00\x05" + e("ABCDE"))[1] == ["ABCDE"]


def test_spec_example_five_characters_nullable_null():
    # 003_…: "Logical log: x'FF'x'0000'"
    assert decode_one(VCHR_NULLABLE, "I", b"\xff\x00\x00")[1] == [None]


def test_null_fixed_column_keeps_its_width():
    layout = RowLayout((Column(1, "INT", 4, 0, "Y", ""), Column(2, "CHAR", 3, 0, "N", "S")))
    image = b"\xff" + b"\x00" * 4 + e("abc")
    assert decode_one(layout, "D", image)[0] == [None, "abc"]


EVERY_TYPE = RowLayout(
    (
        Column(1, "INT", 2, 0, "N", ""),
        Column(2, "INT", 4, 0, "N", ""),
        Column(3, "INT", 8, 0, "N", ""),
        Column(4, "DEC", 5, 2, "N", ""),
        Column(5, "FLOT", 4, 0, "N", ""),
        Column(6, "FLOT", 8, 0, "N", ""),
        Column(7, "DATE", 10, 0, "N", ""),
        Column(8, "TIME", 8, 0, "N", ""),
        Column(9, "DTTM", 26, 0, "N", ""),
        Column(10, "DTTZ", 32, 0, "N", ""),
        Column(11, "CHAR", 4, 0, "N", "B"),
        Column(12, "ROWI", 40, 0, "N", ""),
        Column(13, "LVCH", 100, 0, "N", "S"),
        Column(14, "GRPH", 4, 0, "N", ""),
        Column(15, "BLOB", 100, 0, "L", ""),
        Column(16, "CLOB", 100, 0, "L", ""),
    )
)
EVERY_TYPE_IMAGE = (
    b"\xff\xfe"  # SMALLINT -2
    + b"\x00\x00\xce\x0e"  # INTEGER 52750
    + b"\xff\xff\xff\xff\xff\xff\xff\xff"  # BIGINT -1
    + bytes.fromhex("005275000C")  # DEC(9,2) 52750.00
    + bytes.fromhex("C276A000")  # REAL -118.625 (HFP)
    + bytes.fromhex("435DC80000000000")  # DOUBLE 1500.5 (HFP: 0x5DC.8)
    + e("2024-02-29")
    + e("23.59.59")
    + e("2024-02-29-23.59.59.999999")
    + e("2024-02-29-23.59.59.999999-05:00")
    + b"\x00\xff\x10\xab"  # CHAR(4) FOR BIT DATA
    + b"\x00\x03"
    + b"\x01\x02\x03"  # ROWID (varying)
    + b"\x00\x02"
    + e("hi")
    + b"\x42\x42\x42\x42"  # GRAPHIC in an EBCDIC table: shown as hex
    + b"\x00"
    + b"\x00\x02"
    + b"\xca\xfe"  # BLOB inline
    + b"\x00"
    + b"\x00\x03"
    + e("doc")  # CLOB inline
)


def test_every_column_type_renders_as_the_marts_show_it():
    before, after, warnings, error = decode_one(EVERY_TYPE, "I", EVERY_TYPE_IMAGE)
    assert error is None and before is None
    assert after == [
        "-2",
        "52750",
        "-1",
        "52750.00",
        "-118.625",
        "1500.5",
        "2024-02-29",
        "23:59:59",
        "2024-02-29 23:59:59.999999",
        "2024-02-29 23:59:59.999999-05:00",
        "00FF10AB",
        "010203",
        "hi",
        "42424242",
        "CAFE",
        "doc",
    ]
    assert warnings == ["column 14: DBCS graphic data shown as hex"]


def test_update_has_before_then_after():
    layout = RowLayout((Column(1, "INT", 4, 0, "N", ""),))
    before, after, _, error = decode_one(layout, "UB", b"\x00\x00\x00\x01", b"\x00\x00\x00\x02")
    assert (before, after, error) == (["1"], ["2"], None)


def test_unicode_table_text_and_graphic():
    layout = RowLayout(
        (Column(1, "VCHR", 20, 0, "N", "M"), Column(2, "VGRF", 10, 0, "N", "")), encoding="U"
    )
    text = "Größe 日本".encode()
    graphic = "日本".encode("utf-16-be")
    image = len(text).to_bytes(2, "big") + text + b"\x00\x02" + graphic  # VGRF: 2 characters
    assert decode_one(layout, "I", image)[1] == ["Größe 日本", "日本"]


def test_ieee_floats_as_an_option():
    layout = RowLayout((Column(1, "FLOT", 8, 0, "N", ""),), float_format="ieee")
    assert decode_one(layout, "I", bytes.fromhex("4097720000000000"))[1] == ["1500.5"]


def test_lob_not_included_is_null_with_a_warning():
    layout = RowLayout((Column(1, "BLOB", 100, 0, "L", ""),), lobs_included=False)
    _, after, warnings, error = decode_one(layout, "I", b"\x00\x00\x00")
    assert after == [None] and error is None
    assert warnings == ["column 1: LOB not included in the logical log"]


def test_llcolumnpos_mismatch_is_a_warning_only():
    layout = RowLayout((Column(1, "CHAR", 2, 0, "N", "S", 0), Column(2, "INT", 2, 0, "N", "", 3)))
    _, after, warnings, error = decode_one(layout, "I", e("ab") + b"\x00\x07")
    assert after == ["ab", "7"] and error is None
    assert warnings == ["column 2 is not at LLCOLUMNPOS 3"]


# 001_… LLCOLUMNPOS: "Offset of the current column within the DATA field of the logical log data
# record"; 003_… DATA: "First 2 bytes are a halfword value that contains total length of the data
# segment (including 2-byte length)", then the row image, which "begins with a two-byte length
# value". Laid out by hand, offsets within DATA:
#    0  x'0010'        DATA total length 16
#    2  x'000C'        row image length 12
#    4  x'8182'        column 1 CHAR(2) 'ab'                 LLCOLUMNPOS 4
#    6  x'00'          column 2 null byte (value present)    LLCOLUMNPOS 6
#    7  x'0007'        column 2 INT(2) 7
#    9  x'0003A7A8A9'  column 3 VCHR 'xyz' (first varying)   LLCOLUMNPOS 9
#   14  x'0005'        column 4 INT(2) 5 (after it)          LLCOLUMNPOS -1
SPEC_DATA = bytes.fromhex("0010 000C 8182 00 0007 0003A7A8A9 0005")


def _positioned(*positions: int) -> RowLayout:
    kinds = [("CHAR", 2, "N", "S"), ("INT", 2, "Y", ""), ("VCHR", 5, "N", "S"), ("INT", 2, "N", "")]
    return RowLayout(
        tuple(
            Column(n, kind, length, 0, nulls, subtype, pos)
            for n, ((kind, length, nulls, subtype), pos) in enumerate(
                zip(kinds, positions, strict=True), start=1
            )
        )
    )


def test_llcolumnpos_counts_within_the_data_field():
    result = decode_data([SPEC_DATA], ["I"], _positioned(4, 6, 9, -1))
    assert result.after == [["ab", "7", "xyz", "5"]] and result.errors == [None]
    assert result.warnings == [[]]  # counted from the row image (0, 2, 5) each would warn


def test_each_image_of_an_update_counts_as_if_it_stood_alone_in_data():
    image = SPEC_DATA[4:]
    result = decode_data([data_field(image, image)], ["UB"], _positioned(4, 6, 9, -1))
    assert result.before == result.after == [["ab", "7", "xyz", "5"]]
    assert result.warnings == [[]]


@pytest.mark.parametrize("base", [0, 2])
def test_other_bases_are_taken_from_the_first_column(base):
    # an extract counting from the row image (0) or from DATA's content (2): the first column
    # is always at the image's first byte, so its LLCOLUMNPOS says which base the table uses
    positions = (base, base + 2, base + 5, -1)
    assert decode_data([SPEC_DATA], ["I"], _positioned(*positions)).warnings == [[]]


def test_a_column_off_its_tables_base_is_still_a_warning():
    # first column at 4 (the literal base): column 2 at the row image's offset 2 is wrong there
    result = decode_data([SPEC_DATA], ["I"], _positioned(4, 2, 9, -1))
    assert result.warnings == [["column 2 is not at LLCOLUMNPOS 2"]]
    assert result.after == [["ab", "7", "xyz", "5"]]


@pytest.mark.parametrize(
    ("image", "reason"),
    [
        (b"\x7f\x00\x00\x00\x01", "null byte of column 1 (INT) is neither x'00' nor x'FF'"),
        (b"\x00\x00\x00", "row image ends inside column 1 (INT)"),
        (b"\x00\x00\x00\x00\x01\x99", "row image is longer than the columns"),
    ],
)
def test_bad_images_say_why(image, reason):
    layout = RowLayout((Column(1, "INT", 4, 0, "Y", ""),))
    assert reason in decode_one(layout, "I", image)[3]


def test_bad_packed_decimal_and_date():
    layout = RowLayout((Column(1, "DEC", 2, 0, "N", ""),))
    assert (
        "column 1 (DEC) holds bytes that are not a valid DEC"
        in decode_one(layout, "I", b"\x12\x34")[3]
    )
    layout = RowLayout((Column(1, "DATE", 10, 0, "N", ""),))
    assert "not a valid DATE" in decode_one(layout, "I", e("2023-02-29"))[3]


def test_data_length_must_match():
    layout = RowLayout((Column(1, "INT", 2, 0, "N", ""),))
    result = decode_data([b"\x00\x09\x00\x02\x00\x01"], ["I"], layout)
    assert "DATA length field does not match" in result.errors[0]


def test_changes_without_images_need_no_data():
    layout = RowLayout((Column(1, "INT", 2, 0, "N", ""),))
    result = decode_data([b"\x00\x02", None], ["DT", "DM"], layout)
    assert result.errors == [None, None] and result.after == [None, None]


def test_a_bad_row_does_not_spoil_its_batch():
    layout = RowLayout((Column(1, "INT", 2, 0, "N", ""),))
    good, bad = data_field(b"\x00\x05"), data_field(b"\x00")
    result = decode_data([good, bad, good], ["I", "I", "D"], layout)
    assert result.after[0] == ["5"] and result.before[2] == ["5"]
    assert result.errors[1] is not None and result.errors[0] is None


def test_layout_text_round_trips_and_the_arrow_udf_groups_by_layout():
    small = RowLayout((Column(1, "INT", 2, 0, "N", ""),))
    wide = RowLayout((Column(1, "INT", 2, 0, "N", ""), Column(2, "CHAR", 1, 0, "N", "S", 2)))
    assert parse_layout(layout_text(wide)) == wide
    assert layout_text(small) == "E|cp037|latin-1|hfp|Y|1,INT,2,0,N,,"
    assert parse_layout("U|ccsid:500|latin-1|ieee|N|1,INT,2,0,Y,,0").ebcdic_codec == "cp500"
    result = row_images_arrow(
        pa.array([data_field(b"\x00\x01"), data_field(b"\x00\x02" + e("x")), b"\x00\x02"]),
        pa.array(["I", "D", "I"]),
        pa.array([layout_text(small), layout_text(wide), None]),
    ).to_pylist()
    assert result[0]["after_values"] == ["1"]
    assert result[1]["before_values"] == ["2", "x"]
    assert result[2]["error"] == "no table layout (DTBI/DLCI) for this table in the control file"


def test_malformed_layout_text_is_a_reason_not_a_crash():
    result = row_images_arrow(
        pa.array([data_field(b"\x00\x01")]), pa.array(["I"]), pa.array(["E|cp037|broken"])
    ).to_pylist()
    assert result[0]["error"].startswith("table layout unusable: layout text has 3 fields")


# Issue 14 item 7: mixed SBCS/DBCS EBCDIC (DLCI subtype M) and EBCDIC graphic data, decoded with
# the extract's mixed code page (XTYP EBCDICMIXEDCCSID). Bytes by hand from the code pages: in
# CCSID 939 x'C1' is 'A'; in its DBCS half (CCSID 300) x'4541' is 一 (U+4E00), x'4542' 二.
MIXED_COLUMNS = (
    Column(num=1, type="VCHR", length=20, scale=0, nulls="N", subtype="M"),
    Column(num=2, type="GRPH", length=4, scale=0, nulls="N", subtype=""),
)


@pytest.mark.parametrize(("ccsid", "codec"), [("ccsid:939", "ibm939"), ("ccsid:1390", "ibm1390")])
def test_mixed_and_graphic_ebcdic_decode_with_the_mixed_code_page(ccsid, codec):
    layout = parse_layout(f"E|cp037|latin-1|hfp|Y|1,VCHR,20,0,N,M,;2,GRPH,4,0,N,,|{ccsid}")
    assert layout.mixed_codec == codec and layout.columns == MIXED_COLUMNS
    mixed = b"\xc1\x0e\x45\x41\x45\x42\x0f\xc1"  # A, SO, 一二, SI, A
    image = struct.pack(">H", len(mixed)) + mixed + b"\x45\x41\x45\x42"  # GRPH(2): 一二
    decoded = decode_data([data_field(image)], ["I"], layout)
    assert decoded.errors == [None]
    assert decoded.after == [["A一二A", "一二"]]
    assert decoded.warnings == [[]]
    assert parse_layout(layout_text(layout)) == layout


def test_without_a_mixed_code_page_graphic_stays_hex_and_text_is_sbcs():
    layout = parse_layout("E|cp037|latin-1|hfp|Y|1,VCHR,20,0,N,M,;2,GRPH,4,0,N,,")
    assert layout.mixed_codec is None and "|" + "ccsid" not in layout_text(layout)
    image = struct.pack(">H", 1) + b"\xc1" + b"\x45\x41\x45\x42"
    decoded = decode_data([data_field(image)], ["I"], layout)
    assert decoded.after == [["A", "45414542"]]
    assert decoded.warnings == [["column 2: DBCS graphic data shown as hex"]]


def test_a_broken_shift_out_run_is_an_error_not_a_guess():
    layout = parse_layout("E|cp037|latin-1|hfp|Y|1,VCHR,20,0,N,M,|ccsid:930")
    image = struct.pack(">H", 2) + b"\x0e\x45"  # shift-out, then half a double-byte character
    decoded = decode_data([data_field(image)], ["I"], layout)
    assert "not a valid VCHR value" in decoded.errors[0]

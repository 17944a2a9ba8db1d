"""LLDF headers: the batch decoder and the construct layout against hand-laid bytes."""

from dataclasses import replace

import numpy as np

from tests.logmaster.handmade import EXPECTED_HEADER, data_field, lldf_header, rdw
from udfs.batch import field_specs
from udfs.framing import FrameBatch
from udfs.logmaster.batch_records import decode_data_batch
from udfs.logmaster.control import DOCUMENTED_LAYOUT, HeaderLayout
from udfs.logmaster.layouts import LLDF_HEADER


def batch_of(*records: bytes) -> FrameBatch:
    framed = [rdw(r) for r in records]
    starts = np.cumsum([0] + [len(f) for f in framed[:-1]])
    return FrameBatch(b"".join(framed), 1000, starts, np.array([len(f) for f in framed]))


def decoded_rows(*records: bytes, layout: HeaderLayout = DOCUMENTED_LAYOUT) -> list[dict]:
    return decode_data_batch(batch_of(*records), layout, "cp037", "ext", "f").to_pylist()


def test_every_header_field_decodes_from_its_spec_offset():
    row = decoded_rows(lldf_header().bytes() + data_field(b"\x01"))[0]
    assert row["decode_error"] is None
    for column, expected in EXPECTED_HEADER.items():
        assert row[column] == expected, column


def test_construct_layout_agrees_with_the_batch_decoder():
    raw = lldf_header().bytes()
    parsed = LLDF_HEADER.parse(raw)
    for spec in field_specs(LLDF_HEADER):
        assert parsed[spec.name] == EXPECTED_HEADER[spec.column], spec.name
    assert LLDF_HEADER.build(parsed) == raw.replace(raw[0xBC:0xC0], bytes(4))


def test_data_follows_the_header_length_not_the_documented_size():
    # 003_…: the header grows between versions; LENGTH says where DATA starts.
    header = lldf_header().u16(0, 300).bytes() + bytes(12)
    data = data_field(b"\x00\x00\x00\x07")
    row = decoded_rows(header + data)[0]
    assert row["decode_error"] is None
    assert row["data_offset"] == 4 + 300
    assert row["data_length"] == len(data)
    assert row["record_bytes"][row["data_offset"] :] == data


def test_segment_data_is_seglen_bytes():
    header = lldf_header().u16(0xB6, 5).u16(0xB8, 3).u16(0xBA, 2).bytes()
    row = decoded_rows(header + b"ABCDE" + b"pad")[0]
    assert (row["totalsegs"], row["segnum"], row["data_length"]) == (3, 2, 5)


def test_seglen_beyond_the_record_is_quarantined():
    header = lldf_header().u16(0xB6, 50).u16(0xB8, 3).bytes()
    row = decoded_rows(header + b"ABCDE")[0]
    assert "SEGLEN 50 exceeds the 5 bytes after the header" in row["decode_error"]
    assert "offset 1000" in row["decode_error"]


def test_short_record_and_bad_timestamp_are_reasons_not_crashes():
    bad_time = lldf_header().hexa(0x3C, "2024130607080900000000000000000000").bytes()
    rows = decoded_rows(b"\x01\x20" + bytes(50), bad_time + data_field(), lldf_header().bytes())
    assert "shorter than the 288-byte header" in rows[0]["decode_error"]
    assert "TIMESTAMP is not a valid BIN(17) timestamp" in rows[1]["decode_error"]
    assert rows[2]["decode_error"] is None
    assert [r["raw_offset"] for r in rows] == [1000, 1000 + 56, 1000 + 56 + 4 + 288 + 2]


def test_xhdf_layout_reads_a_moved_field():
    header = lldf_header().u16(0, 300).bytes() + "DM".encode("cp037") + bytes(10)
    moved = tuple(
        replace(spec, offset=288) if spec.name == "CHANGE_TYPE" else spec
        for spec in DOCUMENTED_LAYOUT.fields
    )
    row = decoded_rows(header, layout=HeaderLayout(moved, "XHDF"))[0]
    assert row["change_type"] == "DM"


def test_non_ascii_header_text_decodes():
    header = lldf_header().char(0xEA, "MÜLLER", 8).bytes()
    assert decoded_rows(header + data_field())[0]["authid"] == "MÜLLER"

"""Catalog events (CHANGE TYPE CO, CM, SC, E): their DATA read from bytes laid by hand.

E follows the spec (003_… DATA: "For exchange, contains 2-byte length of clone table owner,
owner of clone table, 2-byte length of clone table name, name of clone table"); CO/CM/SC are
logmart's reading (udfs/logmaster/catalog.py): u16 text length, then EBCDIC text.
"""

import struct

import pyarrow as pa

from udfs.logmaster.catalog import catalog_event, catalog_event_arrow


def u16(n: int) -> bytes:
    return struct.pack(">H", n)


def ebcdic(text: str, codec: str = "cp037") -> bytes:
    return text.encode(codec)


# "CREATE INDEX" in cp037, byte by byte: C3 D9 C5 C1 E3 C5 40 C9 D5 C4 C5 E7
CREATE_INDEX = bytes.fromhex("C3D9C5C1E3C540C9D5C4C5E7")


def test_co_text_is_a_statement_in_ebcdic():
    data = u16(2 + 2 + 12) + u16(12) + CREATE_INDEX
    assert catalog_event(data, "CO", "cp037") == {
        "text": "CREATE INDEX",
        "clone_owner": None,
        "clone_name": None,
        "error": None,
    }


def test_cm_and_sc_texts_and_a_code_page_with_other_letters():
    text = "-START DATABASE(DBÄ)"
    raw = ebcdic(text, "cp273")
    data = u16(4 + len(raw)) + u16(len(raw)) + raw
    assert catalog_event(data, "CM", "cp273")["text"] == text
    assert catalog_event(data, "SC ", "cp273")["text"] == text  # CHAR(2) blank padded


def test_exchange_names_the_clone_table():
    owner, name = ebcdic("SALES"), ebcdic("ORDERS_CLONE")
    data = u16(2 + 2 + 5 + 2 + 12) + u16(5) + owner + u16(12) + name
    out = catalog_event(data, "E ", "cp037")
    assert (out["clone_owner"], out["clone_name"], out["text"], out["error"]) == (
        "SALES",
        "ORDERS_CLONE",
        None,
        None,
    )


def test_bytes_that_do_not_fit_say_why_and_give_no_text():
    too_long = u16(2 + 2 + 12) + u16(40) + CREATE_INDEX
    out = catalog_event(too_long, "CO", "cp037")
    assert out["text"] is None and "past the end of DATA" in out["error"]
    wrong_total = u16(99) + u16(12) + CREATE_INDEX
    assert (
        "says it is 99 bytes long but holds 16"
        in catalog_event(wrong_total, "CO", "cp037")["error"]
    )
    left_over = u16(2 + 2 + 12 + 3) + u16(12) + CREATE_INDEX + b"\x40\x40\x40"
    assert "3 bytes are left" in catalog_event(left_over, "CO", "cp037")["error"]
    assert "ends at byte 1" in catalog_event(b"\x00", "CO", "cp037")["error"]
    assert catalog_event(None, "CO", "cp037")["error"] == "the record has no DATA"
    assert "not a catalog event" in catalog_event(u16(2), "UB", "cp037")["error"]


def test_arrow_batch_reads_each_row_with_its_code_page():
    co = u16(16) + u16(12) + CREATE_INDEX
    out = catalog_event_arrow(
        pa.array([co, co, co, None], pa.binary()),
        pa.array(["CO", "CO", "CO", "CO"]),
        pa.array(["ccsid:37", "", "no-such-codec", "cp037"]),
    ).to_pylist()
    assert [row["text"] for row in out] == ["CREATE INDEX", "CREATE INDEX", None, None]
    assert "unknown code page 'no-such-codec'" in out[2]["error"]
    assert out[3]["error"] == "the record has no DATA"

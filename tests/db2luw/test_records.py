"""decode_record: the real Db2 10.x record, every function id, transaction manager records,
compensation headers, framing, and the errors for inconsistent bytes."""

from __future__ import annotations

import struct

import pytest

from tests.db2luw import handmade as h
from udfs.db2luw.records import (
    DMS_FUNCTIONS,
    DOM_FUNCTIONS,
    RECORD_KEYS,
    DdlStatement,
    ddl_statements,
    decode_record,
    iter_log_records,
)
from udfs.errors import DecodeError


def _message_id(value) -> str | None:
    """Name error cases after the message they expect, not after their bytes."""
    return "-".join(value.split()[:4]) if isinstance(value, str) else "bytes"


BYTE_ORDERS = ("little", "big")


def test_real_db2_10_insert_record():
    out = decode_record(h.REAL_RECORD)
    assert set(out) == set(RECORD_KEYS)
    expected = {
        "record_length": 526, "record_type": 0x004E, "record_type_name": "normal",
        "flags": 0x0002, "propagatable": True, "redo_always": False, "lsn": 105730662,
        "lfs": 4421964, "lso_previous": 0, "tid": "0000004c1a7e", "log_stream_id": 0,
        "header_length": 40, "component": "dms", "component_identifier": 1,
        "function_identifier": 162, "function_name": "insert_record", "kind": "row_insert",
        "table_space_identifier": 2, "table_identifier": 1287, "catalog_table": False,
        "lriudflags": 0, "decomposed_update": False, "rid": "070002000000", "free_space": 284,
        "record_offset": 300, "row_count": 1,
    }  # fmt: skip
    assert {k: out[k] for k in expected} == expected
    image = out["after_image"]
    assert len(image) == 466
    assert (image[0], int.from_bytes(image[2:4], "little")) == (0, 466)
    assert (image[4], int.from_bytes(image[6:8], "little")) == (1, 152)  # formatted, fixed 152


# --- every function id ------------------------------------------------------------------------


def bodies(bo: str) -> dict[int, bytes]:
    """A well-formed DMS body for every DMS function id, packed at the spec offsets."""
    img = h.formatted(bo, b"\x01\x02\x03\x04")
    rid = b"\x07\0\2\0\0\0"
    col = h.column(bo, 0x101, 30, 1, 4)
    lob = h.lob(bo, 1024, 200)
    clob = h.column(bo, 0x109, 0, 1, 8)
    description = struct.pack(bo + "BBH", 0x10, 0, 2) + col + clob + lob
    empty_page = struct.pack(bo + "HHH6sHIH", 0, len(img), 9, rid, 0, 64, 300) + img
    multiple = struct.pack(bo + "2sHHHHI", bytes(2), 2, 5, 2 * len(img), 2 * (8 + len(img)), 7)
    adds = struct.pack(bo + "HII", 0, 1, 2) + col + col + clob + lob
    out = {
        162: h.insert_body(bo, 162, img),
        161: h.insert_body(bo, 161, img),
        111: h.insert_body(bo, 111, img),
        112: h.insert_body(bo, 112, img),
        163: h.insert_body(bo, 163, img) + h.insert_body(bo, 163, img)[:20] + img,
        110: h.dms(bo, 110) + struct.pack(bo + "HHH6s", 0, 12, 284, rid),
        165: h.dms(bo, 165) + empty_page,
        164: h.dms(bo, 164) + empty_page,
        166: h.dms(bo, 166) + empty_page,
        131: h.dms(bo, 131) + struct.pack(bo + "HHH6sHI", 0, 12, 9, rid, 0, 64),
        167: h.dms(bo, 167) + multiple + 2 * (rid + struct.pack(bo + "H", 300) + img),
        168: h.dms(bo, 168) + struct.pack(bo + "2sHHHHI", bytes(2), 1, 5, 0, 8, 7) + rid
        + struct.pack(bo + "H", 300),
        128: h.dms(bo, 128) + struct.pack(bo + "Q", 9) + bytes(74)
        + struct.pack(bo + "I", len(description)) + description,
        113: h.dms(bo, 113) + struct.pack(bo + "H", 1) + col + col,
        115: h.dms(bo, 115) + struct.pack(bo + "H", 1) + col + col,
        116: h.dms(bo, 116) + struct.pack(bo + "H", 1) + clob + clob,
        119: h.dms(bo, 119) + struct.pack(bo + "H", 1) + clob + clob,
        124: h.dms(bo, 124) + struct.pack(bo + "QQ", 0x10011, 0x00001),
        137: h.dms(bo, 137) + struct.pack(bo + "HHHH6sHH", 3, 4, 0, 5, bytes(6), 0, 2),
        108: h.dms(bo, 108) + struct.pack(bo + "HHHH6sHH", 3, 4, 0, 5, bytes(6), 0, 21),
    }  # fmt: skip
    for function in (102, 104, 169, 170):
        out[function] = h.dms(bo, function) + adds
    for function in (122, 123, 211, 212):
        out[function] = h.dms(bo, function)
    return out


def dom_bodies(bo: str) -> dict[int, bytes]:
    out = {
        2: h.dom(bo, 2) + struct.pack(bo + "HHI", 0, 3, 4711),
        3: h.dom(bo, 3) + struct.pack(bo + "HHI", 0, 3, 4711),
        11: h.dom(bo, 11) + bytes(8),
        12: h.dom(bo, 12) + bytes(4) + struct.pack(bo + "6H", 1, 2, 3, 4, 5, 6),
        35: h.dom(bo, 35) + bytes(476) + struct.pack(bo + "3H", 7, 8, 9),
    }
    for function in (4, 5, 101, 130):
        out[function] = h.dom(bo, function) + bytes(72)
    return out


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
@pytest.mark.parametrize("function", sorted(DMS_FUNCTIONS))
def test_every_dms_function(byteorder, function):
    bo = h.order(byteorder)
    out = decode_record(h.record(bo, bodies(bo)[function]), byteorder)
    name, kind, _ = DMS_FUNCTIONS[function]
    assert (out["component"], out["function_identifier"]) == ("dms", function)
    assert (out["function_name"], out["kind"]) == (name, kind)
    assert (out["table_space_identifier"], out["table_identifier"]) == (2, 1287)
    assert out["note"] is None and out["payload"] is None


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
@pytest.mark.parametrize("function", sorted(DOM_FUNCTIONS))
def test_every_dom_function(byteorder, function):
    bo = h.order(byteorder)
    out = decode_record(h.record(bo, dom_bodies(bo)[function]), byteorder)
    assert (out["component"], out["function_identifier"]) == ("dom", function)
    assert out["kind"] == DOM_FUNCTIONS[function][1]
    assert (out["table_space_identifier"], out["table_identifier"], out["object_identifier"]) == (
        2, 14, 99)  # fmt: skip


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_details_of_row_and_ddl_records(byteorder):
    bo = h.order(byteorder)
    b = bodies(bo)
    update = decode_record(h.record(bo, b[163]), byteorder)
    assert update["before_image"] == update["after_image"] == h.formatted(bo, b"\x01\x02\x03\x04")
    assert update["new_rid"] == update["rid"] == "070002000000"
    multiple = decode_record(h.record(bo, b[167]), byteorder)
    assert multiple["row_count"] == 2 and len(multiple["images"]) == 2
    assert multiple["rids"] == ["070002000000"] * 2 and multiple["pool_page_number"] == 7
    assert decode_record(h.record(bo, b[168]), byteorder)["rids"] == ["070002000000"]
    undo = decode_record(h.record(bo, b[110]), byteorder)
    assert (undo["rid"], undo["before_image"], undo["after_image"]) == ("070002000000", None, None)
    mdc = decode_record(h.record(bo, b[165]), byteorder)
    assert mdc["first_page_of_the_block"] == 64 and mdc["after_image"] is not None
    init = decode_record(h.record(bo, b[128]), byteorder)
    assert init["file_create_lsn"] == 9
    varchar, clob = init["new_columns"]
    assert (varchar["type_name"], varchar["length"], varchar["nullable"]) == ("VARCHAR", 30, True)
    assert (clob["type_name"], clob["lob_length"], clob["lob_inline_length"]) == ("CLOB", 1024, 200)
    add = decode_record(h.record(bo, b[102]), byteorder)
    assert len(add["old_columns"]) == 1 and len(add["new_columns"]) == 2
    assert add["new_columns"][1]["lob_logged"] is True
    alter = decode_record(h.record(bo, b[124]), byteorder)
    assert alter["altered_attributes"] == ["propagation", "value_compression", "append_mode"]
    assert alter["attributes_on"] == ["propagation"]
    column = decode_record(h.record(bo, b[113]), byteorder)
    assert column["column_id"] == 1 and column["new_columns"][0]["type_name"] == "VARCHAR"
    partition = decode_record(h.record(bo, b[108]), byteorder)
    assert (partition["partition_action_name"], partition["data_partition_identifier"]) == (
        "detach_immediate_complete", 5)  # fmt: skip
    index = decode_record(h.record(bo, dom_bodies(bo)[2]), byteorder)
    assert (index["index_token"], index["index_root_page"]) == (3, 4711)


def test_decimal_descriptor_is_precision_then_scale_in_either_byte_order():
    for byteorder in BYTE_ORDERS:
        bo = h.order(byteorder)
        description = struct.pack(bo + "BBH", 0, 0, 1) + h.decimal_column(bo, 11, 2, 1, 0)
        body = (h.dms(bo, 128) + struct.pack(bo + "Q", 1) + bytes(74)
                + struct.pack(bo + "I", len(description)) + description)  # fmt: skip
        column = decode_record(h.record(bo, body), byteorder)["new_columns"][0]
        assert (column["type_name"], column["precision"], column["scale"]) == ("DECIMAL", 11, 2)


def test_decomposed_update_and_named_lriud_flags():
    bo = "<"
    delete = decode_record(h.record(bo, h.insert_body(bo, 161, h.formatted(bo, b"\0"), 0x8000)))
    assert delete["kind"] == "row_delete" and delete["decomposed_update"] is True
    trigger = decode_record(h.record(bo, h.insert_body(bo, 162, h.formatted(bo, b"\0"), 0x2000)))
    assert trigger["trigger"] and not trigger["decomposed_update"]


def test_catalog_table_records_are_flagged():
    bo = "<"
    out = decode_record(h.record(bo, h.insert_body(bo, 162, h.formatted(bo, b"\0"), ts=0)))
    assert out["catalog_table"] is True and out["kind"] == "row_insert"


# --- transaction manager and compensation -----------------------------------------------------


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_commit_abort_and_pending_list(byteorder):
    bo = h.order(byteorder)
    commit = decode_record(h.record(bo, struct.pack(bo + "QH", 1709280021, 5) + b"BATCH",
                                    rtype=0x84), byteorder)  # fmt: skip
    assert (commit["kind"], commit["component"]) == ("commit", "transaction_manager")
    assert commit["commit_time"] == "2024-03-01 08:00:21" and commit["authid"] == "BATCH"
    assert commit["commit_time_epoch"] == 1709280021
    bare = decode_record(h.record(bo, struct.pack(bo + "Q", 0), rtype=0x84, flags=0), byteorder)
    assert (bare["commit_time"], bare["authid"]) == ("1970-01-01 00:00:00", None)
    pending = decode_record(
        h.record(bo, struct.pack(bo + "QH", 60, 2) + b"AB" + b"\x01\x02\x03", rtype=0x8A),
        byteorder,
    )
    assert (pending["kind"], pending["record_type_name"]) == ("commit", "local_pending_list")
    assert pending["payload"] == b"\x01\x02\x03" and pending["authid"] == "AB"
    abort = decode_record(h.record(bo, struct.pack(bo + "H", 3) + b"BOB", rtype=0x41), byteorder)
    assert (abort["kind"], abort["authid"]) == ("abort", "BOB")


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_compensation_headers_are_56_or_64_bytes(byteorder):
    bo = h.order(byteorder)
    body = h.insert_body(bo, 111, h.formatted(bo, b"\x05"))
    plain = struct.pack(bo + "H6sQ", 3, bytes(6), 5000)
    out = decode_record(h.record(bo, body, rtype=0x43, flags=0, extension=plain), byteorder)
    assert (out["header_length"], out["compensation_lso"], out["extra_lso"]) == (56, 5000, None)
    assert out["extra_log_stream_id"] == 3 and out["kind"] == "undo_delete"
    propagated = plain + struct.pack(bo + "Q", 6000)
    out = decode_record(h.record(bo, body, rtype=0x43, flags=2, extension=propagated), byteorder)
    assert (out["header_length"], out["extra_lso"]) == (64, 6000)
    assert out["after_image"] == h.formatted(bo, b"\x05")


def test_undo_of_a_ddl_record_is_named_undo():
    bo = "<"
    body = h.dms(bo, 124) + struct.pack(bo + "QQ", 1, 0)
    extension = struct.pack(bo + "H6sQ", 0, bytes(6), 1) + struct.pack(bo + "Q", 2)
    out = decode_record(h.record(bo, body, rtype=0x43, extension=extension))
    assert out["kind"] == "undo_ddl_alter_table"


def test_every_header_flag_is_named():
    out = decode_record(h.record("<", h.dms("<", 211), flags=0x0A17))
    assert [k for k in ("redo_always", "propagatable", "temp_table", "singular_transaction",
                        "runtime_rollback", "pseudo_compensation") if out[k]] == [
        "redo_always", "propagatable", "temp_table", "singular_transaction",
        "runtime_rollback", "pseudo_compensation"]  # fmt: skip


# --- unknown and inconsistent ----------------------------------------------------------------


def test_unknown_function_and_record_type_are_kept_not_rejected():
    out = decode_record(h.record("<", h.dms("<", 250) + b"\x01\x02"))
    assert (out["kind"], out["function_name"], out["payload"]) == (
        "unknown", "unknown", h.dms("<", 250) + b"\x01\x02")  # fmt: skip
    assert "250" in out["note"]
    other = decode_record(h.record("<", b"\x00\x01", rtype=0x0049))
    assert other["kind"] == "unknown" and other["lsn"] == 1000


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (h.REAL_RECORD[:30], "shorter than its 40-byte header"),
        (h.REAL_RECORD[:-1], "says record length 526"),
        (h.record("<", b"\x07\x01\x00\x00\x00\x00"), "unknown component identifier 7"),
        (h.record("<", h.dms("<", 162) + bytes(10)), "needs 20 bytes"),
        (h.record("<", h.insert_body("<", 162, h.formatted("<", b"\x01")) + b"\x00"),
         "ends at byte"),
        (h.record("<", h.insert_body("<", 162, h.formatted("<", b"\x01"))[:-1]), "remain"),
        (h.record("<", h.dms("<", 110) + bytes(10)), "undo insert needs 18 bytes"),
        (h.record("<", h.dms("<", 167) + struct.pack("<2sHHHHI", bytes(2), 2, 0, 9, 0, 0)
                  + bytes(6) + b"\0\0" + h.formatted("<", b"\x01")),
         "insert multiple records, record 2 of 2 needs 8 bytes"),
        (h.record("<", h.dms("<", 128) + bytes(8) + bytes(74) + struct.pack("<I", 99)),
         "table description length says 99"),
        (h.record("<", h.dms("<", 102) + struct.pack("<HII", 0, 1, 1) + bytes(8)),
         "column descriptors need"),
        (h.record("<", h.dms("<", 124) + bytes(8)), "alter table attribute record needs 22"),
        (h.record("<", struct.pack("<QH", 1, 9) + b"AB", rtype=0x84), "runs past the end"),
        (h.record("<", h.dom("<", 101) + bytes(10)), "needs 84 bytes"),
        (h.record("<", bodies("<")[163][:-10]), "update record new image"),
        (h.record("<", b"\x01\xa2\x02", extension=bytes(10), rtype=0x43), "no room"),
    ],
    ids=_message_id,
)  # fmt: skip
def test_inconsistent_bytes_raise_decode_errors(data, message):
    """Never IndexError / struct.error: a DecodeError saying what was wrong."""
    with pytest.raises(DecodeError, match=message):
        decode_record(data)


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
@pytest.mark.parametrize("total", [0, 9, 99, 0xFFFF])
def test_insert_multiple_with_another_total_still_gives_its_rows(byteorder, total):
    """Issue 14 item 5: Table 25's "Sum of record lengths" is not defined further; rows that
    each decode from their own record header are kept, the mismatch becomes a note."""
    bo = h.order(byteorder)
    first, second = h.formatted(bo, b"\x01\x02"), h.formatted(bo, b"\x03\x04\x05")
    rid = b"\x07\x00\x02\x00\x00\x00"
    body = (
        h.dms(bo, 167)
        + struct.pack(bo + "2sHHHHI", bytes(2), 2, 5, total, 0, 7)  # Table 25 at offsets 6..20
        + rid + struct.pack(bo + "H", 300) + first  # Table 26: RID, record offset, header+data
        + rid + struct.pack(bo + "H", 320) + second
    )  # fmt: skip
    decoded = decode_record(h.record(bo, body), byteorder)
    assert decoded["images"] == [first, second] and decoded["row_count"] == 2
    assert decoded["after_image"] == first and decoded["pool_page_number"] == 7
    assert "sum of record lengths says" in decoded["note"]
    assert f"says {total}, the record headers hold {len(first) + len(second)}" in decoded["note"]


def test_insert_multiple_with_the_images_total_has_no_note():
    first = h.formatted("<", b"\x01\x02")
    body = (h.dms("<", 167) + struct.pack("<2sHHHHI", bytes(2), 1, 5, len(first), 0, 7)
            + bytes(6) + b"\x2c\x01" + first)  # fmt: skip
    assert decode_record(h.record("<", body))["note"] is None


def test_longer_fixed_records_keep_the_extra_bytes():
    out = decode_record(h.record("<", h.dms("<", 122) + b"\x01\x02"))
    assert out["payload"] == b"\x01\x02" and "2 bytes beyond" in out["note"]


# --- db2ReadLog framing ----------------------------------------------------------------------


def framed(bo: str, records: list[bytes], framing: str) -> bytes:
    out = b""
    for rec in records:
        lsn = struct.unpack_from(bo + "Q", rec, 8)[0]
        if framing == "filter":
            out += struct.pack(bo + "6QIi", 1, 77, lsn, 2, 0, 0, len(rec), 0) + rec
        else:
            out += struct.pack(bo + "Q", lsn) + rec
    return out


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
@pytest.mark.parametrize("framing", ["filter", "lsn"])
def test_framing_splits_records(byteorder, framing):
    bo = h.order(byteorder)
    recs = [h.record(bo, h.dms(bo, 211), lsn=5), h.record(bo, bodies(bo)[162], lsn=9)]
    out = list(iter_log_records(framed(bo, recs, framing), framing, byteorder))
    assert [f.record for f in out] == recs and [f.lsn for f in out] == [5, 9]
    assert out[1].offset == (56 if framing == "filter" else 8) + len(recs[0])


@pytest.mark.parametrize(
    ("written", "read", "hint"),
    [
        (("<", "filter"), ("lsn", "little"), "framing='filter' byteorder='little'"),
        (("<", "lsn"), ("filter", "little"), "framing='lsn' byteorder='little'"),
        ((">", "filter"), ("filter", "little"), "framing='filter' byteorder='big'"),
    ],
)
def test_wrong_framing_or_byte_order_is_reported(written, read, hint):
    bo, framing = written
    data = framed(bo, [h.record(bo, h.dms(bo, 211), lsn=5)], framing)
    with pytest.raises(DecodeError, match=hint):
        list(iter_log_records(data, *read))


def test_truncated_buffer_is_reported():
    data = framed("<", [h.record("<", h.dms("<", 211), lsn=5)], "filter")
    with pytest.raises(DecodeError, match="too few"):
        list(iter_log_records(data + bytes(20), "filter", "little"))


# --- RDS DDL statement records (Relation manager Table 3; docs/db2luw.md interpretation 20) ---


@pytest.mark.parametrize("byteorder", BYTE_ORDERS)
def test_ddl_statement_record_gives_its_text_entries_and_identifiers(byteorder):
    bo = h.order(byteorder)
    text = b"ALTER TABLE SALES.ACCOUNTS ADD COLUMN TIER CHAR(1)"
    body = h.rds_statement_body(bo, text, len(text), len(text),
                                entries=((1, b"SALES"), (3, b"BOB ")))  # fmt: skip
    # by hand: the statement text starts after 16 + 2 * 4 + 5 + 4 + 8 bytes
    assert body[16 + 8 + 9 + 8 :] == text
    out = decode_record(h.record(bo, body, lsn=5000), byteorder)
    assert (out["component"], out["function_name"], out["kind"]) == (
        "rds", "ddl_statement", "ddl_statement")  # fmt: skip
    assert (out["table_space_identifier"], out["table_identifier"], out["rds_flags"]) == (2, 7, 0)
    assert (out["ddl_operation_identifier"], out["ddl_object_identifier"], out["ddl_options"]) == (
        2, 1, 0)  # fmt: skip
    assert out["ddl_entries"] == [{"entry_type": 1, "entry_text": "SALES"},
                                  {"entry_type": 3, "entry_text": "BOB"}]  # fmt: skip
    assert (out["statement_text_left"], out["statement_text_length"]) == (len(text), len(text))
    assert out["statement_text"] == text and out["payload"] is None
    (statement,) = ddl_statements([out])
    assert statement == DdlStatement(out["tid"], 5000, text.decode(), True, (5000,))


def test_a_statement_split_over_records_is_put_back_together_before_decoding():
    bo = "<"
    text = "CREATE TABLE S.T (NAME VARCHAR(10) DEFAULT 'Zürich')".encode()
    cut = text.index("ü".encode()) + 1  # the two bytes of ü fall in two records
    first = h.rds_statement_body(bo, text[:cut], len(text), len(text), entries=((1, b"S"),))
    second = h.rds_statement_body(bo, text[cut:], len(text) - cut, len(text))
    other = h.rds_statement_body(bo, b"DROP TABLE X", 12, 12)
    records = [
        decode_record(h.record(bo, second, lsn=30)),
        decode_record(h.record(bo, other, lsn=20, tid=bytes.fromhex("000000000099"))),
        decode_record(h.record(bo, first, lsn=10)),
    ]
    assert records[0]["statement_text"] == text[cut:]
    statements = ddl_statements(records)
    assert [(s.lsn, s.text, s.complete, s.lsns) for s in statements] == [
        (10, text.decode(), True, (10, 30)),
        (20, "DROP TABLE X", True, (20,)),
    ]


def test_a_statement_missing_a_piece_has_no_text():
    bo = "<"
    piece = h.rds_statement_body(bo, b"DROP TABLE ", 20, 20)  # 9 bytes never come
    (statement,) = ddl_statements([decode_record(h.record(bo, piece, lsn=7))])
    assert (statement.text, statement.complete) == (None, False)


def test_undo_ddl_statement_is_an_undo_and_not_a_statement():
    bo = "<"
    body = h.rds_statement_body(bo, b"DROP TABLE X", 12, 12, function=5)
    extension = struct.pack(bo + "H6sQ", 0, bytes(6), 1) + struct.pack(bo + "Q", 2)
    out = decode_record(h.record(bo, body, rtype=0x43, extension=extension))
    assert (out["kind"], out["statement_text"]) == ("undo_ddl_statement", b"DROP TABLE X")
    assert ddl_statements([out]) == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (h.rds_statement_body("<", b"DROP TABLE X", 5, 12), "holds 12 bytes of text"),
        (h.rds_statement_body("<", b"X", 3, 2), "3 are left of a 2-byte"),
        (h.rds_statement_body("<", b"", 0, 0)[:20], "needs 24 bytes"),
        (
            struct.pack("<BBHHHHHHH", 11, 4, 2, 7, 0, 1, 1, 0, 1) + struct.pack("<HH", 1, 50),
            "entry text of type 1",
        ),
    ],
    ids=["piece-longer-than-left", "left-over-total", "no-text-lengths", "entry-cut-off"],
)
def test_inconsistent_ddl_statement_records_raise(body, message):
    with pytest.raises(DecodeError, match=message):
        decode_record(h.record("<", body))

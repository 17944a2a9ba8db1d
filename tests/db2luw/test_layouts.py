"""Every Db2 LUW construct layout, checked four ways (as construct's own tests do): parse(bytes)
== object, build(object) == bytes, sizeof, and the same on the ``.compile()``d form; for both
byte orders, from bytes packed by hand at the spec offsets."""

from __future__ import annotations

import struct

import pytest
from construct import Construct, SizeofError

from tests.db2luw import handmade as h
from udfs.db2luw.layouts import fixed_format, layouts


def plain(value):
    """Containers -> dicts without construct's private keys, recursively."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def dms_obj(function: int, ts: int = 2, table: int = 1287) -> dict:
    return {"component_identifier": 1, "function_identifier": function,
            "table_space_identifier": ts, "table_identifier": table}  # fmt: skip


def dom_obj(function: int) -> dict:
    return {
        "component_identifier": 4,
        "function_identifier": function,
        "object_table_space_identifier": 2,
        "object_identifier": 99,
        "table_space_identifier": 2,
        "table_identifier": 14,
        "object_type": 1,
        "flags": 0,
    }


def image_obj(data: bytes) -> dict:
    return {"record_header": {"record_type": data[0], "reserved": data[1],
                              "record_length": len(data)}, "data": data}  # fmt: skip


COLUMN = {"field_type": 0x101, "length": 30, "null_flag": 1, "field_offset": 4}
LOB = {"length": 1024, "inline_length": 200, "log_flag": 1, "reserved": 0}


def cases(byteorder: str) -> list[tuple[str, bytes, dict, int | None]]:
    """(layout name, bytes, object, sizeof or None when variable)."""
    bo = h.order(byteorder)
    img = h.formatted(bo, b"\x01\x02\x03\x04")
    img2 = h.formatted(bo, b"\x09\x08")
    col = h.column(bo, 0x101, 30, 1, 4)
    clob = h.column(bo, 0x109, 0, 1, 8)
    lob = h.lob(bo, 1024, 200)
    ins_head = struct.pack(bo + "HHH6sH", 0x8000, len(img), 284, b"\x07\0\2\0\0\0", 300)
    rid = b"\x07\0\2\0\0\0"
    ins = {"lriudflags": 0x8000, "record_length": len(img), "free_space": 284, "rid": rid,
           "record_offset": 300}  # fmt: skip
    description = struct.pack(bo + "BBH", 0x10, 0, 2) + col + clob + lob
    described = {"record_type": 0x10, "internal": 0, "number_of_columns": 2,
                 "column_descriptors": [COLUMN, {**COLUMN, "field_type": 0x109, "length": 0,
                                                 "field_offset": 8}],
                 "lob_column_descriptors": [LOB]}  # fmt: skip
    clob_obj = {**COLUMN, "field_type": 0x109, "length": 0, "field_offset": 8}
    header = struct.pack(bo + "IHHQQQ6sH", 526, 0x4E, 2, 105730662, 4421964, 0,
                         bytes.fromhex("0000004c1a7e"), 0)  # fmt: skip
    return [
        ("log_manager_header", header,
         {"record_length": 526, "record_type": 0x4E, "flags": 2, "lsn": 105730662,
          "lfs": 4421964, "lso_previous": 0, "tid": bytes.fromhex("0000004c1a7e"),
          "log_stream_id": 0}, 40),
        ("compensation_extension", struct.pack(bo + "H6sQ", 1, bytes(6), 4242),
         {"extra_log_stream_id": 1, "reserved": bytes(6), "compensation_lso": 4242}, 16),
        ("propagatable_compensation_extension", struct.pack(bo + "Q", 9), {"extra_lso": 9}, 8),
        ("normal_commit", struct.pack(bo + "QH", 1700000000, 7) + b"APPUSER",
         {"commit_time": 1700000000, "authid_length": 7, "authid": b"APPUSER"}, None),
        ("commit_time_only", struct.pack(bo + "Q", 5), {"commit_time": 5}, 8),
        ("local_pending_list", struct.pack(bo + "QH", 6, 2) + b"AB" + b"\x01\x02",
         {"commit_time": 6, "authid_length": 2, "authid": b"AB", "pending_list": b"\x01\x02"},
         None),
        ("normal_abort", struct.pack(bo + "H", 3) + b"BOB",
         {"authid_length": 3, "authid": b"BOB"}, None),
        ("dms_log_record_header", h.dms(bo, 162), dms_obj(162), 6),
        ("dom_log_record_header", h.dom(bo, 101), dom_obj(101), 12),
        ("rds_log_record_header", struct.pack(bo + "BBHHH", 11, 4, 2, 7, 1),
         {"component_identifier": 11, "function_identifier": 4, "table_space_identifier": 2,
          "table_identifier": 7, "flags": 1}, 8),
        ("ddl_stmt_record_entry", struct.pack(bo + "HH", 1, 6),
         {"entry_type": 1, "entry_length": 6}, 4),
        ("ddl_statement",  # Relation manager Table 3: fixed part, 2 entries, their texts,
         # text left, text length, then the text (interpretation 20 of docs/db2luw.md)
         struct.pack(bo + "BBHHH", 11, 4, 2, 7, 0) + struct.pack(bo + "HHHH", 1, 1, 0, 2)
         + struct.pack(bo + "HHHH", 1, 5, 3, 3) + b"SALESBOB"
         + struct.pack(bo + "II", 14, 14) + b"DROP TABLE T1X",
         {"log_header": {"component_identifier": 11, "function_identifier": 4,
                         "table_space_identifier": 2, "table_identifier": 7, "flags": 0},
          "operation_identifier": 1, "object_identifier": 1, "options": 0, "num_entries": 2,
          "entries": [{"entry_type": 1, "entry_length": 5}, {"entry_type": 3, "entry_length": 3}],
          "entry_text": [b"SALES", b"BOB"], "ddl_statement_text_left": 14,
          "ddl_statement_text_length": 14, "ddl_statement_text": b"DROP TABLE T1X"}, None),
        ("record_header", struct.pack(bo + "BBH", 0, 0, 466),
         {"record_type": 0, "reserved": 0, "record_length": 466}, 4),
        ("formatted_user_data_header", struct.pack(bo + "BBH", 1, 0, 152),
         {"record_type": 1, "reserved": 0, "fixed_length": 152}, 4),
        ("value_compressed_data_header", struct.pack(bo + "BBH", 2, 0, 5),
         {"record_type": 2, "reserved": 0, "number_of_columns": 5}, 4),
        ("record_header_and_data", img, image_obj(img), None),
        ("insert_record", h.dms(bo, 162) + ins_head + img,
         {"log_header": dms_obj(162), **ins, "record_header_and_data": image_obj(img)}, None),
        ("rollback_insert_record", h.dms(bo, 110) + struct.pack(bo + "HHH6s", 0, 12, 284, rid),
         {"log_header": dms_obj(110), "internal": 0, "record_length": 12, "free_space": 284,
          "rid": rid}, 18),
        ("update_record",
         h.dms(bo, 163) + ins_head + img + h.dms(bo, 163)
         + struct.pack(bo + "HHH6sH", 0, len(img2), 280, rid, 300) + img2,
         {"log_header": dms_obj(163), **ins, "old_record_header_and_data": image_obj(img),
          "new_log_header": dms_obj(163), "new_internal": 0, "new_record_length": len(img2),
          "new_free_space": 280, "new_rid": rid, "new_record_offset": 300,
          "new_record_header_and_data": image_obj(img2)}, None),
        ("insert_record_to_empty_page",
         h.dms(bo, 165) + struct.pack(bo + "HHH6sHIH", 0, len(img), 9, rid, 0, 64, 300) + img,
         {"log_header": dms_obj(165), "lriudflags": 0, "record_length": len(img),
          "free_space": 9, "rid": rid, "internal": 0, "first_page_of_the_block": 64,
          "record_offset": 300, "record_header_and_data": image_obj(img)}, None),
        ("delete_record_to_empty_page",
         h.dms(bo, 164) + struct.pack(bo + "HHH6sHIH", 0, len(img), 9, rid, 0, 64, 300) + img,
         {"log_header": dms_obj(164), "internal": 0, "record_length": len(img),
          "free_space": 9, "rid": rid, "internal_2": 0, "first_page_of_the_block": 64,
          "record_offset": 300, "record_header_and_data": image_obj(img)}, None),
        ("rollback_insert_record_to_empty_page",
         h.dms(bo, 131) + struct.pack(bo + "HHH6sHI", 0, 12, 9, rid, 0, 64),
         {"log_header": dms_obj(131), "lriudflags": 0, "record_length": 12, "free_space": 9,
          "rid": rid, "internal": 0, "first_page_of_the_block": 64}, 24),
        ("insert_multiple_records",
         h.dms(bo, 167) + struct.pack(bo + "2sHHHHI", bytes(2), 2, 5, len(img) + len(img2),
                                      16 + len(img) + len(img2), 777)
         + rid + struct.pack(bo + "H", 300) + img + rid + struct.pack(bo + "H", 340) + img2,
         {"log_header": dms_obj(167), "padding": bytes(2), "number_of_records": 2,
          "free_space": 5, "sum_of_record_lengths": len(img) + len(img2),
          "variable_part_length": 16 + len(img) + len(img2), "pool_page_number": 777,
          "record_descriptions": [
              {"rid": rid, "record_offset": 300, "record_header_and_data": image_obj(img)},
              {"rid": rid, "record_offset": 340, "record_header_and_data": image_obj(img2)}]},
         None),
        ("undo_insert_multiple_records",
         h.dms(bo, 168) + struct.pack(bo + "2sHHHHI", bytes(2), 1, 5, 0, 8, 777)
         + rid + struct.pack(bo + "H", 300),
         {"log_header": dms_obj(168), "padding": bytes(2), "number_of_records": 1,
          "free_space": 5, "sum_of_record_lengths": 0, "variable_part_length": 8,
          "pool_page_number": 777, "rollback_descriptions": [{"rid": rid, "record_offset": 300}]},
         None),
        ("record_description", rid + struct.pack(bo + "H", 300) + img,
         {"rid": rid, "record_offset": 300, "record_header_and_data": image_obj(img)}, None),
        ("rollback_description", rid + struct.pack(bo + "H", 300),
         {"rid": rid, "record_offset": 300}, 8),
        ("column_descriptor", col, COLUMN, 8),
        ("lob_column_descriptor", lob, LOB, 12),
        ("table_description_record", description, described, None),
        ("initialize_table",
         h.dms(bo, 128) + struct.pack(bo + "Q", 9) + bytes(74)
         + struct.pack(bo + "I", len(description)) + description,
         {"log_header": dms_obj(128), "file_create_lsn": 9, "internal": bytes(74),
          "table_description_length": len(description), "table_description_record": described},
         None),
        ("add_drop_columns",
         h.dms(bo, 102) + struct.pack(bo + "HII", 0, 1, 2) + clob + lob + clob + col + lob,
         {"log_header": dms_obj(102), "internal": 0, "old_column_count": 1,
          "new_column_count": 2, "old_column_descriptors": [clob_obj],
          "old_lob_column_descriptors": [LOB], "new_column_descriptors": [clob_obj, COLUMN],
          "new_lob_column_descriptors": [LOB]}, None),
        ("alter_column_attribute", h.dms(bo, 113) + struct.pack(bo + "H", 3) + col + col,
         {"log_header": dms_obj(113), "column_id": 3, "old_column_definition": COLUMN,
          "new_column_definition": COLUMN}, 24),
        ("alter_table_attribute", h.dms(bo, 124) + struct.pack(bo + "QQ", 0x10, 0x10),
         {"log_header": dms_obj(124), "alter_bit_mask": 0x10, "alter_bit_values": 0x10}, 22),
        ("rename_table_or_schema", h.dms(bo, 122), {"log_header": dms_obj(122)}, 6),
        ("update_partition_state",
         h.dms(bo, 137) + struct.pack(bo + "HHHH6sHH", 3, 4, 0, 5, bytes(6), 0, 2),
         {"log_header": dms_obj(137), "master_table_space_identifier": 3,
          "master_table_identifier": 4, "internal": 0, "data_partition_identifier": 5,
          "internal_2": bytes(6), "internal_3": 0, "partition_action": 2}, 24),
        ("start_of_out_of_row_data", h.dms(bo, 211), {"log_header": dms_obj(211)}, 6),
        ("create_drop_index", h.dom(bo, 2) + struct.pack(bo + "HHI", 0, 3, 4711),
         {"log_header": dom_obj(2), "internal": 0, "index_token": 3, "index_root_page": 4711},
         20),
        ("create_drop_table", h.dom(bo, 101) + bytes(72),
         {"log_header": dom_obj(101), "internal": bytes(72)}, 84),
        ("import_replace_truncate", h.dom(bo, 11) + b"\x01\x02",
         {"log_header": dom_obj(11), "internal": b"\x01\x02"}, None),
        ("activate_not_logged_initially", h.dom(bo, 12) + bytes(4)
         + struct.pack(bo + "6H", 1, 2, 3, 4, 5, 6),
         {"log_header": dom_obj(12), "internal": bytes(4), "long_tablespace_id": 1,
          "index_tablespace_id": 2, "index_object_id": 3, "lf_object_id": 4,
          "lob_object_id": 5, "xml_object_id": 6}, 28),
        ("reorg_table", h.dom(bo, 35) + bytes(476) + struct.pack(bo + "3H", 7, 8, 9),
         {"log_header": dom_obj(35), "internal": bytes(476), "index_token": 7,
          "temporary_table_space_id": 8, "long_temporary_table_space_id": 9}, 494),
        ("db2_read_log_filter_data", struct.pack(bo + "6QIi", 1, 77, 1000, 2, 0, 0, 526, -1),
         {"record_lri_type1": {"lri_type": 1, "part1": 77, "part2": 1000},
          "record_lri_type2": {"lri_type": 2, "part1": 0, "part2": 0},
          "real_log_rec_len": 526, "sqlcode": -1}, 56),
        ("lsn_prefix", struct.pack(bo + "Q", 105730662), {"lsn": 105730662}, 8),
    ]  # fmt: skip


def check_four_ways(layout: Construct, data: bytes, obj: dict, size: int | None) -> None:
    for form in (layout, layout.compile()):
        assert plain(form.parse(data)) == obj
        assert form.build(obj) == data
        if size is None:
            with pytest.raises(SizeofError):
                layout.sizeof()
        else:
            assert form.sizeof() == size == len(data)


CASES = [(bo, *case) for bo in ("little", "big") for case in cases(bo)]


@pytest.mark.parametrize(("byteorder", "name", "data", "obj", "size"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])  # fmt: skip
def test_layout_four_ways(byteorder, name, data, obj, size):
    check_four_ways(getattr(layouts(byteorder), name), data, obj, size)


def test_every_layout_has_a_case():
    names = {name for name, value in vars(layouts("little")).items()
             if isinstance(value, Construct)} - {"u16", "u32", "u64", "i16", "db2_lri"}  # fmt: skip
    assert names == {case[1] for case in CASES}


def test_byte_order_is_a_parameter_not_an_assumption():
    little, big = layouts("little"), layouts("big")
    assert big.log_manager_header.parse(h.REAL_HEADER).record_length != 526
    assert little.log_manager_header.parse(h.REAL_HEADER).record_length == 526
    swapped = big.log_manager_header.build(little.log_manager_header.parse(h.REAL_HEADER))
    assert big.log_manager_header.parse(swapped).lsn == 105730662
    assert swapped[:4] == bytes.fromhex("0000020e")


def test_fixed_formats_are_derived_from_the_layouts():
    for byteorder, code in (("little", "<"), ("big", ">")):
        fmt, names = fixed_format("insert_record", byteorder)
        assert fmt.format == code + "BBHHHHH6sH" and fmt.size == 20
        assert names[-1] == "record_offset"
        fmt, names = fixed_format("log_manager_header", byteorder)
        assert fmt.size == 40 and names == (
            "record_length",
            "record_type",
            "flags",
            "lsn",
            "lfs",
            "lso_previous",
            "tid",
            "log_stream_id",
        )


def test_real_db2_header_parses_with_the_construct_layout():
    parsed = layouts("little").log_manager_header.parse(h.REAL_HEADER)
    assert (parsed.record_length, parsed.record_type, parsed.flags) == (526, 0x4E, 0x0002)
    assert (parsed.lsn, parsed.lfs, parsed.lso_previous) == (105730662, 4421964, 0)
    assert parsed.tid.hex() == "0000004c1a7e"
    insert = layouts("little").insert_record.parse(h.REAL_RECORD[40:])
    assert insert.log_header == dms_obj(162, 2, 1287) | {}
    assert (insert.record_length, insert.free_space, insert.record_offset) == (466, 284, 300)
    assert insert.rid.hex() == "070002000000"
    assert insert.record_header_and_data.record_header.record_length == 466

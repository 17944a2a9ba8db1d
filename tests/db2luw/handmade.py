"""Hand-built Db2 LUW records for the tests: plain struct.pack at the spec offsets."""

from __future__ import annotations

import struct

# The real Db2 10.x little-endian insert record of ../shared/specs/README.md (header, DMS
# header, insert fields, record header); the user data after the 8-byte record header is not
# in the public dump, so the tests pad it with zeros to the logged length.
REAL_HEADER = bytes.fromhex(
    "0e0200004e00020066524d06000000004c7943000000000000000000000000000000004c1a7e0000"
)
REAL_DMS = bytes.fromhex("01a202000705")
REAL_INSERT = bytes.fromhex("0000d2011c010700020000002c01")
REAL_RECORD_HEADER = bytes.fromhex("0000d20101009800")
REAL_RECORD = REAL_HEADER + REAL_DMS + REAL_INSERT + REAL_RECORD_HEADER + bytes(466 - 8)


RID = b"\x07\0\2\0\0\0"


def order(byteorder: str) -> str:
    return "<" if byteorder == "little" else ">"


def header(
    bo: str,
    body_length: int,
    rtype: int = 0x4E,
    flags: int = 0x0002,
    lsn: int = 1000,
    extension: bytes = b"",
    tid: bytes = bytes.fromhex("0000004c1a7e"),
) -> bytes:
    """Log manager header (README offsets) for a record with ``body_length`` bytes after it."""
    length = 40 + len(extension) + body_length
    return struct.pack(bo + "IHHQQQ6sH", length, rtype, flags, lsn, 77, 55, tid, 0) + extension


def record(bo: str, body: bytes, **kw) -> bytes:
    extension = kw.pop("extension", b"")
    return header(bo, len(body), extension=extension, **kw) + body


def dms(bo: str, function: int, ts: int = 2, table: int = 1287) -> bytes:
    return struct.pack(bo + "BBHH", 1, function, ts, table)


def dom(bo: str, function: int, ts: int = 2, table: int = 14) -> bytes:
    return struct.pack(bo + "BBHHHHBB", 4, function, ts, 99, ts, table, 1, 0)


def image(bo: str, data: bytes, outer: int = 0) -> bytes:
    """Record header (type, reserved, u16 length including itself) + data."""
    return struct.pack(bo + "BBH", outer, 0, 4 + len(data)) + data


def formatted(bo: str, fixed: bytes, variable: bytes = b"", outer: int = 0) -> bytes:
    """Formatted user data without VALUE COMPRESSION: inner type 1, fixed length, sections."""
    return image(bo, struct.pack(bo + "BBH", 1, 0, len(fixed)) + fixed + variable, outer)


def compressed(bo: str, columns: list[tuple[int, bytes]], outer: int = 0) -> bytes:
    """VALUE COMPRESSION row: (attribute flag 0/0x8000, data) per column; offsets count from the
    start of the offset array (interpretation 11)."""
    count = len(columns)
    at, offsets, data = 2 * (count + 1), [], b""
    for flag, value in columns:
        offsets.append(flag | (at + len(data)))
        data += value
    offsets.append(at + len(data))
    array = struct.pack(bo + f"{count + 1}H", *offsets)
    return image(bo, struct.pack(bo + "BBH", 2, 0, count) + array + data, outer)


def insert_body(bo: str, function: int, img: bytes, lriud: int = 0, rid: bytes = b"\x07\0\2\0\0\0",
                ts: int = 2, table: int = 1287) -> bytes:  # fmt: skip
    return dms(bo, function, ts, table) + struct.pack(bo + "HHH6sH", lriud, len(img), 284, rid,
                                                      300) + img  # fmt: skip


def column(bo: str, field_type: int, length: int, null_flag: int, offset: int) -> bytes:
    return struct.pack(bo + "HHHH", field_type, length, null_flag, offset)


def decimal_column(bo: str, precision: int, scale: int, null_flag: int, offset: int) -> bytes:
    return (
        struct.pack(bo + "H", 2)
        + bytes((precision, scale))
        + struct.pack(bo + "HH", null_flag, offset)
    )


def lob(bo: str, length: int, inline: int) -> bytes:
    return struct.pack(bo + "IHHI", length, inline, 1, 0)


def update_body(
    bo: str, old: bytes, new: bytes, rid: bytes = RID, new_rid: bytes = RID, table: int = 1287
) -> bytes:
    """Update record (163, spec Table 22): DMS header, lrIUDflags 6, internal 8, free space 10,
    RID 12, record offset 18, old record header and data 20; then a second DMS header, two
    internal u16s, free space, RID, record offset and the new record header and data."""
    first = dms(bo, 163, 2, table) + struct.pack(bo + "HHH6sH", 0, len(old), 284, rid, 300)
    second = dms(bo, 163, 2, table) + struct.pack(bo + "HHH6sH", 0, len(new), 280, new_rid, 300)
    return first + old + second + new


def initialize_table_body(bo: str, columns: list[bytes], ts: int = 2, table: int = 15) -> bytes:
    """Initialize table (128): file create LSN 6, internal 14, table description length 88,
    table description record 92 (Table 6: record type, internal, u16 column count, column
    descriptors; no LOB columns here)."""
    description = struct.pack(bo + "BBH", 0x10, 0, len(columns)) + b"".join(columns)
    return (dms(bo, 128, ts, table) + struct.pack(bo + "Q", 1) + bytes(74)
            + struct.pack(bo + "I", len(description)) + description)  # fmt: skip


def undo_extension(bo: str, undo_next_lso: int = 0) -> bytes:
    """The 16 + 8 bytes a propagatable compensation record adds to the log manager header."""
    return struct.pack(bo + "H6sQ", 0, bytes(6), undo_next_lso) + struct.pack(bo + "Q", 0)


def rds_statement_body(
    bo: str,
    piece: bytes,
    left: int,
    total: int,
    entries: tuple[tuple[int, bytes], ...] = (),
    function: int = 4,
    operation: int = 2,
    obj: int = 1,
) -> bytes:
    """Relation manager Table 3 (offsets after the 8-byte RDS header: 8 operation, 10 object,
    12 options, 14 NumEntries, 16 the 4-byte entries), then the entry texts, u32 text left,
    u32 text length and the text (docs/db2luw.md interpretation 20)."""
    out = struct.pack(bo + "BBHHH", 11, function, 2, 7, 0)
    out += struct.pack(bo + "HHHH", operation, obj, 0, len(entries))
    out += b"".join(struct.pack(bo + "HH", kind, len(text)) for kind, text in entries)
    out += b"".join(text for _, text in entries)
    return out + struct.pack(bo + "II", left, total) + piece

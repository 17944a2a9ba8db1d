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


def compressed(bo: str, columns: list[tuple[int, bytes]]) -> bytes:
    """VALUE COMPRESSION row: (attribute flag 0/0x8000, data) per column; offsets count from the
    start of the offset array (interpretation 11)."""
    count = len(columns)
    at, offsets, data = 2 * (count + 1), [], b""
    for flag, value in columns:
        offsets.append(flag | (at + len(data)))
        data += value
    offsets.append(at + len(data))
    array = struct.pack(bo + f"{count + 1}H", *offsets)
    return image(bo, struct.pack(bo + "BBH", 2, 0, count) + array + data)


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

"""Bytes built by hand from the spec tables' offsets, for decoder tests.

Deliberately independent of udfs.logmaster.layouts: every field is put at the offset the spec
table gives (hex column), so a wrong offset in a layout fails a test instead of round-tripping.
"""

from __future__ import annotations

import struct


class Record:
    """A record of ``size`` bytes, EBCDIC blanks by default, filled field by field."""

    def __init__(self, size: int, fill: bytes = b"\x40", codec: str = "cp037"):
        self.data = bytearray(fill * size)
        self.codec = codec

    def char(self, offset: int, text: str, width: int | None = None) -> Record:
        raw = text.encode(self.codec)
        if width is not None:
            raw = raw.ljust(width, " ".encode(self.codec))
        self.data[offset : offset + len(raw)] = raw
        return self

    def raw(self, offset: int, value: bytes) -> Record:
        self.data[offset : offset + len(value)] = value
        return self

    def hexa(self, offset: int, digits: str) -> Record:
        return self.raw(offset, bytes.fromhex(digits))

    def u16(self, offset: int, value: int) -> Record:
        return self.raw(offset, struct.pack(">H", value))

    def u32(self, offset: int, value: int) -> Record:
        return self.raw(offset, struct.pack(">I", value))

    def bytes(self) -> bytes:
        return bytes(self.data)


def rdw(body: bytes) -> bytes:
    """A z/OS variable-length record: u16 length including the 4-byte RDW, then x'0000'."""
    return struct.pack(">HH", len(body) + 4, 0) + body


def lldf_header() -> Record:
    """A 288-byte LLDF header (003_… table), every field at its hex offset."""
    h = Record(288, fill=b"\x00")
    h.u16(0x00, 288)  # LENGTH
    h.char(0x02, "DB2A")  # SYSTEMID
    h.u16(0x06, 0x0104)  # DBID
    h.u16(0x08, 0x0002)  # PSID
    h.u16(0x0A, 0x0003)  # TBOBID
    h.u16(0x0C, 6)  # TBOWNERLEN
    h.u16(0x0E, 6)  # TBNAMELEN
    h.char(0x10, "DBPAY", 8)  # DBNAME
    h.char(0x18, "TSPAY", 8)  # TSNAME
    h.char(0x20, "PAYROL", 8)  # TABLEOWNER
    h.char(0x28, "ORDERS", 18)  # TABLENAME
    h.u16(0x3A, 1)  # PARTNUM
    h.hexa(0x3C, "2024050607080912345678901200000000")  # TIMESTAMP BIN(17)
    h.hexa(0x4D, "00CA670FBBF3D3000000")  # LOGLRSN
    h.hexa(0x57, "00000000123456789ABC")  # LOGRBA
    h.u16(0x61, 0)  # MEMBERID
    h.hexa(0x63, "0000020001")  # RID
    h.char(0x68, "UB")  # CHANGE TYPE
    h.char(0x6A, " ")  # SQLTYPE
    h.char(0x6B, "C")  # LOGRECDISP
    h.char(0x6C, " ")  # SQLSRCTYPE
    h.u32(0x6D, 1234)  # LOGBYTES
    h.u16(0x71, 12)  # LOGDELTA
    h.raw(0x73, b"\x07")  # ANOMALYROWID
    h.char(0x74, "N")  # ANOMALYTYPE
    h.hexa(0x75, "00000000000000000001")  # ANOMALYRBA
    h.hexa(0x7F, "2024050607080000000000000000000000")  # UORTIMESTAMP
    h.hexa(0x90, "2024050607081000000000000000000000")  # UORCOMMITTIMESTAMP
    h.char(0xA1, "C")  # UORDISP
    h.hexa(0xA2, "00CA670FBBF000000000")  # UORIDLRSN
    h.hexa(0xAC, "00000000123456780000")  # UORID
    h.u16(0xB6, 0)  # SEGLEN
    h.u16(0xB8, 1)  # TOTALSEGS
    h.u16(0xBA, 1)  # SEGNUM
    h.hexa(0xC0, "00CA670FBBF4FF000000")  # UORCOMMITLRSN
    h.hexa(0xCA, "000000001234567A0000")  # UORCOMMITPOINT
    h.char(0xD4, "TS")  # CONNECTIONTYPE
    h.char(0xD6, "BATCH", 8)  # CONNECTID
    h.char(0xDE, "PAYJOB01", 12)  # CORRELATIONID
    h.char(0xEA, "JSMITH", 8)  # AUTHID
    h.char(0xF2, "PAYPLAN", 8)  # PLAN
    h.char(0xFA, "NETA", 8)  # LUWNETWORKID
    h.char(0x102, "LUA", 8)  # LUWNAME
    h.hexa(0x10A, "0102030405A6")  # LUWINSTANCENO
    h.u16(0x110, 3)  # LUWSEQUENCENO
    h.char(0x112, "N")  # INCOMPLETETRANS
    h.char(0x113, "N")  # INCOMPLETEDEP
    h.char(0x114, "Y")  # UORHASCOMP
    h.hexa(0x115, "00000000000000000002")  # SQLRIRBA
    h.char(0x11F, "A")  # PAGENUMFMT
    return h


EXPECTED_HEADER = {
    "length": 288,
    "systemid": "DB2A",
    "dbid": 0x0104,
    "psid": 2,
    "tbobid": 3,
    "tbownerlen": 6,
    "tbnamelen": 6,
    "dbname": "DBPAY",
    "tsname": "TSPAY",
    "tableowner": "PAYROL",
    "tablename": "ORDERS",
    "partnum": 1,
    "timestamp": "2024-05-06 07:08:09.123456789012",
    "loglrsn": "00CA670FBBF3D3000000",
    "logrba": "00000000123456789ABC",
    "memberid": 0,
    "rid": "0000020001",
    "change_type": "UB",
    "sqltype": "",
    "logrecdisp": "C",
    "sqlsrctype": "",
    "logbytes": 1234,
    "logdelta": 12,
    "anomalyrowid": 7,
    "anomalytype": "N",
    "anomalyrba": "00000000000000000001",
    "uortimestamp": "2024-05-06 07:08:00.000000000000",
    "uorcommittimestamp": "2024-05-06 07:08:10.000000000000",
    "uordisp": "C",
    "uoridlrsn": "00CA670FBBF000000000",
    "uorid": "00000000123456780000",
    "seglen": 0,
    "totalsegs": 1,
    "segnum": 1,
    "uorcommitlrsn": "00CA670FBBF4FF000000",
    "uorcommitpoint": "000000001234567A0000",
    "connectiontype": "TS",
    "connectid": "BATCH",
    "correlationid": "PAYJOB01",
    "authid": "JSMITH",
    "plan": "PAYPLAN",
    "luwnetworkid": "NETA",
    "luwname": "LUA",
    "luwinstanceno": "0102030405A6",
    "luwsequenceno": 3,
    "incompletetrans": "N",
    "incompletedep": "N",
    "uorhascomp": "Y",
    "sqlrirba": "00000000000000000002",
    "pagenumfmt": "A",
}


def data_field(*images: bytes) -> bytes:
    """LLDF DATA (README interpretation 3): u16 total length incl. itself, then each image
    as u16 length + bytes."""
    body = b"".join(struct.pack(">H", len(image)) + image for image in images)
    return struct.pack(">H", len(body) + 2) + body

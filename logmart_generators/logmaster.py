"""Synthetic BMC Log Master logical log extract (Db2 for z/OS) and its ground truth.

The byte packing here is written **independently of the decoders** (`udfs.values`,
`udfs.logmaster.layouts` are not imported): every field is placed with ``struct`` / plain bytes
at the offsets of the spec tables (``000_…`` DTBI, ``001_…`` DLCI, ``003_…`` LLDF) and of the
shared README, so the generator is an oracle for the decoder. Output of :func:`generate`::

    out_dir/logmaster/LOGM.EXTRACT1/LOGM.EXTRACT1.F0001   control file (XTYP XHDF DLDS DTBI DLCI
                                                            DICL DLGE), VB with RDWs
    out_dir/logmaster/LOGM.EXTRACT1/LOGM.EXTRACT1.F0002…  data files: LLDF records, shuffled
    out_dir/truth/db2zos/tables.json    each table's columns and final rows (rendered)
    out_dir/truth/db2zos/changes.jsonl  one line per logical change, with its record locations
    out_dir/truth/db2zos/summary.json   counts

Interpretations (README numbers in brackets) and the byte-level choices made where the specs
are silent, so a decoder can be checked against them:

* Files are z/OS VB with RDWs: ``u16 length including the 4-byte RDW`` + ``x'0000'``.
  Control and data files are named alike; a reader tells them apart by content.
* All CHAR fields of control records and LLDF headers are EBCDIC cp037, blank (x'40') padded.
  CHAR(n) numbers are zero-padded digits (``'007'``); a negative number (only LLCOLUMNPOS -1)
  is right-aligned and blank-padded: ``'   -1'``. DTBI/DLCI DBID/PSID/TBOBID are 4 hex digits.
* XTYP: 66 bytes, CCSIDs EBCDIC '00037'/'00000'/'00000', ASCII '00819'/'00000'/'00000',
  Unicode '00367'/'01200'/'01208'.
* XHDF: one 37-byte record per documented LLDF header field (the 4 reserved bytes at x'BC' get
  none), names as the spec spells them (``CHANGE TYPE`` with its blank); type ``INT`` + 'U' for
  BIN(1/2/4) counts and ids, ``BIN`` + 'U' for RBA/LRSN/RID/LUWINSTANCENO, ``DTTM`` for BIN(17)
  timestamps, ``CHAR`` otherwise.
* DLDS: one 64-byte record per data file (RECFM 'VB ', DATEFORMAT ``date_format`` (default
  'DB2I'), EXPANDVAR 'N', SEGMENTED/DDLOBJECTS/LOBSINCLUDED 'Y', XMLINCLUDED 'N').
* DTBI: the 705-byte form [1]; fields at the hex offsets [2]; SEQUENCENUMBER '001';
  UNTRAN*FLAG 'N' with UNITABLE* lengths '000' and blank names; LOBSINCLUDED 'Y' (DOCS.
  DOCUMENT_NOTE: 'N'), XMLINCLUDED 'N' (DOCS.NOTE_REVIEW has an XML column: its present values
  are x'00' x'0000', no data, ``not_logged_xml``). A table whose owner is longer than 8 / name
  longer than 18 gets SHORTOWNER = first 8 characters, SHORTNAME = first 14 characters + '0001';
  LLDF carries those short forms [9].
* DLCI: 193 bytes. The spec's VERSION row reads "190 | B4": decimal 190 is right (README rule 2,
  corrected): COLUMNNAME CHAR(128) from 62 ends there and VERSION then ends at the total 193
  (x'C1'), so VERSION is written at 190 only, and one column name is 128 characters long
  (WAREHOUSE_STOCK_LEVEL_HISTORY's bin location) to show a whole CHAR(128) name. LLCOLUMNLEN is
  the column's length **in bytes** in the logical log (data bytes only, no null byte or length
  prefix): INT 2/4/8, DEC precision//2+1 (precisions are odd, so precision = 2*len-1), FLOT 4/8,
  DATE 10, TIME 8, DTTM 26, DTTZ 32, CHAR n, GRPH 2*chars, varying types their maximum data bytes.
  LLSCALE two digits. LLNULLS 'N', 'Y', or 'L' for a nullable LOB. LLCOLUMNPOS [4]: the offset
  of the column (of its null byte when nullable) "within the DATA field" as the spec says, for
  columns up to and including the first varying column, -1 after it: DATA's u16 total length
  and the row image's u16 length come first, so a row image's first column is at 4
  (``LLCOLUMNPOS_BASE``; each image of a UB counted as if it stood alone in DATA).
  LLCOLUMNSUBTYPE 'B' (bit data), 'S' (EBCDIC text) or 'M' (Unicode text) for CHAR/VCHR, blank
  for every other type. KEYSEQ '001'… on primary key columns, '000' elsewhere; KEYORDERING 'A'
  on keys, blank elsewhere. DB2ROWBYTES = FLDPROCBYTES = internal bytes (+1 for a null byte);
  LOGLOGBYTES = bytes in the row image at most (null byte + u16 length prefix + LLCOLUMNLEN).
* One unknown control record ('DICL', index columns) sits among the tables: readers skip it.
* DLGE (48 bytes): ENDRBA = the last RBA written, ENDTIME its time, DEPENDENTRBA = the oldest
  URID of an in-flight UR (zeros when none).
* LLDF header: 288 bytes, LENGTH = 288, BIN fields big-endian. BIN(10) LRSN: byte 0 x'00', bytes
  1-8 the TOD clock (microseconds since 1900-01-01 shifted left 12, a sequence number in the
  low 12 bits), byte 9 x'00'. BIN(10) RBA: a 10-byte big-endian integer. The first few log
  positions of the extract are 6-byte-origin values placed as the spec's footnote says (LRSN
  at offset 1: bytes 7-9 zero; RBA at offset 4: bytes 0-3 zero); later ones use the full
  extended range (RBA bytes 0-3 = 00000001, LRSN bytes 7-8 non-zero).
* BIN(17) timestamps: 34 BCD nibbles = 'YYYYMMDDHHMMSS', 12 fractional-second digits (the
  microseconds, then six zeros), then 8 zero nibbles. Absent timestamps are 17 zero bytes.
* Dispositions: LOGRECDISP C, A (every record of an aborted UR), S (records undone by ROLLBACK
  TO SAVEPOINT), O (a record reversed by Db2). UORDISP C or A. An aborted UR's
  UORCOMMITLRSN/UORCOMMITPOINT/UORCOMMITTIMESTAMP hold its abort (end of rollback) point. An
  in-flight UR (still open when the extract ends) has UORDISP blank, LOGRECDISP blank and zero
  commit fields. UORHASCOMP 'Y' when the UR rolled anything back (A, S or O records).
* Unsegmented records: TOTALSEGS 1, SEGNUM 1, SEGLEN = length of DATA. Segmented [7]: DATA
  longer than 4000 bytes is cut into 4000-byte slices, each a full LLDF record (full header,
  TOTALSEGS n, SEGNUM 1..n, SEGLEN the slice length).
* DATA [3]: ``u16 total length including itself``; UB: before image then after image; I/IL:
  after image; D: before image; each image ``u16 length`` + bytes. DM, DT, DR: DATA = x'0002'
  (no image), except the DM of a LOAD REPLACE of one partition (WAREHOUSE_STOCK_LEVEL_HISTORY,
  partitioned by WAREHOUSE_ID, limit keys 2, 4, 7): PARTNUM n and DATA = ``u16 total``, the low
  limit key (partition n-1's; length 0 for partition 1) and the high one (partition n's), each
  ``u16 length`` + the leading key column as a row image holds it; loaded rows (IL) follow.
  CO, CM, SC: ``u16 total``, ``u16 text length``, EBCDIC text (a DDL statement, a command, a
  status message). E: ``u16 total``, ``u16 owner length``, owner, ``u16 name
  length``, name of the clone table (EBCDIC).
* Row images [4][5][6]: columns in LLCOLUMNNUM order; nullable → x'00'/x'FF' first; a NULL fixed
  column keeps its width (zero bytes), a NULL varying column is x'FF' x'0000'. Varying
  VCHR/LVCH/ROWI: u16 length in bytes; VGRF/LVGR: u16 length in double-byte characters (as Db2
  for z/OS does). Inline LOBs (BLOB, CLOB; DTBI LOBSINCLUDED 'Y'): u16 length in **bytes**.
  With LOBSINCLUDED 'N' (DOCS.DOCUMENT_NOTE) a present LOB is x'00' x'0000' (no data) and the
  truth renders it null, naming it in ``before_unavailable`` / ``after_unavailable`` (changes)
  and ``unavailable`` (tables.json, per row) as ``not_logged_lob``; a NULL LOB is x'FF' x'0000'.
  DOCS.NOTE_REVIEW's first rows were written before its last column (SCORE) was added: their
  images end after the column before it, ``added_after_row`` (docs/logmaster.md).
  (DBCLOB is not generated: its length unit is an open question.) INT big-endian two's
  complement; DEC packed (sign C, some F, D negative); FLOT IBM hexadecimal floating point
  (exact encoder below); DATE/TIME/DTTM/DTTZ in the DLDS date format (LLCOLUMNLEN 10/8/26/32
  whatever the format), in the table's character encoding. DB2I (the default) and ISO: DATE
  'YYYY-MM-DD', TIME 'HH.MM.SS', DTTM 'YYYY-MM-DD-HH.MM.SS.ffffff', DTTZ
  'YYYY-MM-DD-HH.MM.SS.ffffff+HH:MM'; JIS: TIME 'HH:MM:SS'; EUR: DATE 'DD.MM.YYYY'; USA: DATE
  'MM/DD/YYYY', TIME 'HH:MM AM' (no seconds: the truth renders ':00'; 12:mm AM for 00:mm,
  00:00 AM for midnight); timestamps alike in all these. SASTIME: SAS numbers as text,
  right-aligned: DATE days since 1960-01-01, TIME seconds since midnight, DTTM seconds since
  1960-01-01 00:00:00 + '.ffffff', DTTZ the same + '+HH:MM' (docs/logmaster.md "Date formats").
  CHAR/VCHR/LVCH/CLOB text: E = cp037 (Latin-1 accents included), U = UTF-8 blank padded by
  bytes; GRPH/VGRF/LVGR (Unicode table only) UTF-16BE, GRPH padded with U+0020. Subtype B,
  ROWI, BLOB: raw bytes.
* Floats are generated exactly representable in HFP and (4-byte columns) in float32, never
  integral, 2**-9 <= |x| < 2**20, so their rendering is unambiguous (FLOT 4: the shortest
  float32 text, e.g. '39.31543'; FLOT 8: Python's repr).
* Truth timestamps (changes.jsonl ``timestamp``/``commit_timestamp``) are the BIN(17) values
  as logged: 'YYYY-MM-DD HH:MM:SS.' + 12 fraction digits. LRSN/RBA/URID: 20 upper hex digits.
* Truth [8]: effective changes = records with LOGRECDISP C of URs with UORDISP C, applied in
  UORCOMMITLRSN order, inside a UR by LOGLRSN then LOGRBA. DT/DM/DR empty the table (a
  partition-level DM only the rows whose key is above its low and at most its high limit; the
  truth line says ``partition``: partnum, key columns, low, high); the
  exchange (E) swaps in an empty clone of an already empty table (no row effect).

Streaming: URs are simulated as interleaved (a few open at a time; truncate, mass delete,
exchange and DDL run alone), records are buffered only per UR until it ends, then collected in
a window of about ``WINDOW_RECORDS`` records, shuffled, and dealt at random to the data files;
changes.jsonl is written per window once every record's (file, offset) is known. Memory holds
the open URs, one window and the tables' current rows (row counts are kept bounded), so a large
``transactions`` stays small in memory. :func:`generate_lldf_benchmark` writes N simple
I/UB/D records of one 20-column table with numpy, block by block.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import struct
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

EBCDIC = "cp037"
BLANK = b"\x40"
SYSID = "DB2P"
EXTRACT = "LOGM.EXTRACT1"
DATA_FILES = 3
MAX_SEGMENT_DATA = 4000  # bytes of DATA per segment (README interpretation 7)
WINDOW_RECORDS = 2048  # records shuffled together before they are dealt to the data files
LEGACY_POSITIONS = 12  # the first log positions use 6-byte-origin RBA/LRSN values
MAX_OPEN_URS = 3
ROW_CAP = 120  # above this many rows a table's changes lean to deletes (bounded memory)
TOD_EPOCH = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
START_TIME = dt.datetime(2024, 3, 18, 9, 30, tzinfo=dt.UTC)
LEGACY_RBA_BASE = 0x0000_1234_5678_0000
DATE_FORMATS = ("DB2I", "ISO", "JIS", "EUR", "USA", "SASTIME")
SAS_EPOCH = dt.datetime(1960, 1, 1)
LLCOLUMNPOS_BASE = 4  # DATA's u16 total length, then the row image's u16 length
EXTENDED_RBA_BASE = 0x0000_0001_0000_0000_0000

# --- primitive encoders -------------------------------------------------------------------------


def char(text: str, width: int) -> bytes:
    """CHAR(width) in EBCDIC, blank-padded; too long is an error, not a silent cut."""
    raw = text.encode(EBCDIC)
    if len(raw) > width:
        raise ValueError(f"{text!r} does not fit CHAR({width})")
    return raw.ljust(width, BLANK)


def num(value: int, width: int) -> bytes:
    """CHAR(width) number: zero-padded digits; a negative one right-aligned with blanks."""
    text = f"{value:0{width}d}" if value >= 0 else f"{value:>{width}d}"
    if len(text) != width:
        raise ValueError(f"{value} does not fit CHAR({width})")
    return char(text, width)


def hexid(value: int) -> bytes:
    """DTBI/DLCI ids: CHAR(4) hexadecimal digits, e.g. DBID 260 -> '0104'."""
    return char(f"{value:04X}", 4)


def rdw(body: bytes) -> bytes:
    """A VB record: RDW (u16 length including the RDW, x'0000') then the record."""
    return struct.pack(">HH", len(body) + 4, 0) + body


def u16(value: int) -> bytes:
    return struct.pack(">H", value)


def rba_from_6(raw6: bytes) -> bytes:
    """Spec footnote: a 6-byte RBA sits at offset 4 of the extended 10-byte form."""
    return bytes(4) + raw6


def lrsn_from_6(raw6: bytes) -> bytes:
    """Spec footnote: a 6-byte LRSN sits at offset 1 of the extended 10-byte form."""
    return b"\x00" + raw6 + bytes(3)


def tod_clock(moment: dt.datetime) -> int:
    """z/OS TOD clock: microseconds since 1900-01-01 UTC in bits 0-51 (bit 51 = 1 us)."""
    delta = moment - TOD_EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return micros << 12


def bin17(moment: dt.datetime | None) -> bytes:
    """BIN(17) timestamp: BCD 'YYYYMMDDHHMMSS', 12 fraction digits, zero nibbles; None -> 0s."""
    if moment is None:
        return bytes(17)
    digits = moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond:06d}000000"
    return bytes.fromhex(digits.ljust(34, "0"))


def packed(unscaled: int, nbytes: int, plus_sign: int = 0xC) -> bytes:
    """Packed decimal of 2*nbytes-1 digits; sign nibble D when negative, else C (or F)."""
    digits = str(abs(unscaled)).rjust(2 * nbytes - 1, "0")
    if len(digits) > 2 * nbytes - 1:
        raise ValueError(f"{unscaled} needs more than {2 * nbytes - 1} digits")
    nibbles = [int(d) for d in digits] + [0xD if unscaled < 0 else plus_sign]
    return bytes(nibbles[i] << 4 | nibbles[i + 1] for i in range(0, len(nibbles), 2))


def hfp(value: float, size: int) -> bytes:
    """IBM hexadecimal floating point (4 or 8 bytes), exact: inexact values are refused.

    Sign bit, 7-bit exponent of 16 biased by 64, then a 24- or 56-bit fraction normalised so
    its first hex digit is non-zero: value = 0.fraction(hex) * 16**(exponent - 64).
    """
    if size not in (4, 8):
        raise ValueError("HFP is 4 or 8 bytes")
    if value == 0:
        return bytes(size)
    bits = 8 * size - 8
    mantissa, exp2 = math.frexp(abs(value))  # abs(value) = mantissa * 2**exp2, 0.5 <= m < 1
    exp16 = -(-exp2 // 4)  # ceil: 1/16 <= abs(value) / 16**exp16 < 1
    whole = int(mantissa * (1 << 53))  # exact: a double has 53 significant bits
    shift = exp2 - 4 * exp16 + bits - 53  # fraction = whole * 2**shift
    if shift < 0 and whole & ((1 << -shift) - 1):
        raise ValueError(f"{value!r} is not exactly representable in {size}-byte HFP")
    fraction = whole << shift if shift >= 0 else whole >> -shift
    if not -64 <= exp16 <= 63:
        raise ValueError(f"{value!r} is outside the {size}-byte HFP range")
    head = (0x80 if value < 0 else 0) | (exp16 + 64)
    return (head << bits | fraction).to_bytes(size, "big")


def float32_text(value: float) -> str:
    """Shortest decimal text whose float32 is ``value`` (in Python's repr notation)."""
    target = struct.pack(">f", value)
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if struct.pack(">f", float(text)) == target:
            return repr(float(text))
    return repr(value)


def scaled(unscaled: int, scale: int) -> str:
    """Decimal text with exactly ``scale`` fraction digits: (-1, 2) -> '-0.01'."""
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return sign + (digits[:-scale] + "." + digits[-scale:] if scale else digits)


def micros(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond:06d}"


# --- control and header layouts (offsets straight from the spec tables, hex column) -----------

# (name, offset, length, kind): kind C = CHAR (blank fill), B = binary (zero fill).
Layout = tuple[tuple[str, int, int, str], ...]

DTBI: Layout = (
    ("CNTLRECORDTYPE", 0x00, 4, "C"), ("SYSID", 0x04, 4, "C"), ("DBID", 0x08, 4, "C"),
    ("PSID", 0x0C, 4, "C"), ("TBOBID", 0x10, 4, "C"), ("OBJECTTYPE", 0x14, 2, "C"),
    ("DB2NUMCOL", 0x16, 3, "C"), ("DB2MAXROWLEN", 0x19, 5, "C"), ("LLNUMCOL", 0x1E, 3, "C"),
    ("LLMAXROWLEN", 0x21, 5, "C"), ("ROWTYPE", 0x26, 1, "C"), ("SEQUENCENUMBER", 0x27, 3, "C"),
    ("CREATERBA", 0x2A, 10, "B"), ("RESERVED1", 0x34, 2, "B"), ("DROPRBA", 0x36, 10, "B"),
    ("RESERVED2", 0x40, 2, "B"), ("ENCODINGSCHEME", 0x42, 1, "C"),
    ("EDITPROCNAMELEN", 0x43, 3, "C"), ("EDITPROCNAME", 0x46, 24, "C"),
    ("DBNAMELEN", 0x5E, 3, "C"), ("DBNAME", 0x61, 24, "C"), ("TSNAMELEN", 0x79, 3, "C"),
    ("TSNAME", 0x7C, 24, "C"), ("TABLEOWNERLEN", 0x94, 3, "C"), ("TABLEOWNER", 0x97, 128, "C"),
    ("SHORTOWNER", 0x117, 8, "C"), ("TABLENAMELEN", 0x11F, 3, "C"),
    ("TABLENAME", 0x122, 128, "C"), ("SHORTNAME", 0x1A2, 18, "C"), ("VERSION", 0x1B4, 3, "C"),
    ("UNTRANOWNERFLAG", 0x1B7, 1, "C"), ("UNITABLEOWNERLEN", 0x1B8, 3, "C"),
    ("UNITABLEOWNER", 0x1BB, 128, "C"), ("UNTRANNAMEFLAG", 0x23B, 1, "C"),
    ("UNITABLENAMELEN", 0x23C, 3, "C"), ("UNITABLENAME", 0x23F, 128, "C"),
    ("LOBSINCLUDED", 0x2BF, 1, "C"), ("XMLINCLUDED", 0x2C0, 1, "C"),
)  # fmt: skip
DTBI_SIZE = 0x2C1  # 705: XMLINCLUDED at 704 (interpretation 1)

DLCI: Layout = (
    ("CNTLRECORDTYPE", 0x00, 4, "C"), ("SYSID", 0x04, 4, "C"), ("DBID", 0x08, 4, "C"),
    ("TBOBID", 0x0C, 4, "C"), ("LLCOLUMNNUM", 0x10, 3, "C"), ("LLCOLUMNTYPE", 0x13, 4, "C"),
    ("LLCOLUMNLEN", 0x17, 5, "C"), ("LLSCALE", 0x1C, 2, "C"), ("LLNULLS", 0x1E, 1, "C"),
    ("LLCOLUMNPOS", 0x1F, 5, "C"), ("LLCOLUMNSUBTYPE", 0x24, 1, "C"), ("KEYSEQ", 0x25, 3, "C"),
    ("KEYORDERING", 0x28, 1, "C"), ("DB2ROWBYTES", 0x29, 5, "C"),
    ("FLDPROCBYTES", 0x2E, 5, "C"), ("LOGLOGBYTES", 0x33, 5, "C"),
    ("SEQUENCENUMBER", 0x38, 3, "C"), ("COLUMNNAMELEN", 0x3B, 3, "C"),
    ("COLUMNNAME", 0x3E, 128, "C"),
    # Spec row "VERSION | 190 | B4": decimal 190 (README rule 2): after a whole CHAR(128) name.
    ("VERSION", 190, 3, "C"),
)  # fmt: skip
DLCI_SIZE = 0xC1  # 193

XTYP: Layout = (
    ("CNTLRECORDTYPE", 0, 4, "C"), ("FILETYPE", 4, 4, "C"), ("VERSION", 8, 6, "C"),
    ("SYSID", 14, 4, "C"), ("SQLDELIMITER", 18, 1, "C"), ("MIXED", 19, 1, "C"),
    ("DECIMALPOINT", 20, 1, "C"), ("EBCDICSBCS", 21, 5, "C"), ("EBCDICDBCS", 26, 5, "C"),
    ("EBCDICMIXED", 31, 5, "C"), ("ASCIISBCS", 36, 5, "C"), ("ASCIIDBCS", 41, 5, "C"),
    ("ASCIIMIXED", 46, 5, "C"), ("UNICODESBCS", 51, 5, "C"), ("UNICODEDBCS", 56, 5, "C"),
    ("UNICODEMIXED", 61, 5, "C"),
)  # fmt: skip
XTYP_SIZE = 66

XHDF: Layout = (
    ("CNTLRECORDTYPE", 0, 4, "C"), ("FIELDNAME", 4, 18, "C"), ("FIELDTYPE", 22, 4, "C"),
    ("UNSIGNED", 26, 1, "C"), ("FIELDLENGTH", 27, 5, "C"), ("FIELDOFFSET", 32, 5, "C"),
)  # fmt: skip
XHDF_SIZE = 37

DLDS: Layout = (
    ("CNTLRECORDTYPE", 0, 4, "C"), ("DATASETNAME", 4, 44, "C"), ("RECFM", 48, 3, "C"),
    ("DATEFORMAT", 51, 8, "C"), ("EXPANDVAR", 59, 1, "C"), ("SEGMENTED", 60, 1, "C"),
    ("DDLOBJECTS", 61, 1, "C"), ("LOBSINCLUDED", 62, 1, "C"), ("XMLINCLUDED", 63, 1, "C"),
)  # fmt: skip
DLDS_SIZE = 64

DLGE: Layout = (
    ("CNTLRECORDTYPE", 0, 4, "C"), ("ENDRBA", 4, 10, "B"), ("ENDTIME", 16, 17, "B"),
    ("DEPENDENTRBA", 36, 10, "B"),
)  # fmt: skip
DLGE_SIZE = 48

# LLDF header: (name as the spec spells it, offset, length, XHDF type).
LLDF_FIELDS: tuple[tuple[str, int, int, str], ...] = (
    ("LENGTH", 0x00, 2, "INT"), ("SYSTEMID", 0x02, 4, "CHAR"), ("DBID", 0x06, 2, "INT"),
    ("PSID", 0x08, 2, "INT"), ("TBOBID", 0x0A, 2, "INT"), ("TBOWNERLEN", 0x0C, 2, "INT"),
    ("TBNAMELEN", 0x0E, 2, "INT"), ("DBNAME", 0x10, 8, "CHAR"), ("TSNAME", 0x18, 8, "CHAR"),
    ("TABLEOWNER", 0x20, 8, "CHAR"), ("TABLENAME", 0x28, 18, "CHAR"),
    ("PARTNUM", 0x3A, 2, "INT"), ("TIMESTAMP", 0x3C, 17, "DTTM"), ("LOGLRSN", 0x4D, 10, "BIN"),
    ("LOGRBA", 0x57, 10, "BIN"), ("MEMBERID", 0x61, 2, "INT"), ("RID", 0x63, 5, "BIN"),
    ("CHANGE TYPE", 0x68, 2, "CHAR"), ("SQLTYPE", 0x6A, 1, "CHAR"),
    ("LOGRECDISP", 0x6B, 1, "CHAR"), ("SQLSRCTYPE", 0x6C, 1, "CHAR"),
    ("LOGBYTES", 0x6D, 4, "INT"), ("LOGDELTA", 0x71, 2, "INT"), ("ANOMALYROWID", 0x73, 1, "INT"),
    ("ANOMALYTYPE", 0x74, 1, "CHAR"), ("ANOMALYRBA", 0x75, 10, "BIN"),
    ("UORTIMESTAMP", 0x7F, 17, "DTTM"), ("UORCOMMITTIMESTAMP", 0x90, 17, "DTTM"),
    ("UORDISP", 0xA1, 1, "CHAR"), ("UORIDLRSN", 0xA2, 10, "BIN"), ("UORID", 0xAC, 10, "BIN"),
    ("SEGLEN", 0xB6, 2, "INT"), ("TOTALSEGS", 0xB8, 2, "INT"), ("SEGNUM", 0xBA, 2, "INT"),
    ("UORCOMMITLRSN", 0xC0, 10, "BIN"), ("UORCOMMITPOINT", 0xCA, 10, "BIN"),
    ("CONNECTIONTYPE", 0xD4, 2, "CHAR"), ("CONNECTID", 0xD6, 8, "CHAR"),
    ("CORRELATIONID", 0xDE, 12, "CHAR"), ("AUTHID", 0xEA, 8, "CHAR"), ("PLAN", 0xF2, 8, "CHAR"),
    ("LUWNETWORKID", 0xFA, 8, "CHAR"), ("LUWNAME", 0x102, 8, "CHAR"),
    ("LUWINSTANCENO", 0x10A, 6, "BIN"), ("LUWSEQUENCENO", 0x110, 2, "INT"),
    ("INCOMPLETETRANS", 0x112, 1, "CHAR"), ("INCOMPLETEDEP", 0x113, 1, "CHAR"),
    ("UORHASCOMP", 0x114, 1, "CHAR"), ("SQLRIRBA", 0x115, 10, "BIN"),
    ("PAGENUMFMT", 0x11F, 1, "CHAR"),
)  # fmt: skip
LLDF_HEADER_SIZE = 0x120  # DATA starts at 288
LLDF_LAYOUT: Layout = tuple(
    (name, offset, length, "C" if kind == "CHAR" else "B")
    for name, offset, length, kind in LLDF_FIELDS
)


def build_record(layout: Layout, size: int, values: dict[str, bytes]) -> bytes:
    """Place each field's bytes at its offset; unset CHAR fields are blanks, BIN zeros."""
    unknown = set(values) - {name for name, *_ in layout}
    if unknown:
        raise KeyError(f"fields not in the layout: {sorted(unknown)}")
    buf = bytearray(size)
    for name, offset, length, kind in layout:  # in order: later fields may overlay earlier
        raw = values.get(name)
        if raw is None:
            raw = (BLANK if kind == "C" else b"\x00") * length
        if len(raw) != length:
            raise ValueError(f"{name} is {length} bytes, got {len(raw)}")
        buf[offset : offset + length] = raw
    return bytes(buf)


# --- tables -------------------------------------------------------------------------------------

VARYING = frozenset({"VCHR", "VGRF", "LVCH", "LVGR", "ROWI", "BLOB", "CLOB", "XML"})
DOUBLE_BYTE = frozenset({"GRPH", "VGRF", "LVGR"})
INTERNAL_BYTES = {"DATE": 4, "TIME": 3, "DTTM": 10, "DTTZ": 12, "BLOB": 6, "CLOB": 6, "XML": 6}
FIXED_TEXT_LENGTH = {"DATE": 10, "TIME": 8, "DTTM": 26, "DTTZ": 32}


@dataclass(frozen=True)
class Col:
    """One column as the logical log holds it (``length`` = LLCOLUMNLEN, in bytes)."""

    name: str
    type: str
    length: int
    scale: int = 0
    nullable: bool = False
    bits: bool = False  # FOR BIT DATA
    keyseq: int = 0

    @property
    def varying(self) -> bool:
        return self.type in VARYING

    @property
    def lob(self) -> bool:
        return self.type in ("BLOB", "CLOB")

    @property
    def lob_like(self) -> bool:
        """LOBs and XML: no length prefix in the internal row, LLNULLS 'L' when nullable."""
        return self.lob or self.type == "XML"

    @property
    def precision(self) -> int | None:
        return 2 * self.length - 1 if self.type == "DEC" else None

    def internal_bytes(self) -> int:
        base = INTERNAL_BYTES.get(self.type, self.length)
        return base + (2 if self.varying and not self.lob_like else 0) + (1 if self.nullable else 0)

    def loglog_bytes(self) -> int:
        return self.length + (2 if self.varying else 0) + (1 if self.nullable else 0)


def C(name: str, type_: str, length: int = 0, scale: int = 0, *, null: bool = False,
      bits: bool = False, key: int = 0) -> Col:  # fmt: skip
    """Column shorthand; DATE/TIME/DTTM/DTTZ take their fixed character lengths."""
    return Col(name, type_, length or FIXED_TEXT_LENGTH[type_], scale, null, bits, key)


@dataclass
class Table:
    owner: str
    name: str
    dbname: str
    tsname: str
    dbid: int
    psid: int
    tbobid: int
    encoding: str  # DTBI ENCODINGSCHEME: E or U
    columns: tuple[Col, ...]
    key: Callable[[int], tuple]  # key column values of the n-th new row
    version: int = 0
    # Partitions by range of the leading key columns: each partition's limit key (its highest
    # key prefix, inclusive), ascending, as Db2 for z/OS partitions by its limit keys.
    limit_keys: tuple[tuple, ...] = ()
    date_format: str = "DB2I"  # the extract's DLDS DATEFORMAT: how DATE/TIME/DTTM/DTTZ are written
    lobs_included: bool = True  # DTBI LOBSINCLUDED: N leaves LOB values out of the row images
    xml_included: bool = False  # DTBI XMLINCLUDED: N leaves XML values out of the row images
    # ALTER TABLE ADD COLUMN: the last ``added_columns`` columns were added after the first
    # ``rows_before_add`` rows were written; those rows' images end before them (short_keys)
    added_columns: int = 0
    rows_before_add: int = 0
    short_keys: set[tuple] = field(default_factory=set)
    # values and log positions drawn from the World's second random generator, so that this
    # table's changes leave the other tables' values as an extract without it has them
    side_random: bool = False
    rows: dict[tuple, dict[str, Any]] = field(default_factory=dict)
    next_key: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"

    @property
    def short_owner(self) -> str:
        return self.owner[:8]

    @property
    def short_name(self) -> str:
        return self.name if len(self.name) <= 18 else self.name[:14] + "0001"

    @property
    def key_columns(self) -> list[Col]:
        return sorted((c for c in self.columns if c.keyseq), key=lambda c: c.keyseq)

    def key_of(self, row: dict[str, Any]) -> tuple:
        return tuple(row[c.name] for c in self.key_columns)

    def partition_range(self, partnum: int) -> tuple[tuple, tuple]:
        """(low, high) limit keys of partition ``partnum`` (1-based): the previous partition's
        limit key (exclusive; () for partition 1) and its own (inclusive)."""
        return (self.limit_keys[partnum - 2] if partnum > 1 else ()), self.limit_keys[partnum - 1]

    def in_partition(self, key: tuple, partnum: int) -> bool:
        low, high = self.partition_range(partnum)
        prefix = key[: len(high)]
        return (not low or prefix > low) and prefix <= high

    def text_codec(self) -> str:
        return "utf-8" if self.encoding == "U" else EBCDIC


# A column name of the longest length Db2 allows, 128 characters: DLCI COLUMNNAME is CHAR(128).
BIN_LOCATION = (
    "BIN_LOCATION_AS_AISLE_RACK_SHELF_AND_SLOT_CODE_ASSIGNED_BY_THE_WAREHOUSE_MANAGEMENT_SYSTEM"
    "_WHEN_THE_STOCK_WAS_PUT_AWAY_AT_A_DOCK"
)
assert len(BIN_LOCATION) == 128, len(BIN_LOCATION)


def _tables() -> list[Table]:
    langs = ("en-US", "de-DE", "ja-JP")
    return [
        Table("SALES", "CUSTOMER", "DBSALES", "TSCUST", 0x0104, 0x0002, 0x0003, "E", (
            C("CUST_ID", "INT", 4, key=1), C("NAME", "CHAR", 30),
            C("SEGMENT", "INT", 2, null=True), C("BALANCE", "DEC", 6, 2, null=True),
            C("CREDIT_LIMIT", "DEC", 5, 0), C("BIRTH_DATE", "DATE", null=True),
            C("CREATED_TS", "DTTM"), C("EMAIL", "VCHR", 60, null=True),
            C("SCORE", "FLOT", 4, null=True), C("NOTES", "VCHR", 200, null=True),
            C("LAST_CONTACT", "TIME", null=True),
        ), lambda n: (1000 + n,), version=2),
        Table("SALES", "ORDERS", "DBSALES", "TSORDERS", 0x0104, 0x0005, 0x0006, "E", (
            C("ORDER_ID", "INT", 8, key=1), C("CUST_ID", "INT", 4), C("ORDER_DATE", "DATE"),
            C("ORDER_TIME", "TIME", null=True), C("AMOUNT", "DEC", 8, 2),
            C("DISCOUNT", "FLOT", 8, null=True), C("STATUS", "CHAR", 1),
            C("TRACKING", "CHAR", 8, null=True, bits=True), C("SHIPPED_AT", "DTTZ", null=True),
            C("REMARK", "VCHR", 100, null=True),
        ), lambda n: (5_000_000_000 + n,)),
        Table("INVENTORY_CONTROL", "WAREHOUSE_STOCK_LEVEL_HISTORY", "DBINVENT", "TSSTOCK",
              0x0110, 0x0002, 0x0004, "E", (
            C("WAREHOUSE_ID", "INT", 2, key=1), C("ITEM_ID", "INT", 4, key=2),
            C("SNAPSHOT_TS", "DTTM"), C("QTY_ON_HAND", "INT", 4),
            C("QTY_DELTA", "DEC", 4, 0, null=True), C("UNIT_COST", "DEC", 5, 2, null=True),
            C("ROW_ID", "ROWI", 40), C(BIN_LOCATION, "VCHR", 12, null=True),
            C("WEIGHT_KG", "FLOT", 8, null=True), C("AUDIT_BITS", "CHAR", 4, bits=True),
        ), lambda n: (1 + n % 7, 10_000 + n), limit_keys=((2,), (4,), (7,))),
        Table("INTL", "PRODUCT_I18N", "DBINTL", "TSPRODU", 0x0120, 0x0002, 0x0003, "U", (
            C("PRODUCT_ID", "INT", 4, key=1), C("LANG", "CHAR", 5, key=2),
            C("PRICE", "DEC", 5, 2), C("TITLE_G", "GRPH", 20, null=True),
            C("UPDATED_AT", "DTTM", null=True), C("TITLE", "VCHR", 120, null=True),
            C("DESCR_G", "VGRF", 200, null=True), C("NOTES_G", "LVGR", 2000, null=True),
            C("WEIGHT", "FLOT", 8, null=True), C("ORIGIN", "CHAR", 20, null=True),
        ), lambda n: (500 + n // 3, langs[n % 3])),
        Table("DOCS", "DOCUMENT", "DBDOCS", "TSDOCS", 0x0130, 0x0002, 0x0003, "E", (
            C("DOC_ID", "INT", 4, key=1), C("REVISION", "INT", 2),
            C("CHECKSUM", "CHAR", 16, bits=True), C("CREATED", "DTTM"),
            C("TITLE", "VCHR", 80), C("BODY", "LVCH", 9000),
            C("ATTACHMENT", "BLOB", 6000, null=True), C("SUMMARY", "CLOB", 3000, null=True),
        ), lambda n: (1 + n,)),
        Table("HR", "EMPLOYEE", "DBHR", "TSEMP", 0x0140, 0x0002, 0x0003, "E", (
            C("EMP_ID", "INT", 4, key=1), C("DEPT", "CHAR", 3), C("SALARY", "DEC", 5, 2),
            C("ADJUSTMENT", "DEC", 4, 2, null=True), C("HIRE_DATE", "DATE"),
            C("SHIFT_START", "TIME", null=True), C("RATING", "FLOT", 4, null=True),
            C("LAST_REVIEW", "DTTZ", null=True), C("BADGE", "CHAR", 6, null=True, bits=True),
            C("FULL_NAME", "VCHR", 40), C("MANAGER_ID", "INT", 4, null=True),
        ), lambda n: (70_000 + n,), version=1),
        _notes_table(),
        _reviews_table(),
    ]  # fmt: skip


def _notes_table() -> Table:
    """A table extracted with DTBI LOBSINCLUDED 'N' (issue 14 item 9): its CLOB's values are not
    in the row images (:func:`excluded_lob`), and the truth says ``not_logged_lob``."""
    return Table("DOCS", "DOCUMENT_NOTE", "DBDOCS", "TSNOTES", 0x0130, 0x0004, 0x0005, "E", (
        C("NOTE_ID", "INT", 4, key=1), C("TOPIC", "VCHR", 40), C("AUTHOR", "CHAR", 8),
        C("NOTE", "CLOB", 2000, null=True), C("EDITED", "DTTM", null=True),
    ), lambda n: (1 + n,), lobs_included=False)  # fmt: skip


def _reviews_table() -> Table:
    """A table extracted with DTBI XMLINCLUDED 'N' whose last column was added (ALTER TABLE
    ADD COLUMN) after its first rows were written (issue 14 item 9): a present XML value is not
    in the row images (``not_logged_xml``) and the rows written before the ALTER are logged
    with the shorter image (``added_after_row``). One table version (DTBI VERSION 1, with the
    added column) for the whole extract: a simplification (docs/logmaster.md "Row images").
    Its values come from the World's second random generator (:attr:`Table.side_random`)."""
    return Table("DOCS", "NOTE_REVIEW", "DBDOCS", "TSREVIEW", 0x0130, 0x0006, 0x0007, "E", (
        C("REVIEW_ID", "INT", 4, key=1), C("VERDICT", "VCHR", 40),
        Col("REVIEW_XML", "XML", 0, nullable=True), C("SCORE", "DEC", 3, 2, null=True),
    ), lambda n: (1 + n,), version=1, added_columns=1, rows_before_add=12,
        side_random=True)  # fmt: skip


def excluded_lob(table: Table, col: Col, value: Any) -> bool:
    """A LOB (or XML) value the row image does not hold: present (not NULL) in a table whose
    DTBI says LOBSINCLUDED (XMLINCLUDED) 'N'. The image writes its null byte x'00' and a u16
    length 0, no data (the null byte tells it from a NULL, x'FF' x'0000')."""
    return value is not None and excluded_reason(table, col) is not None


def excluded_reason(table: Table, col: Col) -> str | None:
    """Why a present value of ``col`` is not in the row images, or None when it is."""
    if col.lob and not table.lobs_included:
        return "not_logged_lob"
    if col.type == "XML" and not table.xml_included:
        return "not_logged_xml"
    return None


def added_after(table: Table, row: dict[str, Any]) -> list[Col]:
    """The columns added after ``row`` was written: its image ends before them."""
    if not table.added_columns or table.key_of(row) not in table.short_keys:
        return []
    return list(table.columns[-table.added_columns :])


def unavailable_columns(table: Table, row: dict[str, Any] | None) -> dict[str, str] | None:
    """The truth's ``before_unavailable`` / ``after_unavailable`` of an image: the columns
    whose values the log does not carry, with why (``udfs/unavailable.py``'s vocabulary)."""
    if row is None:
        return None
    added = {c.name for c in added_after(table, row)}
    reasons = {}
    for c in table.columns:
        if c.name in added:
            reasons[c.name] = "added_after_row"
        elif excluded_lob(table, c, row[c.name]):
            reasons[c.name] = excluded_reason(table, c)
    return reasons


# --- values: generated, encoded into row images, rendered for the truth ------------------------

LATIN_NAMES = ("Anna Schmidt", "José García", "Zoë Müller", "O'Brien & Söhne", "Åsa Lindqvist",
               "Jean-François Côté", "Ravi Patel", "Li Wei", "Ægir Hansen",
               "Mary Smith")  # fmt: skip
UNICODE_TEXT = ("Café Crème", "Straße", "日本茶", "Grüße aus Köln", "Ñandú", "東京タワー",
                "naïve façade", "Smørrebrød", "Tee", "")  # fmt: skip
WORDS = ("ledger", "batch", "reconcile", "invoice", "shipment", "backorder", "audit", "pallet",
         "credit", "refund", "priority", "fragile", "express", "customs")  # fmt: skip
ZONES = ("+00:00", "-05:00", "+01:00", "+05:30", "+09:00", "-08:00")


def _words(rng: random.Random, size: int) -> str:
    """Text of about ``size`` characters (for long VARCHAR / LOB columns)."""
    parts, length = [], 0
    while length < size:
        word = rng.choice(WORDS)
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)[:size]


def _fit(text: str, codec: str, limit: int) -> str:
    """Cut ``text`` (by characters) until its encoding fits ``limit`` bytes."""
    while len(text.encode(codec)) > limit:
        text = text[:-1]
    return text


def _moment(rng: random.Random, first_year: int = 1950) -> dt.datetime:
    start = dt.datetime(first_year, 1, 1)
    return start + dt.timedelta(seconds=rng.randrange(75 * 365 * 86_400),
                                microseconds=rng.choice((0, rng.randrange(1_000_000))))  # fmt: skip


def _float(rng: random.Random, single: bool) -> float:
    """Exact in HFP (and float32 when single), never integral, 2**-9 <= |x| < 2**20.

    An odd mantissa of 16 (single) or 36 bits times a negative power of two: it fits HFP's 24
    or 56 fraction bits even after hex normalisation (up to 3 leading zero bits).
    """
    bits = 16 if single else 36
    mantissa = rng.randrange((1 << (bits - 1)) + 1, 1 << bits, 2)
    value = mantissa / (1 << (bits - 1 - rng.randint(-9, 14 if single else 19)))
    return -value if rng.random() < 0.3 else value


def _int(rng: random.Random, size: int) -> int:
    limit = 1 << (8 * size - 1)
    if rng.random() < 0.1:
        return rng.choice((-limit, limit - 1, 0, -1))
    return rng.randint(-limit // 1000, limit // 1000)


def _decimal(rng: random.Random, col: Col) -> int:
    """Unscaled value; small negatives (e.g. -0.01) now and then."""
    if rng.random() < 0.1:
        return rng.choice((-1, 0, 1, -(10 ** (col.precision or 1) - 1)))
    digits = rng.randint(1, col.precision or 1)
    value = rng.randrange(10**digits)
    return -value if rng.random() < 0.25 else value


def new_value(col: Col, table: Table, rng: random.Random) -> Any:
    """A Python value for ``col``; None for NULL (about 15% of nullable columns)."""
    if col.nullable and rng.random() < 0.15:
        return None
    kind, codec = col.type, table.text_codec()
    if kind == "INT":
        return _int(rng, col.length)
    if kind == "DEC":
        return _decimal(rng, col)
    if kind == "FLOT":
        return _float(rng, col.length == 4)
    if kind == "DATE":
        return rng.choice(("2024-02-29", _moment(rng).strftime("%Y-%m-%d")))
    if kind == "TIME":
        return _moment(rng).strftime("%H.%M.%S")
    if kind in ("DTTM", "DTTZ"):
        moment = _moment(rng, 1990)
        text = moment.strftime("%Y-%m-%d-%H.%M.%S.") + f"{moment.microsecond:06d}"
        return text + rng.choice(ZONES) if kind == "DTTZ" else text
    if kind == "XML":  # a small document (never in the log: XMLINCLUDED 'N')
        return f'<review n="{rng.randrange(1000)}">{rng.choice(WORDS)}</review>'
    if col.bits or kind in ("ROWI", "BLOB"):
        if kind == "BLOB":  # empty, small, or big enough to need segments
            return rng.randbytes(rng.choice((0, 40, rng.randrange(4000, col.length))))
        return rng.randbytes(17 if kind == "ROWI" else col.length)  # a ROWID is 17 bytes
    if kind in DOUBLE_BYTE:
        chars = col.length // 2
        text = rng.choice(UNICODE_TEXT) if kind == "GRPH" else _unicode_text(rng, chars)
        return text[:chars]
    return _text(col, table, rng, codec)


def _unicode_text(rng: random.Random, chars: int) -> str:
    text = " ".join(rng.choice(UNICODE_TEXT) for _ in range(rng.randint(1, 30)))
    return text[:chars]


def _text(col: Col, table: Table, rng: random.Random, codec: str) -> str:
    pool = UNICODE_TEXT if table.encoding == "U" else LATIN_NAMES
    if col.name == "STATUS":
        return rng.choice("NPSXC")
    if col.name == "DEPT":
        return rng.choice(("FIN", "OPS", "HR ", "IT "))
    if col.type == "LVCH":
        return _words(rng, rng.choice((200, rng.randrange(3500, col.length))))
    if col.type == "CLOB":
        return _words(rng, rng.randrange(0, col.length))
    if col.type == "CHAR":
        return _fit(rng.choice(pool), codec, col.length)
    base = rng.choice(pool) if rng.random() < 0.6 else _words(rng, rng.randrange(col.length))
    if col.name == "EMAIL" and base:
        base = f"{rng.choice(WORDS)}{rng.randrange(1000)}@example.com"
    return _fit(base, codec, col.length)


def temporal_text(kind: str, value: str, date_format: str = "DB2I") -> str:
    """A DATE/TIME/DTTM/DTTZ value, generated as its DB2I text, written in ``date_format``."""
    if date_format == "SASTIME":
        if kind == "TIME":
            hour, minute, second = (int(part) for part in value.split("."))
            return str(hour * 3600 + minute * 60 + second)
        moment = dt.datetime.strptime(value[:19], "%Y-%m-%d-%H.%M.%S" if len(value) > 10
                                      else "%Y-%m-%d")  # fmt: skip
        seconds = (moment - SAS_EPOCH) // dt.timedelta(seconds=1)
        if kind == "DATE":
            return str(seconds // 86400)
        return f"{seconds}{value[19:]}"  # '.ffffff' and a DTTZ's zone as they are
    if kind == "DATE" and date_format == "EUR":
        return f"{value[8:10]}.{value[5:7]}.{value[:4]}"
    if kind == "DATE" and date_format == "USA":
        return f"{value[5:7]}/{value[8:10]}/{value[:4]}"
    if kind == "TIME" and date_format == "JIS":
        return value.replace(".", ":")
    if kind == "TIME" and date_format == "USA":
        hour, minute = int(value[:2]), value[3:5]
        if hour == 0 and minute == "00":
            return "00:00 AM"
        return f"{(hour - 1) % 12 + 1:02d}:{minute} {'PM' if hour >= 12 else 'AM'}"
    return value


def encode_value(col: Col, value: Any, codec: str, date_format: str = "DB2I") -> bytes:
    """The column's bytes in the row image (without null byte), value not None."""
    kind = col.type
    if kind in FIXED_TEXT_LENGTH and date_format == "SASTIME":  # numbers: right-aligned
        return temporal_text(kind, value, date_format).rjust(col.length).encode(codec)
    if kind in FIXED_TEXT_LENGTH:
        value = temporal_text(kind, value, date_format)
    if kind == "INT":
        return value.to_bytes(col.length, "big", signed=True)
    if kind == "DEC":
        return packed(value, col.length, 0xF if value % 7 == 3 else 0xC)
    if kind == "FLOT":
        return hfp(value, col.length)
    if col.bits or kind in ("ROWI", "BLOB"):
        raw = value
    elif kind == "GRPH":
        raw = value.ljust(col.length // 2).encode("utf-16-be")  # padded with U+0020
    elif kind in DOUBLE_BYTE:
        raw = value.encode("utf-16-be")
        return u16(len(raw) // 2) + raw  # VGRF/LVGR: length in double-byte characters
    else:
        raw = value.encode(codec)
        if kind == "CHAR" or kind in FIXED_TEXT_LENGTH:
            raw = raw.ljust(col.length, " ".encode(codec))
    if col.varying:
        return u16(len(raw)) + raw
    if len(raw) != col.length:
        raise ValueError(f"{col.name}: {len(raw)} bytes for a {col.length}-byte column")
    return raw


def row_image(table: Table, row: dict[str, Any]) -> bytes:
    """Columns in LLCOLUMNNUM order (interpretation 4); a row written before an ADD COLUMN
    ends before the added columns."""
    codec, parts = table.text_codec(), []
    added = added_after(table, row)
    for col in table.columns[: len(table.columns) - len(added)]:
        value = row[col.name]
        if col.nullable:
            parts.append(b"\xff" if value is None else b"\x00")
        if value is None or excluded_lob(table, col, value):
            parts.append(b"\x00\x00" if col.varying else bytes(col.length))
        else:
            parts.append(encode_value(col, value, codec, table.date_format))
    return b"".join(parts)


def limit_key_image(table: Table, limit: tuple) -> bytes:
    """A limit key as a partition-level DM's DATA holds it (docs/logmaster.md "Mass delete of
    one partition"): the leading key columns' values, each as a row image holds its column."""
    codec, parts = table.text_codec(), []
    for col, value in zip(table.key_columns, limit, strict=False):
        if col.nullable:
            parts.append(b"\x00")
        parts.append(encode_value(col, value, codec, table.date_format))
    return b"".join(parts)


def render(col: Col, value: Any, codec: str, date_format: str = "DB2I") -> str | None:
    """A value as README "Value rendering" shows it (USA times have no seconds: ':00')."""
    if value is None:
        return None
    kind = col.type
    if kind == "INT":
        return str(value)
    if kind == "DEC":
        return scaled(value, col.scale)
    if kind == "FLOT":
        return float32_text(value) if col.length == 4 else repr(value)
    if kind == "DATE":
        return value
    if kind == "TIME":
        clock = value.replace(".", ":")
        return clock[:6] + "00" if date_format == "USA" else clock
    if kind in ("DTTM", "DTTZ"):
        return f"{value[:10]} {value[11:19].replace('.', ':')}{value[19:]}"
    if col.bits or kind in ("ROWI", "BLOB"):
        return value.hex().upper()
    if kind == "GRPH":
        return value.ljust(col.length // 2)
    if kind == "CHAR":
        return value.encode(codec).ljust(col.length, " ".encode(codec)).decode(codec)
    return value


def render_row(table: Table, row: dict[str, Any] | None) -> dict[str, str | None] | None:
    if row is None:
        return None
    codec = table.text_codec()
    return {
        c.name: None
        if excluded_lob(table, c, row[c.name])
        else render(c, row[c.name], codec, table.date_format)
        for c in table.columns
    }


# --- DATA fields ----------------------------------------------------------------------------------


def data_field(*images: bytes) -> bytes:
    """LLDF DATA (interpretation 3): u16 total incl. itself, each image u16 length + bytes."""
    body = b"".join(u16(len(image)) + image for image in images)
    if len(body) + 2 > 0xFFFF:
        raise ValueError("DATA longer than a u16 length can say")
    return u16(len(body) + 2) + body


def text_data(text: str) -> bytes:
    """CO/CM/SC DATA: u16 total, u16 text length, EBCDIC text."""
    raw = text.encode(EBCDIC)
    return u16(len(raw) + 4) + u16(len(raw)) + raw


def exchange_data(owner: str, name: str) -> bytes:
    """E DATA: u16 total, u16 owner length, owner, u16 name length, name (the clone table)."""
    body = b"".join(u16(len(part)) + part for part in (owner.encode(EBCDIC), name.encode(EBCDIC)))
    return u16(len(body) + 2) + body


def segments(data: bytes) -> list[bytes]:
    """DATA cut into MAX_SEGMENT_DATA slices (interpretation 7); one slice when it fits."""
    return [data[i : i + MAX_SEGMENT_DATA] for i in range(0, len(data), MAX_SEGMENT_DATA)]


# --- log positions ------------------------------------------------------------------------------


def side_random(rng: random.Random) -> random.Random:
    """A second generator seeded from ``rng``'s state without drawing from it: what a table
    with ``side_random`` draws, so that ``rng``'s sequence is the one an extract without that
    table draws."""
    return random.Random(repr(rng.getstate()))


class Log:
    """Hands out increasing (time, LRSN, RBA) positions, as Db2 writes log records."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.clock = START_TIME
        self.count = 0
        self.legacy_rba = LEGACY_RBA_BASE
        self.extended_rba = EXTENDED_RBA_BASE
        self.last_rba = bytes(10)

    def next(
        self, nbytes: int, rng: random.Random | None = None
    ) -> tuple[dt.datetime, bytes, bytes]:
        self.clock += dt.timedelta(microseconds=(rng or self.rng).randint(300, 30_000))
        self.count += 1
        tod = tod_clock(self.clock)
        if self.count <= LEGACY_POSITIONS:  # 6-byte-origin values, placed per the footnote
            lrsn = lrsn_from_6((tod >> 16).to_bytes(6, "big"))
            rba = rba_from_6(self.legacy_rba.to_bytes(6, "big"))
            self.legacy_rba += nbytes
        else:
            lrsn = b"\x00" + (tod | (self.count & 0xFFF)).to_bytes(8, "big") + b"\x00"
            rba = self.extended_rba.to_bytes(10, "big")
            self.extended_rba += nbytes
        self.last_rba = rba
        return self.clock, lrsn, rba


# --- units of recovery --------------------------------------------------------------------------

CONNECTIONS = (
    ("BA", "BATCH", "PAYJOB01", "PRODBAT", "PAYPLAN", "USIBMSY", "DB2PLU"),
    ("CI", "CICSPRD1", "ENTRORD10001", "CICSUSR", "ORDPLAN", "USIBMSY", "CICSPRD1"),
    ("DD", "SERVER", "db2jcc_appli", "WEBAPP", "DISTSERV", "NETWEB", "APPSRV01"),
    ("TS", "TSO", "DBADM1", "DBADM1", "DSNESPCS", "USIBMSY", "DB2PLU"),
)  # fmt: skip
UTILITY = ("UT", "UTILITY", "LOADCUST", "DBADM1", "DSNUTIL", "USIBMSY", "DB2PLU")
EXCLUSIVE = frozenset({"truncate", "mass_delete", "exchange", "reuse", "ddl", "load_part"})
SCRIPTED = (
    (0.04, "abort"), (0.07, "savepoint"), (0.10, "reversed"), (0.15, "load"), (0.25, "ddl"),
    (0.30, "status"), (0.40, "truncate"), (0.48, "command"), (0.55, "mass_delete"),
    (0.62, "load_part"), (0.70, "reuse"), (0.75, "abort"), (0.80, "savepoint"), (0.85, "reversed"),
)  # fmt: skip
MIN_TRANSACTIONS = 24  # room for every scripted kind plus two in-flight URs


@dataclass
class Change:
    """One logical change: one LLDF record, or several segments of one."""

    table: Table
    change_type: str
    disposition: str
    moment: dt.datetime
    lrsn: bytes
    rba: bytes
    data: bytes
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    text: str | None = None
    clone: tuple[str, str] | None = None
    rid: bytes = bytes(5)
    partnum: int = 1  # PARTNUM (a partition-level DM: the partition it emptied)
    limits: tuple[tuple, tuple] | None = None  # a partition-level DM's (low, high) limit keys
    locations: list[tuple[int, str, int]] = field(default_factory=list)  # segnum, file, offset
    truth: dict[str, Any] = field(default_factory=dict)


@dataclass
class Ur:
    """A unit of recovery being simulated: its script, its changes and its private view."""

    number: int
    kind: str
    steps: list[str]
    connection: tuple[str, ...]
    started: dt.datetime
    uoridlrsn: bytes
    uorid: bytes
    disposition: str = "C"  # LOGRECDISP of its ordinary records: C, A, or blank (in-flight)
    phase: str = "C"  # S between SAVEPOINT and ROLLBACK
    changes: list[Change] = field(default_factory=list)
    overlay: dict[str, dict[tuple, dict | None]] = field(default_factory=dict)
    cleared: set[str] = field(default_factory=set)
    saved: tuple | None = None
    partnum: int = 0  # the partition a LOAD REPLACE replaces
    uordisp: str = " "
    end: tuple[dt.datetime | None, bytes, bytes] = (None, bytes(10), bytes(10))

    @property
    def exclusive(self) -> bool:
        return self.kind in EXCLUSIVE

    @property
    def has_compensation(self) -> bool:
        return any(c.disposition in ("A", "S", "O") for c in self.changes)


def _script(kind: str, rng: random.Random) -> list[str]:
    rows = lambda low, high: ["row"] * rng.randint(low, high)  # noqa: E731
    scripts = {
        "normal": rows(1, 6), "abort": rows(2, 5), "inflight": rows(1, 4),
        "savepoint": [*rows(1, 3), "SAVEPOINT", *rows(1, 3), "ROLLBACK", *rows(1, 2)],
        "reversed": [*rows(1, 2), "REVERSED", *rows(0, 2)],
        "load": ["IL"] * rng.randint(5, 15), "ddl": ["CO"], "status": ["SC", *rows(0, 2)],
        "command": ["CM"], "truncate": ["DT"], "mass_delete": ["DM"], "exchange": ["E"],
        "reuse": ["DR"],
        # LOAD REPLACE of one partition: a DM with its limit keys, then the loaded rows
        "load_part": ["DMP", *["ILP"] * rng.randint(2, 6)],
    }  # fmt: skip
    return scripts[kind]


def plan(transactions: int, rng: random.Random) -> list[str]:
    """The kind of every UR, in start order: scripted features, random ones, 2 in-flight."""
    n = max(transactions, MIN_TRANSACTIONS)
    kinds = ["normal"] * (n - 2) + ["inflight", "inflight"]
    for i in range(n - 2):
        draw = rng.random()
        kinds[i] = "abort" if draw < 0.04 else "savepoint" if draw < 0.07 else (
            "reversed" if draw < 0.09 else "normal")  # fmt: skip
    taken: set[int] = set()
    for fraction, kind in SCRIPTED:
        i = int(fraction * n)
        width = 2 if kind == "mass_delete" else 1  # the exchange follows the mass delete
        while any(j in taken for j in range(i, i + width)):
            i += 1
        for j, k in enumerate(("mass_delete", "exchange") if width == 2 else (kind,)):
            kinds[i + j] = k
            taken.add(i + j)
    return kinds


class World:
    """The tables' committed rows, row locks, and the URs' changes against them."""

    def __init__(self, tables: list[Table], log: Log, rng: random.Random):
        self.tables = {t.full_name: t for t in tables}
        self.by_role = {
            "customer": tables[0], "orders": tables[1], "stock": tables[2],
            "i18n": tables[3], "docs": tables[4], "employee": tables[5], "notes": tables[6],
        }  # fmt: skip
        self.log, self.rng = log, rng
        self.locks: dict[tuple[str, tuple], int] = {}
        self.weights = [3, 3, 2, 2, 1, 2, 1]
        # DOCS.NOTE_REVIEW is not picked by weight: it changes beside DOCS.DOCUMENT_NOTE with
        # values from its own generator, so the other tables' values stay as they were
        self.reviews = next((t for t in tables if t.side_random), None)
        self.side_rng = side_random(rng)

    # --- beginning and ending

    def begin(self, number: int, kind: str) -> Ur:
        moment, lrsn, rba = self.log.next(60)  # the begin-UR log record: URID = its RBA
        connection = UTILITY if kind == "load" else self.rng.choice(CONNECTIONS)
        ur = Ur(number, kind, _script(kind, self.rng), connection, moment, lrsn, rba)
        ur.disposition = {"abort": "A", "inflight": " "}.get(kind, "C")
        return ur

    def finish(self, ur: Ur) -> None:
        """Commit or abort: the end point gives UORCOMMIT*; committed effects become visible."""
        ur.end = self.log.next(40)
        ur.uordisp = "A" if ur.kind == "abort" else "C"
        if ur.uordisp == "C":
            for name in ur.cleared:
                self.tables[name].rows.clear()
            for name, rows in ur.overlay.items():
                table = self.tables[name]
                for key, row in rows.items():
                    if row is None:
                        table.rows.pop(key, None)
                    else:
                        table.rows[key] = row
        self._unlock(ur)

    def _unlock(self, ur: Ur) -> None:
        for key in [k for k, owner in self.locks.items() if owner == ur.number]:
            del self.locks[key]

    # --- one step of a script

    def step(self, ur: Ur) -> None:
        token = ur.steps.pop(0)
        if token == "SAVEPOINT":
            ur.saved = ({n: dict(rows) for n, rows in ur.overlay.items()}, set(ur.cleared))
            ur.phase = "S"
        elif token == "ROLLBACK":  # ROLLBACK TO SAVEPOINT: the S records' effects are undone
            assert ur.saved is not None
            overlay, cleared = ur.saved
            ur.overlay, ur.cleared, ur.phase = overlay, cleared, "C"
        elif token == "row":
            table = self._pick_table()
            self._row_change(ur, table)
            if table is self.by_role["notes"]:
                self._review_change(ur)
        elif token == "REVERSED":
            self._row_change(ur, self._pick_table(), reversed_by_db2=True)
        elif token == "IL":
            self._insert(ur, self.by_role["customer"], "IL")
        elif token == "DMP":
            self._partition_mass_delete(ur, self.by_role["stock"])
        elif token == "ILP":
            self._load_into_partition(ur, self.by_role["stock"])
        else:
            self._object_change(ur, token)

    def _pick_table(self) -> Table:
        return self.rng.choices(list(self.by_role.values()), self.weights)[0]

    def _disposition(self, ur: Ur) -> str:
        return "S" if ur.phase == "S" and ur.disposition == "C" else ur.disposition

    def visible(self, ur: Ur, table: Table) -> dict[tuple, dict]:
        rows = {} if table.full_name in ur.cleared else dict(table.rows)
        for key, row in ur.overlay.get(table.full_name, {}).items():
            if row is None:
                rows.pop(key, None)
            else:
                rows[key] = row
        return rows

    def _rng(self, table: Table) -> random.Random:
        return self.side_rng if table.side_random else self.rng

    def _review_change(self, ur: Ur) -> None:
        """A change to DOCS.NOTE_REVIEW (XML not logged, rows from before an ADD COLUMN)."""
        if self.reviews is not None:
            self._row_change(ur, self.reviews)

    def _row_change(self, ur: Ur, table: Table, reversed_by_db2: bool = False) -> None:
        rng = self._rng(table)
        rows = self.visible(ur, table)
        key = self._unlocked_key(ur, table, list(rows))
        cap = 30 if table is self.by_role["docs"] else ROW_CAP
        draw = rng.random()
        if key is None or (len(rows) < cap and draw < 0.45) or (len(rows) >= cap and draw < 0.2):
            self._insert(ur, table, "I", reversed_by_db2)
            return
        if rng.random() < (0.6 if len(rows) < cap else 0.35):
            self._update(ur, table, key, rows[key], reversed_by_db2)
        else:
            self._delete(ur, table, key, rows[key], reversed_by_db2)

    def _unlocked_key(self, ur: Ur, table: Table, keys: list[tuple]) -> tuple | None:
        """A row no other open UR holds (a few random tries: cheaper than scanning them all)."""
        for _ in range(min(len(keys), 8)):
            key = self._rng(table).choice(keys)
            if self.locks.get((table.full_name, key), ur.number) == ur.number:
                return key
        return None

    def _new_row(self, table: Table) -> dict[str, Any]:
        key = table.key(table.next_key)
        short = table.added_columns and table.next_key < table.rows_before_add
        table.next_key += 1
        row = {c.name: new_value(c, table, self._rng(table)) for c in table.columns}
        row.update({c.name: value for c, value in zip(table.key_columns, key, strict=True)})
        if short:  # written before the ADD COLUMN: the added columns hold no value
            table.short_keys.add(key)
            row.update(dict.fromkeys(c.name for c in table.columns[-table.added_columns :]))
        return row

    def _insert(self, ur: Ur, table: Table, change_type: str, reversed_: bool = False) -> None:
        row = self._new_row(table)
        self._change(ur, table, change_type, None, row, "O" if reversed_ else None)
        if not reversed_:  # a record Db2 reversed leaves no effect
            self._apply(ur, table, table.key_of(row), row)

    def _update(self, ur: Ur, table: Table, key: tuple, before: dict, reversed_: bool) -> None:
        after, rng = dict(before), self._rng(table)
        added = {c.name for c in added_after(table, before)}  # a short row stays short
        changeable = [c for c in table.columns
                      if not c.keyseq and c.type != "ROWI" and c.name not in added]  # fmt: skip
        for col in rng.sample(changeable, rng.randint(1, min(3, len(changeable)))):
            after[col.name] = new_value(col, table, rng)
        self._change(ur, table, "UB", before, after, "O" if reversed_ else None)
        if not reversed_:
            self._apply(ur, table, key, after)

    def _delete(self, ur: Ur, table: Table, key: tuple, before: dict, reversed_: bool) -> None:
        self._change(ur, table, "D", before, None, "O" if reversed_ else None)
        if not reversed_:
            self._apply(ur, table, key, None)

    def _apply(self, ur: Ur, table: Table, key: tuple, row: dict | None) -> None:
        ur.overlay.setdefault(table.full_name, {})[key] = row
        self.locks[(table.full_name, key)] = ur.number

    def _change(self, ur: Ur, table: Table, change_type: str, before: dict | None,
                after: dict | None, disposition: str | None = None) -> Change:  # fmt: skip
        images = [row_image(table, row) for row in (before, after) if row is not None]
        data = data_field(*images)
        moment, lrsn, rba = self.log.next(80 + len(data), self._rng(table))
        key = table.key_of(after if after is not None else before)  # type: ignore[arg-type]
        crc = zlib.crc32(repr((table.full_name, key)).encode())
        rid = struct.pack(">IB", 2 + crc % 5000, 1 + crc % 250)  # page | row number
        change = Change(table, change_type, disposition or self._disposition(ur), moment, lrsn,
                        rba, data, before, after, rid=rid)  # fmt: skip
        ur.changes.append(change)
        return change

    def _partition_mass_delete(self, ur: Ur, table: Table) -> None:
        """LOAD REPLACE PART n: a DM whose DATA holds the partition's low and high limit keys
        (PARTNUM n); only the rows whose key falls in the partition's range are gone."""
        ur.partnum = self.rng.randint(1, len(table.limit_keys))
        low, high = table.partition_range(ur.partnum)
        for key in self.visible(ur, table):
            if table.in_partition(key, ur.partnum):
                ur.overlay.setdefault(table.full_name, {})[key] = None
        data = data_field(limit_key_image(table, low), limit_key_image(table, high))
        moment, lrsn, rba = self.log.next(60 + len(data))
        ur.changes.append(Change(table, "DM", self._disposition(ur), moment, lrsn, rba, data,
                                 partnum=ur.partnum, limits=(low, high)))  # fmt: skip

    def _load_into_partition(self, ur: Ur, table: Table) -> None:
        """A row the LOAD REPLACE of ``ur.partnum`` loads (IL), its key inside the partition."""
        low, high = table.partition_range(ur.partnum)
        row = self._new_row(table)
        lead = table.key_columns[0].name
        row[lead] = self.rng.randint((low[0] + 1) if low else 1, high[0])
        self._change(ur, table, "IL", None, row)
        self._apply(ur, table, table.key_of(row), row)

    def _object_change(self, ur: Ur, token: str) -> None:
        """Changes without row images: DT, DM, DR, E, CO, CM, SC."""
        table = {"DT": "orders", "DM": "stock", "E": "stock", "DR": "employee", "CO": "orders",
                 "CM": "customer", "SC": "docs"}[token]  # fmt: skip
        t = self.by_role[table]
        text, clone, data = None, None, b"\x00\x02"
        if token in ("DT", "DM", "DR", "E"):  # emptied (E: swapped with an empty clone)
            ur.cleared.add(t.full_name)
            ur.overlay.pop(t.full_name, None)
        if token == "E":
            clone = (t.owner, t.name + "_CLONE")
            data = exchange_data(*clone)
        elif token in ("CO", "CM", "SC"):
            text = {
                "CO": f"CREATE INDEX {t.owner}.XORDERS2 ON {t.full_name} (CUST_ID ASC)",
                "CM": f"-START DATABASE({t.dbname}) SPACENAM({t.tsname}) ACCESS(RW)",
                "SC": f"TABLESPACE {t.dbname}.{t.tsname} STATUS CHANGED: COPY PENDING RESET",
            }[token]
            data = text_data(text)
        moment, lrsn, rba = self.log.next(60 + len(data))
        change = Change(t, token, self._disposition(ur), moment, lrsn, rba, data, text=text,
                        clone=clone)  # fmt: skip
        ur.changes.append(change)


def simulate(kinds: list[str], world: World, rng: random.Random) -> Iterable[Ur]:
    """Run the URs interleaved; yield each as it ends (in-flight ones when the log ends)."""
    open_urs: list[Ur] = []
    left_open: list[Ur] = []
    i = 0
    while i < len(kinds) or open_urs:
        if i < len(kinds) and not any(u.exclusive for u in open_urs):
            exclusive = kinds[i] in EXCLUSIVE
            may_start = (
                not open_urs
                if exclusive
                else (len(open_urs) < MAX_OPEN_URS and (not open_urs or rng.random() < 0.5))
            )
            if may_start:
                open_urs.append(world.begin(i, kinds[i]))
                i += 1
                continue
        ur = rng.choice(open_urs)
        if ur.steps:
            world.step(ur)
            continue
        open_urs.remove(ur)
        if ur.kind == "inflight":
            left_open.append(ur)  # still open when the extract ends: no commit, locks kept
        else:
            world.finish(ur)
            yield ur
    yield from left_open


# --- LLDF records -------------------------------------------------------------------------------

LLDF_OFFSETS = {name: (offset, length) for name, offset, length, _ in LLDF_FIELDS}


def ur_header_template(ur: Ur) -> bytearray:
    """The 288 header bytes every record of ``ur`` shares; per-record fields are patched in."""
    end_moment, end_lrsn, end_rba = ur.end
    ctype, connect, correlation, authid, plan_name, network, luw = ur.connection
    values = {
        "LENGTH": u16(LLDF_HEADER_SIZE), "SYSTEMID": char(SYSID, 4), "PARTNUM": u16(1),
        "MEMBERID": u16(0), "SQLTYPE": char(" ", 1), "SQLSRCTYPE": char(" ", 1),
        "LOGDELTA": u16(0), "ANOMALYROWID": b"\x00", "ANOMALYTYPE": char("N", 1),
        "UORTIMESTAMP": bin17(ur.started), "UORCOMMITTIMESTAMP": bin17(end_moment),
        "UORDISP": char(ur.uordisp, 1), "UORIDLRSN": ur.uoridlrsn, "UORID": ur.uorid,
        "UORCOMMITLRSN": end_lrsn, "UORCOMMITPOINT": end_rba, "CONNECTIONTYPE": char(ctype, 2),
        "CONNECTID": char(connect, 8), "CORRELATIONID": char(correlation, 12),
        "AUTHID": char(authid, 8), "PLAN": char(plan_name, 8), "LUWNETWORKID": char(network, 8),
        "LUWNAME": char(luw, 8), "LUWINSTANCENO": ur.uoridlrsn[1:7], "LUWSEQUENCENO": u16(1),
        "INCOMPLETETRANS": char("N", 1), "INCOMPLETEDEP": char("N", 1),
        "UORHASCOMP": char("Y" if ur.has_compensation else "N", 1), "PAGENUMFMT": char("R", 1),
    }  # fmt: skip
    return bytearray(build_record(LLDF_LAYOUT, LLDF_HEADER_SIZE, values))


def _patch(buf: bytearray, name: str, raw: bytes) -> None:
    offset, length = LLDF_OFFSETS[name]
    if len(raw) != length:
        raise ValueError(f"{name} is {length} bytes, got {len(raw)}")
    buf[offset : offset + length] = raw


def change_records(template: bytearray, change: Change) -> list[bytes]:
    """The LLDF record(s) of one change: header + DATA, or one record per segment."""
    t = change.table
    header = bytearray(template)
    for name, raw in (
        ("DBID", u16(t.dbid)), ("PSID", u16(t.psid)), ("TBOBID", u16(t.tbobid)),
        ("TBOWNERLEN", u16(len(t.owner))), ("TBNAMELEN", u16(len(t.name))),
        ("DBNAME", char(t.dbname, 8)), ("TSNAME", char(t.tsname, 8)),
        ("TABLEOWNER", char(t.short_owner, 8)), ("TABLENAME", char(t.short_name, 18)),
        ("TIMESTAMP", bin17(change.moment)), ("LOGLRSN", change.lrsn), ("LOGRBA", change.rba),
        ("RID", change.rid), ("CHANGE TYPE", char(change.change_type, 2)),
        ("LOGRECDISP", char(change.disposition, 1)),
        ("LOGBYTES", struct.pack(">I", 40 + len(change.data))), ("SQLRIRBA", change.rba),
        ("PARTNUM", u16(change.partnum)),
    ):  # fmt: skip
        _patch(header, name, raw)
    slices = segments(change.data)
    records = []
    for number, piece in enumerate(slices, start=1):
        _patch(header, "SEGLEN", u16(len(piece)))
        _patch(header, "TOTALSEGS", u16(len(slices)))
        _patch(header, "SEGNUM", u16(number))
        records.append(bytes(header) + piece)
    return records


# --- truth --------------------------------------------------------------------------------------


def _stamp(moment: dt.datetime | None) -> str | None:
    """A BIN(17) timestamp as logged: 12 fraction digits (microseconds + 6 zeros)."""
    return None if moment is None else micros(moment) + "000000"


def change_truth(ur: Ur, change: Change) -> dict[str, Any]:
    t = change.table
    end_moment, end_lrsn, end_rba = ur.end
    truth = {
        "ur": ur.number, "uorid": ur.uorid.hex().upper(),
        "uoridlrsn": ur.uoridlrsn.hex().upper(), "uor_disposition": ur.uordisp.strip(),
        "commit_lrsn": end_lrsn.hex().upper(), "commit_rba": end_rba.hex().upper(),
        "commit_timestamp": _stamp(end_moment), "log_lrsn": change.lrsn.hex().upper(),
        "log_rba": change.rba.hex().upper(), "timestamp": _stamp(change.moment),
        "change_type": change.change_type, "disposition": change.disposition.strip(),
        "table_owner": t.owner, "table_name": t.name, "authid": ur.connection[3],
        "rid": change.rid.hex().upper(), "before": render_row(t, change.before),
        "after": render_row(t, change.after), "text": change.text,
        "clone_owner": change.clone[0] if change.clone else None,
        "clone_name": change.clone[1] if change.clone else None,
        "before_unavailable": unavailable_columns(t, change.before),
        "after_unavailable": unavailable_columns(t, change.after),
    }  # fmt: skip
    if change.limits is not None:  # a partition-level DM: the key range it emptied
        codec = t.text_codec()
        truth["partition"] = {
            "partnum": change.partnum,
            "columns": [c.name for c in t.key_columns[: len(change.limits[1])]],
            **{
                side: [render(c, v, codec, t.date_format) for c, v in
                       zip(t.key_columns, limit, strict=False)]
                for side, limit in zip(("low", "high"), change.limits, strict=True)
            },
        }  # fmt: skip
    return truth


def table_truth(table: Table) -> dict[str, Any]:
    columns = [
        {"name": c.name, "type": c.type, "length": c.length, "precision": c.precision,
         "scale": c.scale, "nullable": c.nullable, "for_bit_data": c.bits, "key_seq": c.keyseq}
        for c in table.columns
    ]  # fmt: skip
    return {
        "owner": table.owner, "name": table.name, "short_owner": table.short_owner,
        "short_name": table.short_name, "encoding": table.encoding, "columns": columns,
        "key": [c.name for c in table.key_columns],
        "rows": [render_row(table, table.rows[key]) for key in sorted(table.rows)],
        "unavailable": [unavailable_columns(table, table.rows[key]) for key in sorted(table.rows)],
    }  # fmt: skip


# --- writing ------------------------------------------------------------------------------------


class DataFiles:
    """Shuffles records in bounded windows and deals them to the data files; streams truth."""

    def __init__(self, folder: Path, names: list[str], truth: TextIO, rng: random.Random):
        self.rng, self.names = rng, names
        self.side_rng = side_random(rng)  # shuffles and deals side_random tables' records
        self.handles = [(folder / name).open("wb") for name in names]
        self.offsets = [0] * len(names)
        self.records = [0] * len(names)
        self.truth = truth
        self.pending: list[tuple[Change, list[bytes]]] = []
        self.pending_records = 0

    def add(self, ur: Ur, changes: list[Change] | None = None, open_ur: bool = False) -> None:
        """Write ``changes`` of ``ur`` (all of them by default). ``open_ur``: as an extract
        that ends while the UR is open logs them: no UORDISP, no commit point, no LOGRECDISP
        (the truth still says what became of them)."""
        shown = replace(ur, uordisp=" ", end=(None, bytes(10), bytes(10))) if open_ur else ur
        template = ur_header_template(shown)
        for change in ur.changes if changes is None else changes:
            change.truth = change_truth(ur, change)
            records = change_records(template, replace(change, disposition=" ") if open_ur
                                     else change)  # fmt: skip
            self.pending.append((change, records))
            # side_random tables' records do not count: the other tables' windows stay as
            # they were
            self.pending_records += 0 if change.table.side_random else len(records)
        if self.pending_records >= WINDOW_RECORDS:
            self.flush()

    def flush(self) -> None:
        entries = [(c, n, rec) for c, recs in self.pending for n, rec in enumerate(recs, 1)
                   if not c.table.side_random]  # fmt: skip
        self.rng.shuffle(entries)
        self._place_side_entries(entries)
        for change, segnum, record in entries:
            rng = self.side_rng if change.table.side_random else self.rng
            f = rng.randrange(len(self.handles))
            framed = rdw(record)
            self.handles[f].write(framed)
            change.locations.append((segnum, self.names[f], self.offsets[f]))
            self.offsets[f] += len(framed)
            self.records[f] += 1
        for change, records in self.pending:  # URs in end order; locations by SEGNUM
            change.truth["records"] = [[name, off] for _, name, off in sorted(change.locations)]
            change.truth["segments"] = len(records)
            self.truth.write(json.dumps(change.truth, ensure_ascii=False, sort_keys=True) + "\n")
        self.pending, self.pending_records = [], 0

    def _place_side_entries(self, entries: list) -> None:
        """Put the side_random tables' records among ``entries`` at places drawn from the
        second generator (the main one shuffled the others as it would without them)."""
        for change, records in self.pending:
            if change.table.side_random:
                for segnum, record in enumerate(records, 1):
                    place = self.side_rng.randrange(len(entries) + 1)
                    entries.insert(place, (change, segnum, record))

    def close(self) -> None:
        self.flush()
        for handle in self.handles:
            handle.close()


# --- control file -------------------------------------------------------------------------------


def xtyp_record() -> bytes:
    values = {
        "CNTLRECORDTYPE": char("XTYP", 4), "FILETYPE": char("DB2", 4),
        "VERSION": char("V13", 6), "SYSID": char(SYSID, 4), "SQLDELIMITER": char("'", 1),
        "MIXED": char("N", 1), "DECIMALPOINT": char(".", 1), "EBCDICSBCS": num(37, 5),
        "EBCDICDBCS": num(0, 5), "EBCDICMIXED": num(0, 5), "ASCIISBCS": num(819, 5),
        "ASCIIDBCS": num(0, 5), "ASCIIMIXED": num(0, 5), "UNICODESBCS": num(367, 5),
        "UNICODEDBCS": num(1200, 5), "UNICODEMIXED": num(1208, 5),
    }  # fmt: skip
    return build_record(XTYP, XTYP_SIZE, values)


def xhdf_records() -> list[bytes]:
    """One XHDF per documented LLDF header field: name, type, unsigned flag, length, offset."""
    records = []
    for name, offset, length, kind in LLDF_FIELDS:
        values = {
            "CNTLRECORDTYPE": char("XHDF", 4), "FIELDNAME": char(name, 18),
            "FIELDTYPE": char(kind, 4), "UNSIGNED": char("U" if kind in ("INT", "BIN") else " ", 1),
            "FIELDLENGTH": num(length, 5), "FIELDOFFSET": num(offset, 5),
        }  # fmt: skip
        records.append(build_record(XHDF, XHDF_SIZE, values))
    return records


def dlds_record(dataset: str, date_format: str = "DB2I") -> bytes:
    values = {
        "CNTLRECORDTYPE": char("DLDS", 4), "DATASETNAME": char(dataset, 44),
        "RECFM": char("VB", 3), "DATEFORMAT": char(date_format, 8), "EXPANDVAR": char("N", 1),
        "SEGMENTED": char("Y", 1), "DDLOBJECTS": char("Y", 1), "LOBSINCLUDED": char("Y", 1),
        "XMLINCLUDED": char("N", 1),
    }  # fmt: skip
    return build_record(DLDS, DLDS_SIZE, values)


def column_positions(columns: Iterable[Col]) -> list[int]:
    """Each column's offset in the row image (its first byte 0) up to and including the first
    varying column, -1 after it; LLCOLUMNPOS adds ``LLCOLUMNPOS_BASE`` (:func:`llcolumnpos`)."""
    positions, offset, after_varying = [], 0, False
    for col in columns:
        positions.append(-1 if after_varying else offset)
        after_varying = after_varying or col.varying
        offset += col.loglog_bytes()
    return positions


def llcolumnpos(offset: int) -> int:
    """LLCOLUMNPOS of a column at row image ``offset``: "within the DATA field"; -1 stays."""
    return offset if offset < 0 else LLCOLUMNPOS_BASE + offset


CREATE_LRSN = lrsn_from_6((tod_clock(dt.datetime(2023, 1, 10, 8, tzinfo=dt.UTC)) >> 16)
                          .to_bytes(6, "big"))  # fmt: skip


def dtbi_record(table: Table) -> bytes:
    cols = table.columns
    values = {
        "CNTLRECORDTYPE": char("DTBI", 4), "SYSID": char(SYSID, 4),
        "DBID": hexid(table.dbid), "PSID": hexid(table.psid), "TBOBID": hexid(table.tbobid),
        "OBJECTTYPE": char("TB", 2), "DB2NUMCOL": num(len(cols), 3),
        "DB2MAXROWLEN": num(sum(c.internal_bytes() for c in cols), 5),
        "LLNUMCOL": num(len(cols), 3), "LLMAXROWLEN": num(sum(c.loglog_bytes() for c in cols), 5),
        "ROWTYPE": char("V" if any(c.varying for c in cols) else "F", 1),
        "SEQUENCENUMBER": num(1, 3), "CREATERBA": CREATE_LRSN, "DROPRBA": bytes(10),
        "ENCODINGSCHEME": char(table.encoding, 1), "EDITPROCNAMELEN": num(0, 3),
        "DBNAMELEN": num(len(table.dbname), 3), "DBNAME": char(table.dbname, 24),
        "TSNAMELEN": num(len(table.tsname), 3), "TSNAME": char(table.tsname, 24),
        "TABLEOWNERLEN": num(len(table.owner), 3), "TABLEOWNER": char(table.owner, 128),
        "SHORTOWNER": char(table.short_owner, 8), "TABLENAMELEN": num(len(table.name), 3),
        "TABLENAME": char(table.name, 128), "SHORTNAME": char(table.short_name, 18),
        "VERSION": num(table.version, 3), "UNTRANOWNERFLAG": char("N", 1),
        "UNITABLEOWNERLEN": num(0, 3), "UNTRANNAMEFLAG": char("N", 1),
        "UNITABLENAMELEN": num(0, 3),
        "LOBSINCLUDED": char("Y" if table.lobs_included else "N", 1),
        "XMLINCLUDED": char("Y" if table.xml_included else "N", 1),
    }  # fmt: skip
    return build_record(DTBI, DTBI_SIZE, values)


def _subtype(col: Col, table: Table) -> str:
    if col.type not in ("CHAR", "VCHR"):
        return " "
    return "B" if col.bits else ("M" if table.encoding == "U" else "S")


def dlci_records(table: Table) -> list[bytes]:
    records = []
    for number, (col, pos) in enumerate(zip(table.columns, column_positions(table.columns),
                                            strict=True), start=1):  # fmt: skip
        version = num(table.version, 3)
        values = {
            "CNTLRECORDTYPE": char("DLCI", 4), "SYSID": char(SYSID, 4),
            "DBID": hexid(table.dbid), "TBOBID": hexid(table.tbobid),
            "LLCOLUMNNUM": num(number, 3), "LLCOLUMNTYPE": char(col.type, 4),
            "LLCOLUMNLEN": num(col.length, 5), "LLSCALE": num(col.scale, 2),
            "LLNULLS": char(("L" if col.lob_like else "Y") if col.nullable else "N", 1),
            "LLCOLUMNPOS": num(llcolumnpos(pos), 5),
            "LLCOLUMNSUBTYPE": char(_subtype(col, table), 1),
            "KEYSEQ": num(col.keyseq, 3), "KEYORDERING": char("A" if col.keyseq else " ", 1),
            "DB2ROWBYTES": num(col.internal_bytes(), 5),
            "FLDPROCBYTES": num(col.internal_bytes(), 5),
            "LOGLOGBYTES": num(col.loglog_bytes(), 5), "SEQUENCENUMBER": num(1, 3),
            "COLUMNNAMELEN": num(len(col.name), 3), "COLUMNNAME": char(col.name, 128),
            "VERSION": version,
        }  # fmt: skip
        records.append(build_record(DLCI, DLCI_SIZE, values))
    return records


def unknown_record(table: Table) -> bytes:
    """A DICL (index column) record: a type logmart does not decode, which readers skip."""
    return (
        char("DICL", 4)
        + char(SYSID, 4)
        + hexid(table.dbid)
        + hexid(table.tbobid)
        + char("XORDERS1", 18)
        + num(1, 3)
        + char(table.columns[0].name, 30)
        + char("A", 1)
    )


def dlge_record(end_rba: bytes, end_time: dt.datetime, dependent_rba: bytes) -> bytes:
    values = {"CNTLRECORDTYPE": char("DLGE", 4), "ENDRBA": end_rba, "ENDTIME": bin17(end_time),
              "DEPENDENTRBA": dependent_rba}  # fmt: skip
    return build_record(DLGE, DLGE_SIZE, values)


def control_records(tables: list[Table], data_sets: list[str], end: bytes) -> list[bytes]:
    """XTYP, XHDF…, DLDS per data file, per table DTBI + DLCI… (a DICL after the second), DLGE."""
    date_format = tables[0].date_format if tables else "DB2I"
    records = [xtyp_record(), *xhdf_records(),
               *(dlds_record(name, date_format) for name in data_sets)]  # fmt: skip
    for i, table in enumerate(tables):
        records += [dtbi_record(table), *dlci_records(table)]
        if i == 1:
            records.append(unknown_record(table))
    records.append(end)
    return records


def write_vb(path: Path, records: Iterable[bytes]) -> int:
    """Write records with RDWs; returns how many."""
    count = 0
    with path.open("wb") as handle:
        for record in records:
            handle.write(rdw(record))
            count += 1
    return count


# --- entry point --------------------------------------------------------------------------------


def generate(
    out_dir: Path,
    transactions: int = 200,
    seed: int = 1,
    *,
    capture: str = EXTRACT,
    split: str | None = None,
    date_format: str = "DB2I",
) -> dict:
    """Write a Log Master extract under ``out_dir/logmaster/<capture>`` and its truth; returns
    a summary. ``transactions`` URs are simulated (at least 24: every scripted feature needs
    room); data set names start with the capture folder's last name.

    ``split``: the log is cut in two extracts of one log stream (give both captures the same
    first folder, e.g. ``DB2P/LOGM.EXTRACT1`` and ``DB2P/LOGM.EXTRACT2``): records before a
    point in the middle go to ``capture``, the rest to ``split``. Committed URs open at that
    point are in flight in the first extract (no UORDISP, no commit point) and committed in
    the second; the truth says committed, and ``summary["split"]`` names them.

    ``date_format``: the DLDS DATEFORMAT the extract is written in (one of ``DATE_FORMATS``);
    the same seed writes the same values in every format.
    """
    if date_format not in DATE_FORMATS:
        raise ValueError(f"date_format {date_format!r} is not one of {DATE_FORMATS}")
    rng = random.Random(seed)
    truth_dir = Path(out_dir) / "truth" / "db2zos"
    truth_dir.mkdir(parents=True, exist_ok=True)
    tables = [replace(table, date_format=date_format) for table in _tables()]
    log = Log(rng)
    world = World(tables, log, rng)
    counts: dict[str, Counter] = {
        k: Counter() for k in ("change_types", "dispositions", "ur_dispositions", "ur_kinds")
    }
    segmented, in_flight = 0, []

    def count(ur: Ur) -> None:
        nonlocal segmented
        counts["ur_dispositions"][ur.uordisp.strip() or "in_flight"] += 1
        counts["ur_kinds"][ur.kind] += 1
        if ur.kind == "inflight":
            in_flight.append(ur.uorid)
        for change in ur.changes:
            counts["change_types"][change.change_type] += 1
            counts["dispositions"][change.disposition.strip() or "in_flight"] += 1
            segmented += len(change.data) > MAX_SEGMENT_DATA

    files: dict[str, dict] = {}
    split_summary = None
    with (truth_dir / "changes.jsonl").open("w", encoding="utf-8") as truth:
        if split is None:
            extract = _Extract(Path(out_dir), capture, truth, rng)
            for ur in simulate(plan(transactions, rng), world, rng):
                extract.data.add(ur)
                count(ur)
            end = dlge_record(log.last_rba, log.clock, min(in_flight, default=bytes(10)))
            files.update(extract.close(tables, end))
        else:
            urs = list(simulate(plan(transactions, rng), world, rng))
            for ur in urs:
                count(ur)
            files, split_summary = _write_split(Path(out_dir), (capture, split), urs, tables,
                                                log, truth, rng)  # fmt: skip
    truth = {t.full_name: table_truth(t) for t in tables}
    (truth_dir / "tables.json").write_text(
        json.dumps(truth, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8"
    )
    summary = {
        "extract": capture, "seed": seed, "files": files,
        "records_per_file": {name: f["records"] for name, f in files.items()},
        "change_types": dict(sorted(counts["change_types"].items())),
        "dispositions": dict(sorted(counts["dispositions"].items())),
        "transactions": dict(sorted(counts["ur_dispositions"].items())),
        "transaction_kinds": dict(sorted(counts["ur_kinds"].items())),
        "segmented_changes": segmented,
        "tables": {name: len(t["rows"]) for name, t in sorted(truth.items())},
    }  # fmt: skip
    if split_summary is not None:
        summary["split"] = split_summary
    (truth_dir / "summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True))
    return summary


class _Extract:
    """One extract folder being written: its data files, then its control file."""

    def __init__(self, out_dir: Path, capture: str, truth: TextIO, rng: random.Random):
        self.folder = out_dir / "logmaster" / capture
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = Path(capture).name
        for old in self.folder.glob(f"{self.prefix}.F*"):
            old.unlink()
        names = [f"{self.prefix}.F{n:04d}" for n in range(1, DATA_FILES + 2)]
        self.control_name, self.data_names = names[0], names[1:]
        self.data = DataFiles(self.folder, self.data_names, truth, rng)

    def close(self, tables: list[Table], end: bytes) -> dict[str, dict]:
        """Flush the data files, write the control file; the files written, by name."""
        self.data.close()
        control = write_vb(self.folder / self.control_name,
                           control_records(tables, self.data_names, end))  # fmt: skip
        files = {self.control_name: {"kind": "control", "records": control}}
        for name, records in zip(self.data_names, self.data.records, strict=True):
            files[name] = {"kind": "data", "records": records}
        return files


def _cut(urs: list[Ur]) -> tuple[dt.datetime, list[Ur]]:
    """A point in the middle of the log where every UR then open is a plain committed one (or
    one never ending): the time of the last change of such a UR with 2+ changes, and the URs
    that have changes before it but end (or change again) at or after it."""
    middle = len(urs) // 2
    for candidate in urs[middle:] + urs[:middle]:
        if candidate.kind != "normal" or len(candidate.changes) < 2:
            continue
        point = candidate.changes[-1].moment
        open_urs = [u for u in urs if u.changes and u.changes[0].moment < point
                    and (u.end[0] is None or u.end[0] >= point)]  # fmt: skip
        if all(u.kind in ("normal", "inflight") for u in open_urs):
            return point, open_urs
    raise ValueError("no point to cut the log at: generate more transactions")


def _write_split(
    out_dir: Path, captures: tuple[str, str], urs: list[Ur], tables: list[Table], log: Log,
    truth: TextIO, rng: random.Random,
) -> tuple[dict[str, dict], dict]:  # fmt: skip
    """Write ``urs`` as two extracts cut at :func:`_cut`'s point."""
    point, open_urs = _cut(urs)
    first, second = (_Extract(out_dir, c, truth, rng) for c in captures)
    opened = {u.number for u in open_urs}
    for ur in urs:
        before = [c for c in ur.changes if c.moment < point]
        after = [c for c in ur.changes if c.moment >= point]
        if before:
            first.data.add(ur, before, open_ur=ur.number in opened)
        if after:
            second.data.add(ur, after)
    before_point = [c for u in urs for c in u.changes if c.moment < point]
    last = max(before_point, key=lambda c: c.moment)
    still_open = [u.uorid for u in open_urs]
    files = first.close(tables, dlge_record(last.rba, last.moment, min(still_open)))
    in_flight = [u.uorid for u in urs if u.kind == "inflight"]
    files.update(second.close(tables, dlge_record(log.last_rba, log.clock,
                                                  min(in_flight, default=bytes(10)))))  # fmt: skip
    spanning = {
        u.uorid.hex().upper(): {
            "changes": len(u.changes),
            "changes_in_first": sum(c.moment < point for c in u.changes),
            "disposition": "committed" if u.uordisp == "C" else "in_flight",
        }
        for u in open_urs
    }
    return files, {"captures": list(captures), "cut": point.isoformat(),
                   "open_transactions": spanning}  # fmt: skip


# --- benchmark extract --------------------------------------------------------------------------

BENCH_EXTRACT = "LOGM.BENCH"
BENCH_BLOCK = 65_536  # records built per numpy pass
BENCH_TABLE = Table("BENCH", "ACCOUNT_TXN", "DBBENCH", "TSACCT", 0x0200, 0x0002, 0x0003, "E", (
    C("TXN_ID", "INT", 8, key=1), C("ACCOUNT_ID", "INT", 4), C("BRANCH", "INT", 2),
    C("AMOUNT", "DEC", 6, 2), C("BALANCE", "DEC", 8, 2, null=True), C("CURRENCY", "CHAR", 3),
    C("TXN_TYPE", "CHAR", 2), C("STATUS", "CHAR", 1), C("TXN_DATE", "DATE"),
    C("TXN_TS", "DTTM"), C("RATE", "FLOT", 8, null=True), C("FEE", "DEC", 3, 2, null=True),
    C("CHANNEL", "CHAR", 8), C("TERMINAL", "CHAR", 8, null=True), C("REF_CODE", "CHAR", 16),
    C("TELLER_ID", "INT", 4, null=True), C("VALUE_DATE", "DATE", null=True),
    C("FLAGS", "CHAR", 4, null=True, bits=True), C("SCORE", "FLOT", 4, null=True),
    C("MEMO", "CHAR", 20, null=True),
), lambda n: (n,))  # fmt: skip
BENCH_ROW = {
    "TXN_ID": 0, "ACCOUNT_ID": 4711, "BRANCH": 12, "AMOUNT": 0, "BALANCE": 1_234_567,
    "CURRENCY": "USD", "TXN_TYPE": "DB", "STATUS": "P", "TXN_DATE": "2024-03-18",
    "TXN_TS": "2024-03-18-09.30.00.000000", "RATE": 0.0625, "FEE": -125, "CHANNEL": "ATM",
    "TERMINAL": None, "REF_CODE": "REF0000000000001", "TELLER_ID": 77, "VALUE_DATE": None,
    "FLAGS": b"\x00\x01\x80\xff", "SCORE": 2.5, "MEMO": "benchmark",
}  # fmt: skip
BENCH_KINDS = ("I", "UB", "D")


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """(n,) non-negative ints -> (n, width) decimal digits, most significant first."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return (values[:, None] // powers) % 10


def _big_endian(values: np.ndarray, width: int) -> np.ndarray:
    """(n,) unsigned ints -> (n, width) big-endian bytes (width <= 8)."""
    return values.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - width :]


def _clock_parts(us: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Microseconds since 1900 -> [(year, 4), (month, 2), (day, 2), (h, 2), (m, 2), (s, 2),
    (microsecond, 6)] as digit groups."""
    moment = np.datetime64("1900-01-01T00:00:00", "us") + us.astype("timedelta64[us]")
    day = moment.astype("datetime64[D]")
    month = moment.astype("datetime64[M]")
    in_day = (moment - day).astype(np.int64)
    return [
        (moment.astype("datetime64[Y]").astype(np.int64) + 1970, 4),
        (month.astype(np.int64) % 12 + 1, 2), ((day - month).astype(np.int64) + 1, 2),
        (in_day // 3_600_000_000, 2), (in_day // 60_000_000 % 60, 2),
        (in_day // 1_000_000 % 60, 2), (in_day % 1_000_000, 6),
    ]  # fmt: skip


def _bin17_batch(us: np.ndarray) -> np.ndarray:
    nibbles = np.zeros((len(us), 34), dtype=np.uint8)
    pos = 0
    for values, width in _clock_parts(us):
        nibbles[:, pos : pos + width] = _digits(values, width)
        pos += width
    return nibbles[:, 0::2] << 4 | nibbles[:, 1::2]


def _dttm_text_batch(us: np.ndarray) -> np.ndarray:
    """'YYYY-MM-DD-HH.MM.SS.ffffff' in EBCDIC (digits are x'F0'-x'F9')."""
    out = np.frombuffer(char("0000-00-00-00.00.00.000000", 26), dtype=np.uint8)
    out = np.tile(out, (len(us), 1))
    starts = (0, 5, 8, 11, 14, 17, 20)
    for (values, width), start in zip(_clock_parts(us), starts, strict=True):
        out[:, start : start + width] = 0xF0 + _digits(values, width)
    return out


def _packed_batch(unscaled: np.ndarray, nbytes: int) -> np.ndarray:
    nibbles = np.empty((len(unscaled), 2 * nbytes), dtype=np.uint8)
    nibbles[:, :-1] = _digits(np.abs(unscaled), 2 * nbytes - 1)
    nibbles[:, -1] = np.where(unscaled < 0, 0xD, 0xC)
    return nibbles[:, 0::2] << 4 | nibbles[:, 1::2]


def _lrsn_batch(us: np.ndarray, sequence: np.ndarray) -> np.ndarray:
    out = np.zeros((len(us), 10), dtype=np.uint8)
    tod = (us.astype(np.uint64) << np.uint64(12)) | (sequence & 0xFFF).astype(np.uint64)
    out[:, 1:9] = _big_endian(tod, 8)
    return out


def _rba_batch(values: np.ndarray) -> np.ndarray:
    out = np.zeros((len(values), 10), dtype=np.uint8)
    out[:, 2:] = _big_endian(values.astype(np.uint64), 8)
    return out


def _bench_template(kind: str, image: bytes) -> np.ndarray:
    """RDW + header + DATA of one record kind, the per-record fields still to fill."""
    images = (image, image) if kind == "UB" else (image,)
    data = data_field(*images)
    ur = Ur(0, "normal", [], CONNECTIONS[0], START_TIME, bytes(10), bytes(10), uordisp="C")
    ur.end = (START_TIME, bytes(10), bytes(10))
    change = Change(BENCH_TABLE, kind, "C", START_TIME, bytes(10), bytes(10), data)
    return np.frombuffer(rdw(change_records(ur_header_template(ur), change)[0]), dtype=np.uint8)


def _bench_block(first: int, count: int, rng: np.random.Generator,
                 templates: dict[str, np.ndarray]) -> bytes:  # fmt: skip
    """``count`` records from record number ``first``: 4 records a UR, each kind grouped."""
    index = np.arange(first, first + count, dtype=np.int64)
    start_us = tod_clock(START_TIME) >> 12
    us, ur = start_us + index * 97, index // 4
    kinds = rng.choice(3, size=count, p=(0.5, 0.3, 0.2))
    keys = np.where(kinds == 0, index, rng.integers(0, np.maximum(index, 1)))
    rba = EXTENDED_RBA_BASE + index * 512
    header = {  # field -> (n, width) bytes
        "TIMESTAMP": _bin17_batch(us), "LOGLRSN": _lrsn_batch(us, index), "LOGRBA": _rba_batch(rba),
        "SQLRIRBA": _rba_batch(rba), "RID": _big_endian(index % 0xFF_FFFF_FFFF, 5),
        "UORTIMESTAMP": _bin17_batch(start_us + ur * 388 - 20),
        "UORIDLRSN": _lrsn_batch(start_us + ur * 388 - 20, ur),
        "UORID": _rba_batch(EXTENDED_RBA_BASE + ur * 2048 - 64),
        "UORCOMMITTIMESTAMP": _bin17_batch(start_us + ur * 388 + 330),
        "UORCOMMITLRSN": _lrsn_batch(start_us + ur * 388 + 330, ur + 1),
        "UORCOMMITPOINT": _rba_batch(EXTENDED_RBA_BASE + ur * 2048 + 1600),
        "LUWINSTANCENO": _big_endian(ur + 0x1000, 6),
    }  # fmt: skip
    positions = column_positions(BENCH_TABLE.columns)
    columns = {"TXN_ID": _big_endian(keys.astype(np.uint64), 8),
               "AMOUNT": _packed_batch(rng.integers(-10**9, 10**9, size=count), 6),
               "TXN_TS": _dttm_text_batch(us)}  # fmt: skip
    new_amount = _packed_batch(rng.integers(-(10**9), 10**9, size=count), 6)
    by_name = {c.name: p for c, p in zip(BENCH_TABLE.columns, positions, strict=True)}
    parts = []
    for code, kind in enumerate(BENCH_KINDS):
        chosen = kinds == code
        block = np.tile(templates[kind], (int(chosen.sum()), 1))
        for name, values in header.items():
            offset, width = LLDF_OFFSETS[name]
            block[:, 4 + offset : 4 + offset + width] = values[chosen]
        image_starts = [4 + LLDF_HEADER_SIZE + 4]
        if kind == "UB":
            image_starts.append(image_starts[0] + len(templates["image"]) + 2)
        for slot, start in enumerate(image_starts):  # a UB's after image gets a new AMOUNT
            for name, values in (columns if slot == 0 else {"AMOUNT": new_amount}).items():
                at = start + by_name[name]
                block[:, at : at + values.shape[1]] = values[chosen]
        parts.append(block.tobytes())
    return b"".join(parts)


def generate_lldf_benchmark(path: Path, records: int, seed: int = 1, first: int = 0) -> None:
    """Write one extract of ``records`` simple I/UB/D records of a 20-column table.

    ``path`` is the extract folder: ``LOGM.BENCH.F0001`` (control) and data files
    ``LOGM.BENCH.F0002``/``F0003`` (blocks of 65,536 records alternate between them). Four
    records a UR, all committed; row values vary in TXN_ID, AMOUNT and TXN_TS only; UB and D
    pick random earlier keys, so the rows are not a consistent history (a speed test only).
    ``first`` numbers the records from there: an extract of records ``first`` onwards
    continues the one of records 0 to ``first`` - 1 (a later capture of the same log stream).
    """
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    image = row_image(BENCH_TABLE, BENCH_ROW)
    templates = {kind: _bench_template(kind, image) for kind in BENCH_KINDS}
    templates["image"] = np.frombuffer(image, dtype=np.uint8)
    names = [f"{BENCH_EXTRACT}.F{n:04d}" for n in (1, 2, 3)]
    handles = [(folder / name).open("wb") for name in names[1:]]
    try:
        for block, start in enumerate(range(first, first + records, BENCH_BLOCK)):
            count = min(BENCH_BLOCK, first + records - start)
            handles[block % 2].write(_bench_block(start, count, rng, templates))
    finally:
        for handle in handles:
            handle.close()
    end_us = (tod_clock(START_TIME) >> 12) + (first + records) * 97
    end_time = TOD_EPOCH + dt.timedelta(microseconds=int(end_us))
    end = dlge_record((EXTENDED_RBA_BASE + (first + records) * 512).to_bytes(10, "big"), end_time,
                      bytes(10))  # fmt: skip
    write_vb(folder / names[0], control_records([BENCH_TABLE], names[1:], end))

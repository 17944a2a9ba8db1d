"""Shared value decoders: every source's bytes-to-value rules live here, once.

Each function takes the raw bytes of one field and returns the value, either as a Python value
or already rendered as the marts' text (``../shared/specs/README.md`` "Value rendering"):
integers and decimals as plain decimal text with the column's scale, floats as the shortest text
that round-trips, dates ``YYYY-MM-DD``, times ``HH:MM:SS``, timestamps
``YYYY-MM-DD HH:MM:SS[.fraction as logged]``, binary as upper-case hex.

Bad bytes raise :class:`udfs.errors.DecodeError` with what was wrong; the caller adds where.
"""

from __future__ import annotations

import codecs
import ctypes
import datetime as dt
import decimal
import math
import re
import struct

import numpy as np

from udfs.errors import DecodeError

# --- character data ------------------------------------------------------------------------

# CCSIDs of EBCDIC single-byte code pages Python ships a codec for.
_EBCDIC_CCSID_CODECS = {
    37: "cp037",
    273: "cp273",
    424: "cp424",
    500: "cp500",
    875: "cp875",
    1026: "cp1026",
    1140: "cp1140",
}
DEFAULT_EBCDIC = "cp037"
DEFAULT_ASCII = "latin-1"
# EBCDIC mixed (SBCS + DBCS with shift-out x'0E' / shift-in x'0F') CCSIDs. Python ships no codec
# for any of them; glibc's iconv does (its gconv modules IBM930 … IBM1399), so logmart registers
# them as Python codecs named ``ibm<ccsid>`` (see ``_iconv_search`` below). CCSIDs 5026/5035 are
# 930/939 with the same code points.
_EBCDIC_MIXED_CCSID_CODECS = {
    930: "ibm930",
    5026: "ibm930",
    939: "ibm939",
    5035: "ibm939",
    1390: "ibm1390",
    1399: "ibm1399",
    933: "ibm933",
    935: "ibm935",
    937: "ibm937",
}
SHIFT_OUT, SHIFT_IN = b"\x0e", b"\x0f"


def ebcdic_codec(ccsid: int | str | None, default: str = DEFAULT_EBCDIC) -> str:
    """Python codec for an EBCDIC CCSID (``37``, ``'00037'``); ``default`` when unknown/blank."""
    try:
        number = int(str(ccsid).strip())
    except ValueError:
        return default
    return _EBCDIC_CCSID_CODECS.get(number, default)


def ebcdic_mixed_codec(ccsid: int | str | None) -> str | None:
    """Codec for an EBCDIC mixed CCSID (``930``, ``'01390'``), or None when there is none
    (blank, 0, or a CCSID without an iconv module on this machine)."""
    try:
        number = int(str(ccsid).strip())
    except ValueError:
        return None
    name = _EBCDIC_MIXED_CCSID_CODECS.get(number)
    if name is None:
        return None
    try:
        codecs.lookup(name)
    except LookupError:
        return None
    return name


def dbcs_text(raw: bytes, mixed_codec: str) -> str:
    """Pure double-byte EBCDIC (GRAPHIC data: no shift bytes) through a mixed code page's DBCS
    half: the bytes are decoded as one shift-out … shift-in run of ``mixed_codec``."""
    if len(raw) % 2:
        raise DecodeError(f"double-byte data X'{raw.hex().upper()}' has an odd length")
    return text(SHIFT_OUT + raw + SHIFT_IN, mixed_codec)


def check_codec(name: str) -> str:
    """Return ``name`` if Python knows it as a text codec, else raise a DecodeError saying what
    to set (bytes-to-bytes codecs such as 'hex' or 'base64' are not code pages)."""
    try:
        known = codecs.lookup(name)._is_text_encoding
    except (LookupError, ValueError):  # ValueError: a name with a NUL in it
        known = False
    if not known:
        raise DecodeError(f"unknown code page {name!r}: use a Python codec name such as cp037")
    return name


def text(raw: bytes, codec: str) -> str:
    """Decode character data; errors are DecodeErrors naming the codec."""
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"bytes {raw.hex().upper()} are not valid {codec}: {exc.reason}")
    except UnicodeError as exc:  # codecs such as punycode raise the base class
        raise DecodeError(f"bytes {raw.hex().upper()} are not valid {codec}: {exc}")


def char_field(raw: bytes, codec: str = DEFAULT_EBCDIC) -> str:
    """A blank-padded CHAR(n) header field: decoded and right-trimmed (NULs count as blanks)."""
    return text(raw, codec).rstrip(" \x00")


def char_int(raw: bytes, codec: str = DEFAULT_EBCDIC) -> int | None:
    """A CHAR(n) number such as DB2NUMCOL '007' or LLCOLUMNPOS '   -1'; blanks give None."""
    value = text(raw, codec).strip(" \x00")
    if not value:
        return None
    if not re.fullmatch(r"[+-]?\d+", value):
        raise DecodeError(f"CHAR field {value!r} is not a number")
    return int(value)


# --- EBCDIC mixed code pages through glibc iconv ------------------------------------------------


class _Iconv:
    """glibc's iconv through ctypes: decode bytes of one iconv code page to str."""

    _EILSEQ, _EINVAL = 84, 22

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.open = libc.iconv_open
        self.open.restype, self.open.argtypes = ctypes.c_void_p, [ctypes.c_char_p] * 2
        self.convert = libc.iconv
        self.convert.restype = ctypes.c_size_t
        self.convert.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4
        self.close = libc.iconv_close
        self.close.argtypes = [ctypes.c_void_p]

    def available(self, page: str) -> bool:
        handle = self.open(b"UTF-8", page.encode())
        if handle in (None, ctypes.c_void_p(-1).value):
            return False
        self.close(handle)
        return True

    def decode(self, raw: bytes, page: str, name: str) -> str:
        handle = self.open(b"UTF-8", page.encode())
        try:
            source = ctypes.create_string_buffer(raw, len(raw))
            target = ctypes.create_string_buffer(4 * len(raw) + 16)
            in_ptr, out_ptr = (
                ctypes.c_char_p(ctypes.addressof(source)),
                ctypes.c_char_p(ctypes.addressof(target)),
            )
            in_left, out_left = ctypes.c_size_t(len(raw)), ctypes.c_size_t(len(target))
            result = self.convert(
                handle,
                ctypes.byref(in_ptr),
                ctypes.byref(in_left),
                ctypes.byref(out_ptr),
                ctypes.byref(out_left),
            )
            if result == ctypes.c_size_t(-1).value:
                at = len(raw) - in_left.value
                reason = "incomplete double-byte character" if ctypes.get_errno() == self._EINVAL \
                    else "invalid byte sequence"  # fmt: skip
                raise UnicodeDecodeError(name, raw, at, at + 1, reason)
            return target.raw[: len(target) - out_left.value].decode("utf-8")
        finally:
            self.close(handle)


try:
    _ICONV: _Iconv | None = _Iconv()
except (OSError, AttributeError):  # not glibc: the mixed code pages are simply unknown
    _ICONV = None


def _iconv_search(name: str) -> codecs.CodecInfo | None:
    """Python codec lookup for ``ibm930``, ``ibm939``, ``ibm1390`` … (decoding only)."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    if _ICONV is None or key not in set(_EBCDIC_MIXED_CCSID_CODECS.values()):
        return None
    page = key.upper()
    if not _ICONV.available(page):
        return None

    def decode(raw, errors: str = "strict") -> tuple[str, int]:
        data = bytes(raw)
        return _ICONV.decode(data, page, key), len(data)

    def encode(value: str, errors: str = "strict") -> tuple[bytes, int]:
        raise UnicodeEncodeError(key, value, 0, len(value), "logmart only decodes " + key)

    return codecs.CodecInfo(encode, decode, name=key)


codecs.register(_iconv_search)


def hex_upper(raw: bytes) -> str:
    """Binary data as the marts show it: upper-case hex."""
    return raw.hex().upper()


# --- Db2 for z/OS log positions and timestamps -------------------------------------------------


def rba_hex(raw: bytes) -> str:
    """BIN(10) RBA as 20 hex digits; a 6-byte RBA sits at offset 4 of the extended form.

    Spec example: X'123456789ABC' -> X'00000000123456789ABC'.
    """
    if len(raw) == 6:
        raw = bytes(4) + raw
    elif len(raw) != 10:
        raise DecodeError(f"an RBA is 6 or 10 bytes, got {len(raw)}")
    return raw.hex().upper()


def lrsn_hex(raw: bytes) -> str:
    """BIN(10) LRSN as 20 hex digits; a 6-byte LRSN sits at offset 1 of the extended form.

    Spec example: X'CA670FBBF3D3' -> X'00CA670FBBF3D3000000'.
    """
    if len(raw) == 6:
        raw = b"\x00" + raw + bytes(3)
    elif len(raw) != 10:
        raise DecodeError(f"an LRSN is 6 or 10 bytes, got {len(raw)}")
    return raw.hex().upper()


# BIN(17) = 34 hex digits 'YYYYMMDDHHMMSS' + 20 digits of fraction and padding. logmart reads
# the first 12 fraction digits (Db2's largest timestamp precision) and requires the rest to be
# decimal digits too; an all-zero field means "no timestamp" (for example an in-flight UR's
# commit time).
BIN17_FRACTION_DIGITS = 12


def bin17_timestamp(raw: bytes) -> str | None:
    """BIN(17) timestamp -> ``YYYY-MM-DD HH:MM:SS.ffffffffffff``; all zeros -> None."""
    if len(raw) != 17:
        raise DecodeError(f"a BIN(17) timestamp is 17 bytes, got {len(raw)}")
    if not any(raw):
        return None
    digits = raw.hex()
    if not digits.isdigit():
        raise DecodeError(f"BIN(17) timestamp X'{digits.upper()}' has non-decimal digits")
    d = digits
    fraction = d[14 : 14 + BIN17_FRACTION_DIGITS]
    stamp = f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]}.{fraction}"
    _check_date_time(stamp[:19])
    return stamp


def _check_date_time(stamp: str) -> None:
    """Validate 'YYYY-MM-DD HH:MM:SS' (month/day/hour ranges), raising DecodeError."""
    year, month, day = int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])
    hour, minute, second = int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19])
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        raise DecodeError(f"{stamp[:10]!r} is not a valid date")
    # Db2 allows 24:00:00 as the end of a day.
    if not (hour < 24 and minute < 60 and second < 60) and (hour, minute, second) != (24, 0, 0):
        raise DecodeError(f"{stamp[11:19]!r} is not a valid time")


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


# --- numbers -----------------------------------------------------------------------------------


def int_be(raw: bytes) -> int:
    """Big-endian two's complement integer (2, 4 or 8 bytes)."""
    return int.from_bytes(raw, "big", signed=True)


def int_le(raw: bytes) -> int:
    """Little-endian two's complement integer."""
    return int.from_bytes(raw, "little", signed=True)


def scaled_text(unscaled: int, scale: int) -> str:
    """An integer of units of 10**-scale as plain decimal text: (5275000, 2) -> '52750.00'."""
    if scale <= 0:
        return str(unscaled * 10**-scale) if scale else str(unscaled)
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


_POSITIVE_SIGNS = frozenset((0xA, 0xC, 0xE, 0xF))
_NEGATIVE_SIGNS = frozenset((0xB, 0xD))


def packed_decimal_unscaled(raw: bytes) -> int:
    """Packed decimal (two digits a byte, last nibble the sign: C/F/A/E +, D/B -) as an int."""
    if not raw:
        raise DecodeError("packed decimal field is empty")
    digits = raw.hex()
    body, sign = digits[:-1], int(digits[-1], 16)
    if not body.isdigit():
        raise DecodeError(f"packed decimal X'{digits.upper()}' has a non-decimal digit")
    if sign in _POSITIVE_SIGNS:
        return int(body)
    if sign in _NEGATIVE_SIGNS:
        return -int(body)
    raise DecodeError(f"packed decimal X'{digits.upper()}' has no sign nibble (got {sign:X})")


def packed_decimal(raw: bytes, scale: int) -> str:
    """Packed decimal rendered with its scale: X'12345C', 2 -> '123.45'; X'001D', 2 -> '-0.01'."""
    return scaled_text(packed_decimal_unscaled(raw), scale)


def packed_digits(raw: bytes) -> str:
    """Unsigned packed digits (no sign nibble), as Db2 LUW packs DATE/TIME/TIMESTAMP."""
    digits = raw.hex()
    if not digits.isdigit():
        raise DecodeError(f"packed digits X'{digits.upper()}' have a non-decimal digit")
    return digits


def hfp_float(raw: bytes) -> float:
    """IBM hexadecimal floating point, 4 or 8 bytes (sign, 7-bit exponent of 16 biased 64).

    Examples: X'41100000' = 1.0, X'C276A000' = -118.625.
    """
    if len(raw) not in (4, 8):
        raise DecodeError(f"an HFP float is 4 or 8 bytes, got {len(raw)}")
    word = int.from_bytes(raw, "big")
    bits = len(raw) * 8
    sign = -1.0 if word >> (bits - 1) else 1.0
    exponent = ((word >> (bits - 8)) & 0x7F) - 64
    fraction = word & ((1 << (bits - 8)) - 1)
    if fraction == 0:
        return 0.0 * sign
    # value = fraction / 16**(digits) * 16**exponent, done exactly with ldexp.
    return sign * math.ldexp(fraction, 4 * exponent - (bits - 8))


def ieee_float(raw: bytes, byteorder: str = "big") -> float:
    """IEEE 754 binary float, 4 or 8 bytes, in the given byte order."""
    if len(raw) not in (4, 8):
        raise DecodeError(f"an IEEE float is 4 or 8 bytes, got {len(raw)}")
    code = (">" if byteorder == "big" else "<") + ("f" if len(raw) == 4 else "d")
    return struct.unpack(code, raw)[0]


_FLOAT32_MAX = float(np.finfo(np.float32).max)
# The smallest normal float32, 2**-126. Below it float32 keeps fewer than 24 bits (subnormals),
# so its shortest text stops naming the value: HFP short X'1B800000' is exactly 2**-149, whose
# shortest float32 text '1e-45' reads back 29% off as a number (and as an HFP short, which keeps
# 21-24 bits down to 16**-65). Such values take the float64 text, which is exact.
FLOAT32_TINY = float(np.finfo(np.float32).tiny)


def render_float(value: float, single: bool = False) -> str:
    """Shortest text that round-trips, in Python's notation: 1500.5 -> '1500.5', 1.0 -> '1.0'.

    For a 4-byte (single precision) column the shortest float32 text is used when the value is
    exactly a normal float32 (or zero); otherwise (HFP short beyond float32's range, or below
    2**-126 where float32 is subnormal) the float64 text, which reads back exactly.
    """
    if single and _normal_float32(value):
        as32 = np.float32(value)
        if float(as32) == value:
            return str(as32)
    return repr(value)


def _normal_float32(value: float) -> bool:
    return value == 0 or (math.isfinite(value) and FLOAT32_TINY <= abs(value) <= _FLOAT32_MAX)


# --- dates and times ----------------------------------------------------------------------------

# How an extract writes DATE/TIME/TIMESTAMP values: the control file's DLDS DATEFORMAT (BMC's
# DLDS table: "DB2I - DB2 DB2ISO format", "SASTIME - SAS format"; the LLDF page: "translated
# from the Db2 internal format to an external format (Db2, ISO, or SAS.) [...] more space is
# used to represent these fields in character format"). docs/logmaster.md "Date formats" holds
# logmart's reading of each, and of Db2's own names ISO, USA, EUR and JIS, which it also takes:
#   DB2I, ISO  DATE 'YYYY-MM-DD'  TIME 'HH.MM.SS'  TIMESTAMP 'YYYY-MM-DD-HH.MM.SS.ffffff'
#   JIS        DATE 'YYYY-MM-DD'  TIME 'HH:MM:SS'  TIMESTAMP as DB2I
#   EUR        DATE 'DD.MM.YYYY'  TIME 'HH.MM.SS'  TIMESTAMP as DB2I
#   USA        DATE 'MM/DD/YYYY'  TIME 'HH:MM AM'  TIMESTAMP as DB2I (Db2 has one timestamp form)
#   SASTIME    SAS numbers as character text: DATE days since 1960-01-01, TIME seconds since
#              midnight, TIMESTAMP seconds since 1960-01-01 00:00:00 [.fraction] [+HH:MM]
# Every format renders alike (module docstring). Times accept '.' or ':' between their parts
# (README interpretation 5), USA times excepted ('HH:MM' and AM or PM).
DEFAULT_DATE_FORMAT = "DB2I"
DATE_FORMATS = ("DB2I", "ISO", "JIS", "EUR", "USA", "SASTIME")
SAS_EPOCH = dt.datetime(1960, 1, 1)

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATE_EUR = re.compile(r"(\d{2})\.(\d{2})\.(\d{4})")
_DATE_USA = re.compile(r"(\d{2})/(\d{2})/(\d{4})")
_TIME = re.compile(r"(\d{2})[.:](\d{2})[.:](\d{2})")
_TIME_USA = re.compile(r"(\d{1,2}):(\d{2}) ?([AP]M)")
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[- ](\d{2})[.:](\d{2})[.:](\d{2})(?:\.(\d{1,12}))?"
    r"(?:\s*([+-]\d{2}):?(\d{2}))?"
)
_SAS_DATE = re.compile(r"-?\d{1,7}")
_SAS_TIME = re.compile(r"\d{1,5}")
_SAS_TIMESTAMP = re.compile(r"(-?\d{1,12})(?:\.(\d{1,12}))?(?:\s*([+-]\d{2}):?(\d{2}))?")
_SECONDS_A_DAY = 86_400


def date_format(text: str | None) -> str:
    """DLDS DATEFORMAT (CHAR(8), blank-padded) -> one of DATE_FORMATS; blank -> DB2I.

    Another value raises DecodeError: decoding its dates as DB2I would be a guess.
    """
    name = (text or "").strip().upper() or DEFAULT_DATE_FORMAT
    if name not in DATE_FORMATS:
        raise DecodeError(f"DATEFORMAT {text!r} is not one of {', '.join(DATE_FORMATS)}")
    return name


def date_text(value: str, fmt: str = DEFAULT_DATE_FORMAT) -> str:
    """Character DATE in the extract's date format -> 'YYYY-MM-DD' (validated)."""
    text = value.strip()
    if fmt == "SASTIME":
        if not _SAS_DATE.fullmatch(text):
            raise DecodeError(f"DATE {value!r} is not a SAS date (days since 1960-01-01)")
        return _sas_moment(int(text) * _SECONDS_A_DAY, value)[:10]
    if fmt == "EUR":
        match = _DATE_EUR.fullmatch(text)
        parts = (match[3], match[2], match[1]) if match else None
    elif fmt == "USA":
        match = _DATE_USA.fullmatch(text)
        parts = (match[3], match[1], match[2]) if match else None
    else:
        match = _DATE.fullmatch(text) if fmt in DATE_FORMATS else None
        parts = (match[1], match[2], match[3]) if match else None
    if parts is None:
        raise DecodeError(f"DATE {value!r} is not a {fmt} date ({_DATE_FORM.get(fmt, '?')})")
    stamp = "-".join(parts)
    _check_date_time(stamp + " 00:00:00")
    return stamp


_DATE_FORM = {"EUR": "DD.MM.YYYY", "USA": "MM/DD/YYYY", "SASTIME": "days since 1960-01-01"}
_DATE_FORM.update(dict.fromkeys(("DB2I", "ISO", "JIS"), "YYYY-MM-DD"))


def time_text(value: str, fmt: str = DEFAULT_DATE_FORMAT) -> str:
    """Character TIME in the extract's date format -> 'HH:MM:SS' (validated).

    USA 'HH:MM AM|PM' follows Db2's table: 12:01 AM-12:59 AM are 00:01-00:59, 12:00 PM is
    noon, 12:00 AM is 24:00:00 and 00:00 AM 00:00:00; it has no seconds (rendered ':00').
    """
    text = value.strip()
    if fmt == "SASTIME":
        if not _SAS_TIME.fullmatch(text) or int(text) > _SECONDS_A_DAY:
            raise DecodeError(f"TIME {value!r} is not a SAS time (0 to 86400 seconds)")
        seconds = int(text)
        return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if fmt == "USA":
        clock = _usa_clock(text, value)
    else:
        match = _TIME.fullmatch(text) if fmt in DATE_FORMATS else None
        if not match:
            raise DecodeError(f"TIME {value!r} is not HH.MM.SS")
        clock = f"{match[1]}:{match[2]}:{match[3]}"
    _check_date_time("2000-01-01 " + clock)
    return clock


def _usa_clock(text: str, value: str) -> str:
    match = _TIME_USA.fullmatch(text.upper())
    hour = int(match[1]) if match else -1
    if not match or hour > 12 or (hour == 0 and (match[2] != "00" or match[3] != "AM")):
        raise DecodeError(f"TIME {value!r} is not a USA time (HH:MM AM or PM)")
    if match[3] == "PM":
        hour = 12 if hour == 12 else hour + 12
    elif hour == 12:
        hour = 24 if match[2] == "00" else 0
    return f"{hour:02d}:{match[2]}:00"


def timestamp_text(value: str, fmt: str = DEFAULT_DATE_FORMAT) -> str:
    """Character 'YYYY-MM-DD-HH.MM.SS.ffffff[+HH:MM]' -> 'YYYY-MM-DD HH:MM:SS.ffffff[+HH:MM]'
    (every format but SASTIME: Db2 has one timestamp form); SASTIME seconds since 1960.

    The fraction is kept as logged (its digits, not padded or cut); ':' separators accepted.
    """
    if fmt == "SASTIME":
        return _sas_timestamp(value)
    match = _TIMESTAMP.fullmatch(value.strip()) if fmt in DATE_FORMATS else None
    if not match:
        raise DecodeError(f"TIMESTAMP {value!r} is not YYYY-MM-DD-HH.MM.SS[.ffffff]")
    stamp = f"{match[1]}-{match[2]}-{match[3]} {match[4]}:{match[5]}:{match[6]}"
    _check_date_time(stamp)
    if match[7] is not None:
        stamp += "." + match[7]
    if match[8] is not None:
        stamp += f"{match[8]}:{match[9]}"
    return stamp


def _sas_timestamp(value: str) -> str:
    match = _SAS_TIMESTAMP.fullmatch(value.strip())
    if not match:
        raise DecodeError(f"TIMESTAMP {value!r} is not a SAS datetime (seconds since 1960)")
    stamp = _sas_moment(int(match[1]), value)
    if match[2] is not None:
        stamp += "." + match[2]
    if match[3] is not None:
        stamp += f"{match[3]}:{match[4]}"
    return stamp


def _sas_moment(seconds: int, value: str) -> str:
    """'YYYY-MM-DD HH:MM:SS' of a count of seconds since 1960-01-01 00:00:00 (years 1-9999)."""
    try:
        m = SAS_EPOCH + dt.timedelta(seconds=seconds)
    except OverflowError:  # before year 1 or after 9999
        raise DecodeError(f"SAS value {value!r} is outside the years 1 to 9999") from None
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d} {m.hour:02d}:{m.minute:02d}:{m.second:02d}"


def timestamp_parts_text(
    year: int, month: int, day: int, hour: int, minute: int, second: int, fraction: str = ""
) -> str:
    """Render timestamp parts (already decoded from a binary form) as the marts show them."""
    if not (0 <= year <= 9999 and all(0 <= part <= 99 for part in (month, day, hour, minute,
                                                                    second))):  # fmt: skip
        raise DecodeError(
            f"timestamp parts {year}-{month}-{day} {hour}:{minute}:{second} are out of range"
        )
    stamp = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
    _check_date_time(stamp)
    return f"{stamp}.{fraction}" if fraction else stamp


# --- Db2 LUW packed dates and decimal floating point ---------------------------------------------


def packed_date(raw: bytes) -> str:
    """Db2 LUW DATE: 4 bytes of packed digits yyyymmdd, X'19960403' -> '1996-04-03'."""
    if len(raw) != 4:
        raise DecodeError(f"a packed DATE is 4 bytes, got {len(raw)}")
    d = packed_digits(raw)
    stamp = f"{d[0:4]}-{d[4:6]}-{d[6:8]}"
    _check_date_time(stamp + " 00:00:00")
    return stamp


def packed_time(raw: bytes) -> str:
    """Db2 LUW TIME: 3 bytes of packed digits hhmmss, X'133200' -> '13:32:00'."""
    if len(raw) != 3:
        raise DecodeError(f"a packed TIME is 3 bytes, got {len(raw)}")
    d = packed_digits(raw)
    clock = f"{d[0:2]}:{d[2:4]}:{d[4:6]}"
    _check_date_time("2000-01-01 " + clock)
    return clock


def packed_timestamp(raw: bytes) -> str:
    """Db2 LUW TIMESTAMP(p): 7 bytes yyyymmddhhmmss then the fraction's packed digits.

    TIMESTAMP(6) is 10 bytes: X'19960403133200123456' -> '1996-04-03 13:32:00.123456'. Every
    fraction digit the field holds is kept (an odd precision's pad digit included); 7 bytes
    (TIMESTAMP(0)) give no fraction.
    """
    if not 7 <= len(raw) <= 13:
        raise DecodeError(f"a packed TIMESTAMP is 7 to 13 bytes, got {len(raw)}")
    d = packed_digits(raw)
    parts = (int(d[0:4]), int(d[4:6]), int(d[6:8]), int(d[8:10]), int(d[10:12]), int(d[12:14]))
    return timestamp_parts_text(*parts, fraction=d[14:])


def _dpd_declet_table() -> tuple[int, ...]:
    """The 1024 densely-packed-decimal declets -> their 3-digit value (IEEE 754-2008 table)."""
    table = []
    for declet in range(1024):
        b = [(declet >> i) & 1 for i in range(10)]  # b[0] is the lowest bit
        hi, mid, lo = b[9] * 4 + b[8] * 2 + b[7], b[6] * 4 + b[5] * 2 + b[4], b[2] * 4 + b[1] * 2
        if not b[3]:
            digits = (hi, mid, lo + b[0])
        elif (b[2], b[1]) == (0, 0):
            digits = (hi, mid, 8 + b[0])
        elif (b[2], b[1]) == (0, 1):
            digits = (hi, 8 + b[4], b[6] * 4 + b[5] * 2 + b[0])
        elif (b[2], b[1]) == (1, 0):
            digits = (8 + b[7], mid, b[9] * 4 + b[8] * 2 + b[0])
        else:
            digits = {
                (0, 0): (8 + b[7], 8 + b[4], b[9] * 4 + b[8] * 2 + b[0]),
                (0, 1): (8 + b[7], b[9] * 4 + b[8] * 2 + b[4], 8 + b[0]),
                (1, 0): (hi, 8 + b[4], 8 + b[0]),
                (1, 1): (8 + b[7], 8 + b[4], 8 + b[0]),
            }[(b[6], b[5])]
        table.append(digits[0] * 100 + digits[1] * 10 + digits[2])
    return tuple(table)


_DPD_DECLETS = _dpd_declet_table()
# bytes -> (exponent continuation bits, declets, exponent bias) of IEEE 754 decimal64/128.
_DECFLOAT_FORMATS = {8: (8, 5, 398), 16: (12, 11, 6176)}


def decfloat_dpd(raw: bytes, byteorder: str = "big") -> str:
    """IEEE 754-2008 decimal64 (8 bytes) / decimal128 (16 bytes), DPD coefficient, as text.

    The text is Python's ``Decimal`` scientific string, which keeps the exponent as logged
    (``1.50`` stays ``1.50``; ``1E+3`` stays ``1E+3``); specials are ``Infinity``, ``-Infinity``,
    ``NaN`` and ``sNaN``. ``byteorder`` is the order of the 8/16 bytes as stored.
    """
    if len(raw) not in _DECFLOAT_FORMATS:
        raise DecodeError(f"a DECFLOAT is 8 or 16 bytes, got {len(raw)}")
    ec_bits, declets, bias = _DECFLOAT_FORMATS[len(raw)]
    word = int.from_bytes(raw, "big" if byteorder == "big" else "little")
    bits = len(raw) * 8
    sign = word >> (bits - 1)
    combination = (word >> (bits - 6)) & 0x1F
    if combination >> 1 == 0b1111:
        if combination & 1 == 0:
            return "-Infinity" if sign else "Infinity"
        signalling = (word >> (bits - 7)) & 1
        return ("-" if sign else "") + ("sNaN" if signalling else "NaN")
    if combination >> 3 == 0b11:
        exponent_high, msd = (combination >> 1) & 0b11, 8 + (combination & 1)
    else:
        exponent_high, msd = combination >> 3, combination & 0b111
    continuation = bits - 6 - ec_bits
    exponent = (exponent_high << ec_bits) | ((word >> continuation) & ((1 << ec_bits) - 1))
    coefficient = msd
    for i in reversed(range(declets)):
        coefficient = coefficient * 1000 + _DPD_DECLETS[(word >> (10 * i)) & 0x3FF]
    return str(decimal.Decimal((sign, tuple(int(c) for c in str(coefficient)), exponent - bias)))


# --- solidDB: 11-byte date/time and DFLOAT decimal text -----------------------------------------

# u16 year, u8 month, day, hour, minute, second, u32 fraction, all MSB first. The fraction is read
# as nanoseconds (ODBC's SQL_TIMESTAMP_STRUCT unit) and a TIMESTAMP always shows all 9 digits:
# the precision the log holds, "as logged".
_DATETIME11 = struct.Struct(">HBBBBBI")
DATETIME11_FRACTION_DIGITS = 9


def datetime11_parts(raw: bytes) -> tuple[int, int, int, int, int, int, int]:
    """solidDB 11-byte date/time -> (year, month, day, hour, minute, second, nanoseconds)."""
    if len(raw) != _DATETIME11.size:
        raise DecodeError(f"a solidDB date/time value is 11 bytes, got {len(raw)}")
    parts = _DATETIME11.unpack(raw)
    if parts[0] > 9999:
        raise DecodeError(f"year {parts[0]} is out of range (0-9999)")
    if parts[6] >= 10**DATETIME11_FRACTION_DIGITS:
        raise DecodeError(f"fraction {parts[6]} is not below 10**9 nanoseconds")
    return parts


def datetime11_text(raw: bytes, sql_type: str) -> str:
    """Render an 11-byte value of a DATE, TIME or TIMESTAMP column as the marts show it.

    DATE uses bytes 0-3 and TIME bytes 4-6 (the other bytes are not checked);
    TIMESTAMP -> ``YYYY-MM-DD HH:MM:SS.fffffffff``.
    """
    year, month, day, hour, minute, second, nanos = datetime11_parts(raw)
    if sql_type == "DATE":
        return date_text(f"{year:04d}-{month:02d}-{day:02d}")
    if sql_type == "TIME":
        return time_text(f"{hour:02d}:{minute:02d}:{second:02d}")
    if sql_type == "TIMESTAMP":
        fraction = f"{nanos:0{DATETIME11_FRACTION_DIGITS}d}"
        return timestamp_parts_text(year, month, day, hour, minute, second, fraction)
    raise DecodeError(f"{sql_type} is not a date/time type")


_DECIMAL_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DECIMAL_TEXT_MAX_EXPONENT = 1000  # far beyond any SQL DECIMAL; keeps the text small


def decimal_text(value: str, scale: int | None) -> str:
    """Decimal text (solidDB DFLOAT: '52750.5', '-1E-2') as plain text with ``scale`` digits.

    More non-zero fraction digits than ``scale`` is a DecodeError (never rounded away);
    ``scale`` None keeps the digits as logged, in plain notation. '-0' renders as '0'.
    """
    cleaned = value.strip(" \x00")
    if not _DECIMAL_TEXT.fullmatch(cleaned):
        raise DecodeError(f"decimal text {value!r} is not a number")
    number = decimal.Decimal(cleaned)
    if abs(number.adjusted()) > _DECIMAL_TEXT_MAX_EXPONENT:
        raise DecodeError(f"decimal text {value!r} is out of range")
    if scale is not None:
        quantum = decimal.Decimal(1).scaleb(-scale)
        context = decimal.Context(prec=max(1, number.adjusted() + scale + 2), traps=[])
        rounded = number.quantize(quantum, context=context)
        if rounded != number:
            raise DecodeError(f"decimal text {value!r} has more fraction digits than scale {scale}")
        number = rounded
    text_value = f"{number:f}"
    return text_value[1:] if number.is_zero() and text_value.startswith("-") else text_value

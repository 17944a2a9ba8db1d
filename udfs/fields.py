"""construct field types named after the spec's definitions (CHAR(n), BIN(n), BIN(10) RBA …).

Each type parses to the value logmart keeps and builds back from it, and carries a ``kind``
that :mod:`udfs.batch` uses to derive a vectorised decoder and a Spark type from the same
``Struct``: the construct layout stays the one description of a record.

Character fields decode with the codec passed to ``parse(..., codec=...)`` (default cp037):
Log Master control and LLDF header CHAR fields are EBCDIC, unless the file is ASCII.
"""

from __future__ import annotations

from construct import Adapter, Bytes, BytesInteger, Construct

from udfs import values

DEFAULT_CODEC = values.DEFAULT_EBCDIC


def _codec(ctx) -> str:
    params = getattr(ctx, "_params", None) or {}
    return params.get("codec") or DEFAULT_CODEC


class _Field(Adapter):
    """A fixed-width field with a kind (for derived decoders) and a width."""

    kind = "bytes"

    def __init__(self, width: int, subcon: Construct | None = None):
        super().__init__(subcon if subcon is not None else Bytes(width))
        self.width = width


class Char(_Field):
    """CHAR(n): blank-padded text in the file's code page, right-trimmed."""

    kind = "char"

    def _decode(self, obj: bytes, ctx, path) -> str:
        return values.char_field(obj, _codec(ctx))

    def _encode(self, obj: str, ctx, path) -> bytes:
        raw = obj.encode(_codec(ctx))
        if len(raw) > self.width:
            raise ValueError(f"{obj!r} is longer than CHAR({self.width})")
        return raw.ljust(self.width, " ".encode(_codec(ctx)))


class UnicodeChar(Char):
    """CHAR(n) holding UTF-8 (DTBI UNITABLEOWNER / UNITABLENAME), whatever the code page."""

    def _decode(self, obj: bytes, ctx, path) -> str:
        return values.text(obj, "utf-8").rstrip(" \x00")

    def _encode(self, obj: str, ctx, path) -> bytes:
        return obj.encode("utf-8").ljust(self.width, b" ")


class CharNumber(_Field):
    """CHAR(n) holding a decimal number ('007', '-0001', '   -1'); blanks are None."""

    kind = "charnum"

    def _decode(self, obj: bytes, ctx, path) -> int | None:
        return values.char_int(obj, _codec(ctx))

    def _encode(self, obj: int | None, ctx, path) -> bytes:
        digits = "" if obj is None else (f"{obj:0{self.width}d}" if obj >= 0 else str(obj))
        return digits.rjust(self.width).encode(_codec(ctx))


class Bin(_Field):
    """BIN(n): an unsigned big-endian binary number."""

    kind = "bin"

    def __init__(self, width: int):
        super().__init__(width, BytesInteger(width, signed=False, swapped=False))

    def _decode(self, obj: int, ctx, path) -> int:
        return obj

    def _encode(self, obj: int, ctx, path) -> int:
        return obj


class Hex(_Field):
    """BIN(n) kept as upper-case hex (RIDs, LUW instance numbers, RBA-or-LRSN fields)."""

    kind = "hex"

    def _decode(self, obj: bytes, ctx, path) -> str:
        return values.hex_upper(obj)

    def _encode(self, obj: str, ctx, path) -> bytes:
        return bytes.fromhex(obj)


class Rba(Hex):
    """BIN(10) RBA (extended format), 20 hex digits; a 6-byte RBA sits at offset 4."""

    kind = "rba"

    def _decode(self, obj: bytes, ctx, path) -> str:
        return values.rba_hex(obj)


class Lrsn(Hex):
    """BIN(10) LRSN (extended format), 20 hex digits; a 6-byte LRSN sits at offset 1."""

    kind = "lrsn"

    def _decode(self, obj: bytes, ctx, path) -> str:
        return values.lrsn_hex(obj)


class Timestamp17(_Field):
    """BIN(17) timestamp X'YYYYMMDDHHMMSS…' as 'YYYY-MM-DD HH:MM:SS.ffffffffffff'; zeros -> None."""

    kind = "ts17"

    def __init__(self):
        super().__init__(17)

    def _decode(self, obj: bytes, ctx, path) -> str | None:
        return values.bin17_timestamp(obj)

    def _encode(self, obj: str | None, ctx, path) -> bytes:
        if obj is None:
            return bytes(17)
        digits = "".join(ch for ch in obj if ch.isdigit())
        return bytes.fromhex(digits.ljust(34, "0"))


class Reserved(_Field):
    """Reserved bytes: kept out of decoded output, built as zeros."""

    kind = "reserved"

    def _decode(self, obj: bytes, ctx, path) -> None:
        return None

    def _encode(self, obj, ctx, path) -> bytes:
        return bytes(self.width)

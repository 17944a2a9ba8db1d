"""Bytes and rows laid out by hand for the solidDB tests (no logmart encoder involved)."""

from __future__ import annotations

from typing import Any

from udfs.soliddb.catalog import Column


def field(raw: bytes) -> bytes:
    """One DATA field as interpretation 10 says: 1-byte length < 0xFE, else 0xFE + u32 LE."""
    if len(raw) < 0xFE:
        return bytes([len(raw)]) + raw
    return b"\xfe" + len(raw).to_bytes(4, "little") + raw


def logaddr(n: int, generation: int = 1) -> bytes:
    """A 20-byte LOGADDR shaped like 0000000000000001FFFFFFFF0000029500000295."""
    return (
        generation.to_bytes(8, "big")
        + b"\xff\xff\xff\xff"
        + n.to_bytes(4, "big")
        + n.to_bytes(4, "big")
    )


def row(recid: int | None, trxid: int | None = None, n: int = 0, **kw: Any) -> dict[str, Any]:
    """A SYS_LOG row dict as the readers yield it."""
    out: dict[str, Any] = dict.fromkeys(
        ("row_number", "recname", "stmttrxid", "relid", "data", "textdata", "decode_error")
    )
    out.update(recid=recid, trxid=trxid, flags=kw.pop("flags", 0 if recid is None else 1))
    out["logaddr"] = logaddr(n) if n else None
    out.update(kw)
    return out


def col(name: str, sql_type: str, position: int = 0, **kw: Any) -> Column:
    return Column(name, sql_type, position=position, **kw)

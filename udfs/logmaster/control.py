"""Log Master control files: telling them from data files, decoding their records, and the
LLDF header layout they describe (XHDF).

A control record begins with its 4-character record type (DTBI, DLCI, XTYP, …), in EBCDIC on
z/OS or in ASCII when the file was converted; a data record begins with a binary header
length. That is how logmart tells the two apart: by content, never by file name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from construct import ConstructError

from udfs import values
from udfs.batch import FieldSpec, field_specs
from udfs.errors import DecodeError
from udfs.framing import FrameBatch, FramingFailure, Rdw, Resync, frame_file
from udfs.logmaster.layouts import CONTROL_LAYOUTS, DTBI_MIN_LENGTH, LLDF_HEADER

_RECORD_TYPE = re.compile(r"[A-Z]{4}")
DOCUMENTED_HEADER = field_specs(LLDF_HEADER)
# A control record is at least its RDW and its 4-character record type.
CONTROL_RDW = Rdw(8, "control record (RDW and record type)")
# Upper-case letters A-Z in EBCDIC and in ASCII: how a control record type's bytes look.
_TYPE_BYTES = np.zeros(256, bool)
for _letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
    _TYPE_BYTES[_letter.encode(values.DEFAULT_EBCDIC)[0]] = True
    _TYPE_BYTES[ord(_letter)] = True


def _control_candidates(window: np.ndarray) -> np.ndarray:
    """Where a control record may start: an RDW, then four letters (its record type)."""
    n, mask = CONTROL_RDW.candidates(window, 8)
    for k in range(4, 8):
        mask &= _TYPE_BYTES[window[k : n + k]]
    return np.flatnonzero(mask)


CONTROL_RESYNC = Resync(_control_candidates, 8)


def control_codec(first_record: bytes) -> str | None:
    """The code page of a control file from its first record's type, or None if not control.

    ``first_record`` is the record after its RDW.
    """
    head = first_record[:4]
    for codec in (values.DEFAULT_EBCDIC, "ascii"):
        try:
            if _RECORD_TYPE.fullmatch(head.decode(codec)):
                return codec
        except UnicodeDecodeError:
            continue
    return None


def sniff(path: Path) -> str | None:
    """The codec when ``path`` is a control file (first RDW record starts with a type)."""
    with open(path, "rb") as handle:
        head = handle.read(8)
    if len(head) < 8 or head[2:4] != b"\x00\x00":
        return None
    return control_codec(head[4:8])


@dataclass(frozen=True)
class ControlRecord:
    """One decoded control record (``fields`` None for types logmart does not know)."""

    offset: int
    length: int
    data: bytes
    record_type: str | None
    fields: dict | None
    error: str | None


def decode_control_record(body: bytes, codec: str) -> tuple[str | None, dict | None]:
    """Decode one control record (the bytes after its RDW) -> (record type, fields or None).

    Unknown record types return (type, None): kept and counted, not an error.
    """
    if len(body) < 4:
        raise DecodeError(f"control record of {len(body)} bytes has no 4-byte record type")
    record_type = values.text(body[:4], codec)
    if not _RECORD_TYPE.fullmatch(record_type):
        raise DecodeError(f"control record type {body[:4].hex().upper()} is not 4 letters")
    layout = CONTROL_LAYOUTS.get(record_type)
    if layout is None:
        return record_type, None
    needed = DTBI_MIN_LENGTH if record_type == "DTBI" else layout.sizeof()
    if len(body) < needed:
        raise DecodeError(
            f"{record_type} record is {len(body)} bytes; its layout needs {needed}",
            record_type=record_type,
        )
    try:
        parsed = layout.parse(body, codec=codec)
    except (ConstructError, UnicodeDecodeError, ValueError) as exc:
        raise DecodeError(f"{record_type} record: {exc}", record_type=record_type) from None
    fields = {k.lower(): v for k, v in parsed.items() if not k.startswith(("_", "reserved"))}
    return record_type, fields


def read_control_file(path: Path, codec: str) -> Iterator[ControlRecord]:
    """Every record of a control file, decoded; failures carry their reason.

    An EBCDIC file's XTYP record names its SBCS CCSID: later records decode with that code page.
    """
    for batch in frame_file(path, CONTROL_RDW, resync=CONTROL_RESYNC):
        if isinstance(batch, FramingFailure):
            yield ControlRecord(batch.offset, batch.length, batch.data, None, None, batch.reason)
            continue
        for start, length in zip(batch.starts.tolist(), batch.lengths.tolist(), strict=True):
            record = _control_record(batch, start, length, codec)
            if record.record_type == "XTYP" and record.fields and codec != "ascii":
                codec = values.ebcdic_codec(record.fields.get("ebcdicsbcsccsid"), codec)
            yield record


def _control_record(batch: FrameBatch, start: int, length: int, codec: str) -> ControlRecord:
    data = batch.buffer[start : start + length]
    offset = batch.file_offset + start
    try:
        record_type, fields = decode_control_record(data[4:], codec)
        error = None
    except DecodeError as exc:
        record_type, fields, error = exc.record_type, None, str(exc.at(offset=offset))
    return ControlRecord(offset, length, data, record_type, fields, error)


# --- the LLDF header layout a control file describes ------------------------------------------

_DOCUMENTED = {spec.name: spec for spec in DOCUMENTED_HEADER}
# XHDF names are the spec's, with blanks ("CHANGE TYPE"); logmart's use underscores.
_ALIASES = {"CHANGETYPE": "CHANGE_TYPE"}


@dataclass(frozen=True)
class HeaderLayout:
    """Where each LLDF header field is, from XHDF records or the documented layout."""

    fields: tuple[FieldSpec, ...]
    source: str  # "documented" or "XHDF"
    notes: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        return max(spec.end for spec in self.fields)


DOCUMENTED_LAYOUT = HeaderLayout(tuple(DOCUMENTED_HEADER), "documented")


def header_layout_from_xhdf(xhdf: list[dict]) -> HeaderLayout:
    """The header layout XHDF records describe; known fields take their offset and length.

    Fields XHDF does not list keep no value (the column is null); XHDF fields logmart does not
    know are ignored and noted; when it lists none logmart knows, the documented layout is used.
    """
    if not xhdf:
        return DOCUMENTED_LAYOUT
    specs, notes = [], []
    for record in xhdf:
        name = (record.get("fieldname") or "").strip().upper().replace(" ", "_")
        name = _ALIASES.get(name, name)
        documented = _DOCUMENTED.get(name)
        if documented is None:
            notes.append(f"XHDF field {name!r} is not one logmart knows; ignored")
            continue
        width, offset = record.get("fieldlength"), record.get("fieldoffset")
        if width is None or offset is None or width <= 0 or offset < 0:
            notes.append(f"XHDF field {name!r} has no usable offset/length; documented one used")
            specs.append(documented)
            continue
        if not _width_fits(documented.kind, width):
            notes.append(f"XHDF field {name!r} length {width} does not fit; documented one used")
            specs.append(documented)
            continue
        specs.append(replace(documented, offset=offset, width=width))
    if not specs:  # nothing logmart knows: the documented layout, saying why
        notes.append("no XHDF field is one logmart knows; the documented header layout is used")
        return replace(DOCUMENTED_LAYOUT, notes=tuple(notes))
    return HeaderLayout(tuple(specs), "XHDF", tuple(notes))


def _width_fits(kind: str, width: int) -> bool:
    if kind == "bin":
        return width <= 8
    if kind in ("rba", "lrsn"):
        return width in (6, 10)
    if kind == "ts17":
        return width == 17
    return True


@dataclass(frozen=True)
class ControlSummary:
    """What a data file reader needs from its extract's control file."""

    codec: str
    header: HeaderLayout


def summarize_control_file(path: Path | None) -> ControlSummary:
    """Header layout and code page from a control file's XTYP and XHDF records."""
    if path is None:
        return ControlSummary(values.DEFAULT_EBCDIC, DOCUMENTED_LAYOUT)
    codec = sniff(path) or values.DEFAULT_EBCDIC
    xhdf: list[dict] = []
    for record in read_control_file(path, codec):
        if record.record_type == "XTYP" and record.fields and codec != "ascii":
            codec = values.ebcdic_codec(record.fields.get("ebcdicsbcsccsid"), codec)
        elif record.record_type == "XHDF" and record.fields:
            xhdf.append(record.fields)
    return ControlSummary(codec, header_layout_from_xhdf(xhdf))

"""Reading SYS_LOG exports: Parquet, CSV and JSON lines -> typed rows / Arrow batches.

An export is the result of ``SELECT * FROM SYS_LOG WHERE LOGADDR > ?`` saved as

* Parquet: columns as solidDB typed them (LOGADDR/DATA binary, or hex strings);
* CSV: a header row, LOGADDR and DATA in hex, an empty cell is NULL;
* JSON lines (``.jsonl``/``.ndjson``/``.json``): one object per row, LOGADDR and DATA in hex.

Column names match case-insensitively; a missing column reads as NULL; extra columns are
ignored. Hex may carry a ``0x`` or ``X'…'`` wrapper and white space. Every row read comes out,
in file order, with ``row_number`` (0-based) and ``decode_error``: a row whose hex is bad, whose
LOGADDR is not 20 bytes or whose integer is not one is *kept*, with the reason.

``row_number`` counts data rows from 0 in file order: a CSV's header row and blank lines, and
blank lines of a JSON-lines file, are not rows. :func:`read_export_batches` also gives, per row,
the bytes it was read from (``record_bytes``, for the quarantine):

* CSV and JSON lines: the row's line(s) exactly as in the file, line terminator included (a CSV
  row whose quoted cell holds a line break spans several lines). A CSV export is its header line
  followed by the ``record_bytes`` of its rows (blank lines aside).
* Parquet (no row bytes to point at): the row serialised as one JSON-lines export line, UTF-8,
  ``\n``-terminated: every column of the file under its own name, in file order, binary values
  as upper-case hex, other values as JSON numbers, strings and nulls. It is lossless for
  SYS_LOG's columns and reads back with the JSON-lines reader as the same row.

Everything streams: CSV and JSON lines a line at a time, Parquet a record batch at a time;
``batch_rows`` bounds what is held.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from udfs.batch import binary_buffers
from udfs.batch_values import hex_strings, ragged
from udfs.errors import DecodeError
from udfs.soliddb.layouts import (
    BINARY_COLUMNS,
    INTEGER_COLUMNS,
    LOGADDR_LENGTH,
    SYS_LOG_COLUMNS,
)

READER_SCHEMA = pa.schema(
    [pa.field("row_number", pa.int64())]
    + [pa.field(c.name.lower(), c.arrow_type) for c in SYS_LOG_COLUMNS]
    + [pa.field("decode_error", pa.string())]
)
FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
DEFAULT_BATCH_ROWS = 65_536
_ROW_ERROR = "\x00row error"  # a reason for a whole line (JSON that does not parse)

_INT_RANGES = {
    c.name: (-(2 ** (c.arrow_type.bit_width - 1)), 2 ** (c.arrow_type.bit_width - 1) - 1)
    for c in SYS_LOG_COLUMNS
    if c.name in INTEGER_COLUMNS
}


def export_format(path: Path) -> str:
    """'parquet', 'csv' or 'jsonl' from the file name's suffix."""
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise DecodeError(f"{path.name}: not a SYS_LOG export (.parquet, .csv, .jsonl)")


def find_exports(capture_dir: Path) -> list[Path]:
    """The ``sys_log.*`` files of a capture folder, sorted by name."""
    return sorted(
        p for p in capture_dir.glob("sys_log*") if p.is_file() and p.suffix.lower() in FORMATS
    )


@dataclass(frozen=True)
class ExportBatch:
    """Rows of an export typed as :data:`READER_SCHEMA`, and per row the bytes it was read from."""

    rows: pa.RecordBatch
    record_bytes: pa.Array  # binary, one value per row


def read_export_batches(
    path: Path, batch_rows: int = DEFAULT_BATCH_ROWS, row_groups: Sequence[int] | None = None
) -> Iterator[ExportBatch]:
    """Stream an export as :class:`ExportBatch` es, in file order.

    ``row_groups`` (Parquet only): read just these consecutive row groups; ``row_number`` still
    counts from the file's first row. Raises DecodeError for a file whose format is unknown.
    """
    fmt = export_format(path)
    if fmt == "parquet":
        chunks = _parquet_chunks(path, batch_rows, row_groups)
        first_row = _rows_before(path, row_groups)
    else:
        chunks = (_csv_chunks if fmt == "csv" else _jsonl_chunks)(path, batch_rows)
        first_row = 0
    for columns, rows, raw in chunks:
        raw_bytes = raw if isinstance(raw, pa.Array) else pa.array(raw, pa.binary())
        yield ExportBatch(_typed_batch(columns, rows, first_row), raw_bytes)
        first_row += rows


def read_sys_log_batches(
    path: Path, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Stream an export as Arrow batches of :data:`READER_SCHEMA`, in file order."""
    for batch in read_export_batches(path, batch_rows):
        yield batch.rows


def read_sys_log(path: Path, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[dict[str, Any]]:
    """Stream an export as row dicts (keys of :data:`READER_SCHEMA`), in file order."""
    for batch in read_sys_log_batches(path, batch_rows):
        yield from batch.to_pylist()


# --- the three formats, as chunks of columns (Arrow arrays or Python lists) + row bytes -------

Chunk = tuple[dict[str, Any], int, list[bytes] | pa.Array]


def _rows_before(path: Path, row_groups: Sequence[int] | None) -> int:
    """Rows of the Parquet file before the first of ``row_groups`` (0 when reading it all)."""
    if not row_groups:
        return 0
    metadata = pq.ParquetFile(path).metadata
    return sum(metadata.row_group(i).num_rows for i in range(min(row_groups)))


def _parquet_chunks(
    path: Path, batch_rows: int, row_groups: Sequence[int] | None = None
) -> Iterator[Chunk]:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=row_groups):
        yield _by_upper_name(batch.schema.names, batch.columns), batch.num_rows, json_lines(batch)


def json_lines(batch: pa.RecordBatch) -> pa.Array:
    """Each row as one JSON-lines export line (see the module docstring): Parquet row bytes.

    Built column by column with Arrow kernels (no per-row JSON encoding): the same text
    ``json.dumps(row, ensure_ascii=False, separators=(",", ":"))`` gives, binary as hex.
    """
    parts: list[Any] = []
    for index, (name, column) in enumerate(zip(batch.schema.names, batch.columns, strict=True)):
        key = json.dumps(name, ensure_ascii=False)
        parts += [("{" if index == 0 else ",") + key + ":", _json_values(column)]
    if not parts:
        return pa.array([b"{}\n"] * batch.num_rows, pa.binary())
    parts.append("}\n")
    return pc.binary_join_element_wise(*parts, "").cast(pa.binary())


def _json_values(column: pa.Array) -> pa.Array:
    """A column's values as JSON text, ``null`` for nulls (no nulls left)."""
    kind = column.type
    if _is_binary(kind):
        quoted = pc.binary_join_element_wise('"', hex_upper_array(column), '"', "")
    elif pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        quoted = column.cast(pa.string())
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        encoded = column.cast(pa.string()).dictionary_encode()
        texts = [json.dumps(v, ensure_ascii=False) for v in encoded.dictionary.to_pylist()]
        quoted = pa.array(texts, pa.string()).take(encoded.indices)
    else:  # floats, dates, decimals, nested: rare in a SYS_LOG export, value by value
        quoted = pa.array(
            [json.dumps(v, ensure_ascii=False, default=str) for v in column.to_pylist()],
            pa.string(),
        )
    return pc.fill_null(quoted, "null")


def _is_binary(kind: pa.DataType) -> bool:
    return (
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def hex_upper_array(column: pa.Array) -> pa.Array:
    """A binary column as upper-case hex strings (nulls stay null), vectorised."""
    values = column.cast(pa.binary())
    data, offsets = ragged(*binary_buffers(values))
    return pc.if_else(values.is_null(), pa.scalar(None, pa.string()), hex_strings(data, offsets))


def csv_records(path: Path) -> Iterator[bytes]:
    """A CSV file's records as the bytes they span, header first, blank lines left out.

    A record ends at a line break outside quotes (an even number of ``"`` so far: RFC 4180
    doubles a quote inside a quoted cell). A UTF-8 byte order mark before the header is dropped.
    An unterminated quote at the end makes the rest of the file one record.
    """
    with path.open("rb") as handle:
        pending, quotes, first = b"", 0, True
        for line in handle:
            if first:
                line, first = line.removeprefix(b"\xef\xbb\xbf"), False
            pending += line
            quotes += line.count(b'"')
            if quotes % 2 == 0:
                if pending.strip():
                    yield pending
                pending, quotes = b"", 0
        if pending.strip():
            yield pending


def csv_cells(record: bytes) -> list[str]:
    """One CSV record's cells (UTF-8); DecodeError when it is not UTF-8 or not one record."""
    try:
        text = record.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"the row is not UTF-8 text ({exc.reason} at byte {exc.start})")
    try:
        rows = list(csv.reader([text.rstrip("\r\n")]))
    except csv.Error as exc:
        raise DecodeError(f"the row is not CSV: {exc}")
    return rows[0] if rows else [""]


def _csv_chunks(path: Path, batch_rows: int) -> Iterator[Chunk]:
    records = csv_records(path)
    header_bytes = next(records, None)
    if header_bytes is None:
        return
    header = [name.strip().upper() for name in csv_cells(header_bytes)]
    chunk: list[bytes] = []
    for record in records:
        chunk.append(record)
        if len(chunk) >= batch_rows:
            yield _csv_columns(header, chunk), len(chunk), chunk
            chunk = []
    if chunk:
        yield _csv_columns(header, chunk), len(chunk), chunk


def _csv_columns(header: list[str], records: list[bytes]) -> dict[str, list[Any]]:
    """Cells by upper-cased header name (an empty cell is NULL); bad rows get a row error."""
    columns: dict[str, list[Any]] = {name: [] for name in header}
    errors: list[str | None] = []
    for record in records:
        try:
            cells = csv_cells(record)
            if len(cells) != len(header):
                raise DecodeError(f"the row has {len(cells)} cells, the header {len(header)}")
            errors.append(None)
        except DecodeError as exc:
            cells, message = [], str(exc)
            errors.append(message)
        for index, name in enumerate(header):
            value = cells[index] if index < len(cells) else ""
            columns[name].append(value if value != "" else None)
    columns[_ROW_ERROR] = errors
    return columns


def _jsonl_chunks(path: Path, batch_rows: int) -> Iterator[Chunk]:
    chunk: list[dict[str, Any]] = []
    raw: list[bytes] = []
    with path.open("rb") as handle:
        for line_number, line in enumerate(handle, start=1):
            text = line.removeprefix(b"\xef\xbb\xbf") if line_number == 1 else line
            if not text.strip():
                continue
            chunk.append(_json_object(text, line_number))
            raw.append(line)
            if len(chunk) >= batch_rows:
                yield _columns_of(chunk), len(chunk), raw
                chunk, raw = [], []
    if chunk:
        yield _columns_of(chunk), len(chunk), raw


def _json_object(line: bytes, line_number: int) -> dict[str, Any]:
    """One JSON line; a line that is not a JSON object becomes a row holding only its reason."""
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {_ROW_ERROR: f"line {line_number} is not UTF-8 text ({exc.reason})"}
    except json.JSONDecodeError as exc:
        return {_ROW_ERROR: f"line {line_number} is not JSON: {exc.msg}"}
    if not isinstance(value, dict):
        return {_ROW_ERROR: f"line {line_number} is not a JSON object"}
    return {str(k).upper(): v for k, v in value.items()}


def _columns_of(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    names = {name for row in rows for name in row}
    return {name: [row.get(name) for row in rows] for name in names}


def _by_upper_name(names: list[str], arrays: list[pa.Array]) -> dict[str, pa.Array]:
    return {name.strip().upper(): array for name, array in zip(names, arrays, strict=True)}


# --- typing one chunk --------------------------------------------------------------------------


def _typed_batch(columns: dict[str, Any], rows: int, first_row: int) -> pa.RecordBatch:
    errors: list[list[str]] = [[] for _ in range(rows)]
    for index, message in enumerate(columns.get(_ROW_ERROR, [])):
        if message:
            errors[index].append(message)
    arrays = [pa.array(range(first_row, first_row + rows), pa.int64())]
    for column in SYS_LOG_COLUMNS:
        source = columns.get(column.name)
        if source is None:
            arrays.append(pa.nulls(rows, column.arrow_type))
        elif column.name in INTEGER_COLUMNS:
            arrays.append(_integers(source, column.name, column.arrow_type, errors))
        elif column.name in BINARY_COLUMNS:
            arrays.append(_binaries(source, column.name, errors))
        else:
            arrays.append(_strings(source))
    _check_logaddr(arrays[1 + _LOGADDR_INDEX], errors)
    reasons = ["; ".join(e) if e else None for e in errors]
    arrays.append(pa.array(reasons, pa.string()))
    return pa.RecordBatch.from_arrays(arrays, schema=READER_SCHEMA)


_LOGADDR_INDEX = [c.name for c in SYS_LOG_COLUMNS].index("LOGADDR")


def _integers(source: Any, name: str, target: pa.DataType, errors: list[list[str]]) -> pa.Array:
    if isinstance(source, pa.Array) and pa.types.is_integer(source.type):
        try:
            return source.cast(target)  # safe cast: out of range raises, then per value below
        except pa.ArrowInvalid:
            pass
    values = source.to_pylist() if isinstance(source, pa.Array) else source
    return pa.array([_integer(v, name, i, errors) for i, v in enumerate(values)], target)


def _integer(value: Any, name: str, index: int, errors: list[list[str]]) -> int | None:
    try:
        return parse_integer(value, name)
    except DecodeError as exc:
        errors[index].append(str(exc))
        return None


def parse_integer(value: Any, name: str) -> int | None:
    """An integer cell (int, integral float, or text); None/'' -> None; else DecodeError."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise DecodeError(f"{name} {value!r} is not a whole number")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # ASCII only: Unicode's \s takes control characters int() does not strip ('0\x1f')
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value, re.ASCII):
        value = int(value)
    if not isinstance(value, int):
        raise DecodeError(f"{name} {value!r} is not a whole number")
    low, high = _INT_RANGES[name]
    if not low <= value <= high:
        raise DecodeError(f"{name} {value} is out of range")
    return value


def _binaries(source: Any, name: str, errors: list[list[str]]) -> pa.Array:
    if isinstance(source, pa.Array) and _is_binary(source.type):
        return source.cast(pa.binary())
    values = source.to_pylist() if isinstance(source, pa.Array) else source
    return pa.array([_binary(v, name, i, errors) for i, v in enumerate(values)], pa.binary())


def _binary(value: Any, name: str, index: int, errors: list[list[str]]) -> bytes | None:
    try:
        return parse_hex(value, name)
    except DecodeError as exc:
        errors[index].append(str(exc))
        return None


_HEX_WRAPPER = re.compile(r"^(?:0[xX](?P<a>.*)|[xX]'(?P<b>.*)')$", re.DOTALL)


def parse_hex(value: Any, name: str) -> bytes | None:
    """A binary cell: bytes as is; hex text (``0x…``, ``X'…'``, spaces allowed) -> bytes."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    if not isinstance(value, str):
        raise DecodeError(f"{name} {value!r} is not hex text")
    digits = "".join(value.split())
    if not digits:
        return None
    wrapped = _HEX_WRAPPER.match(digits)
    if wrapped:
        digits = wrapped["a"] if wrapped["a"] is not None else wrapped["b"]
    try:
        return bytes.fromhex(digits)
    except ValueError:
        shown = digits if len(digits) <= 48 else digits[:45] + "..."
        raise DecodeError(f"{name} is not hex: {shown!r}") from None


def _strings(source: Any) -> pa.Array:
    if isinstance(source, pa.Array):
        return source.cast(pa.string())
    return pa.array([None if v is None else str(v) for v in source], pa.string())


def _check_logaddr(logaddr: pa.Array, errors: list[list[str]]) -> None:
    """LOGADDR present but not 20 bytes -> a reason on that row (the row is kept)."""
    lengths = pc.binary_length(logaddr)
    wrong = pc.fill_null(pc.not_equal(lengths, LOGADDR_LENGTH), False)
    if not pc.any(wrong).as_py():
        return
    for index, (bad, length) in enumerate(zip(wrong.to_pylist(), lengths.to_pylist(), strict=True)):
        if bad:
            errors[index].append(f"LOGADDR is {length} bytes, expected {LOGADDR_LENGTH}")

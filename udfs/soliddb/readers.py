"""Reading SYS_LOG exports: Parquet, CSV and JSON lines -> typed rows / Arrow batches.

An export is the result of ``SELECT * FROM SYS_LOG WHERE LOGADDR > ?`` saved as

* Parquet: columns as solidDB typed them (LOGADDR/DATA binary, or hex strings);
* CSV: a header row, LOGADDR and DATA in hex, an empty cell is NULL;
* JSON lines (``.jsonl``/``.ndjson``/``.json``): one object per row, LOGADDR and DATA in hex.

Column names match case-insensitively; a missing column reads as NULL; extra columns are
ignored. Hex may carry a ``0x`` or ``X'…'`` wrapper and white space. Every row read comes out,
in file order, with ``row_number`` (0-based) and ``decode_error``: a row whose hex is bad, whose
LOGADDR is not 20 bytes or whose integer is not one is *kept*, with the reason.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

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


def read_sys_log_batches(
    path: Path, batch_rows: int = DEFAULT_BATCH_ROWS
) -> Iterator[pa.RecordBatch]:
    """Stream an export as Arrow batches of :data:`READER_SCHEMA`, in file order."""
    readers: dict[str, Callable[[Path, int], Iterator[tuple[dict[str, Any], int]]]] = {
        "parquet": _parquet_chunks,
        "csv": _csv_chunks,
        "jsonl": _jsonl_chunks,
    }
    first_row = 0
    for columns, rows in readers[export_format(path)](path, batch_rows):
        yield _typed_batch(columns, rows, first_row)
        first_row += rows


def read_sys_log(path: Path, batch_rows: int = DEFAULT_BATCH_ROWS) -> Iterator[dict[str, Any]]:
    """Stream an export as row dicts (keys of :data:`READER_SCHEMA`), in file order."""
    for batch in read_sys_log_batches(path, batch_rows):
        yield from batch.to_pylist()


# --- the three formats, as chunks of columns (Arrow arrays or Python lists) -------------------


def _parquet_chunks(path: Path, batch_rows: int) -> Iterator[tuple[dict[str, Any], int]]:
    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
        yield _by_upper_name(batch.schema.names, batch.columns), batch.num_rows


def _csv_chunks(path: Path, batch_rows: int) -> Iterator[tuple[dict[str, Any], int]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        header = next(csv.reader(handle), None)
    if not header:
        return
    # Every column as text: the conversion below types it and reports bad cells per row.
    convert = pacsv.ConvertOptions(
        column_types={name: pa.string() for name in header},
        null_values=[""],
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
    )
    reader = pacsv.open_csv(path, convert_options=convert)
    for batch in reader:
        for start in range(0, batch.num_rows, batch_rows):
            part = batch.slice(start, batch_rows)
            yield _by_upper_name(part.schema.names, part.columns), part.num_rows


def _jsonl_chunks(path: Path, batch_rows: int) -> Iterator[tuple[dict[str, Any], int]]:
    chunk: list[dict[str, Any]] = []
    with path.open(encoding="utf-8-sig") as handle:
        for line_number, line in enumerate(handle, start=1):
            if line.strip():
                chunk.append(_json_object(line, line_number))
            if len(chunk) >= batch_rows:
                yield _columns_of(chunk), len(chunk)
                chunk = []
    if chunk:
        yield _columns_of(chunk), len(chunk)


def _json_object(line: str, line_number: int) -> dict[str, Any]:
    """One JSON line; a line that is not a JSON object becomes a row holding only its reason."""
    try:
        value = json.loads(line)
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
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        value = int(value)
    if not isinstance(value, int):
        raise DecodeError(f"{name} {value!r} is not a whole number")
    low, high = _INT_RANGES[name]
    if not low <= value <= high:
        raise DecodeError(f"{name} {value} is out of range")
    return value


def _binaries(source: Any, name: str, errors: list[list[str]]) -> pa.Array:
    if isinstance(source, pa.Array) and (
        pa.types.is_binary(source.type)
        or pa.types.is_large_binary(source.type)
        or pa.types.is_fixed_size_binary(source.type)
    ):
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

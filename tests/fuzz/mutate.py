"""Mutation fuzzing of generated captures, in plain Python (no Spark, no dbt).

For each source a capture is generated once (its generator, fixed seed); each *run* copies one
of its files, applies 1-3 random mutations (bit flips, byte runs, truncation, duplication of a
slice, insertion, deletion, a length field set to another value, a record swapped with the
next), and reads the capture with exactly what the Spark data sources run on the executors —
``reader.partitions()`` then ``reader.read(partition)`` of ``udfs/<source>/source.py`` — and
then the SQL function bodies the dbt models call (row images, statements, layout histories)
on what was read. Checked after every run:

* nothing raises (any exception there fails a Spark job, so even a DecodeError is a crash);
* bytes accounted: the rows of a binary log file (Log Master data and control files, Db2 LUW
  ``.log`` files) cover the file exactly, each byte once, in order (``raw_offset`` +
  ``record_length``), and hold the file's bytes; rows of an export (solidDB) are numbered from 0
  without gaps; every row is decoded or quarantined with a reason (records in = decoded +
  quarantined);
* each SQL function gives one answer per row it was given, and every answer either decodes or
  says why not;
* no run takes longer than ``time_limit`` seconds (a hang).

A crash or a broken invariant is kept: the mutated file and a JSON description land in
``out/<source>/<run>/`` so that ``python -m tests.fuzz.mutate --replay DIR`` reproduces it.
``benchmarks/fuzz_captures.py`` is the command line; ``tests/fuzz/test_mutate.py`` runs a few
hundred mutations in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

SOURCES = ("db2zos", "db2luw", "soliddb")
MUTATIONS = (
    "bit_flips",
    "byte_run",
    "truncate",
    "duplicate",
    "insert",
    "delete",
    "length_field",
    "swap",
)

# --- generating the captures ---------------------------------------------------------------------


def generate_capture(source: str, out: Path, transactions: int, seed: int) -> Path:
    """Write one generated capture of ``source`` under ``out``; return the raw root."""
    if source == "db2zos":
        from logmart_generators.logmaster import generate

        generate(out, max(transactions, 24), seed)
    elif source == "db2luw":
        from logmart_generators.db2luw import generate

        generate(out, transactions, seed, file_bytes=16 * 1024)
    else:
        from logmart_generators.soliddb import generate

        # one capture per export format: the bytes of each format get mutated
        for fmt in ("jsonl", "csv", "parquet"):
            generate(out, max(transactions, 40), seed, formats=(fmt,), capture=f"capture_{fmt}")
    shutil.rmtree(out / "truth", ignore_errors=True)
    return out


def mutable_files(raw: Path) -> list[Path]:
    """Every file of the capture (paths relative to the raw root), in a fixed order."""
    return sorted(p.relative_to(raw) for p in raw.rglob("*") if p.is_file())


# --- mutations ---------------------------------------------------------------------------------


def mutate(
    data: bytes, rng: random.Random, kinds: tuple[str, ...] = MUTATIONS
) -> tuple[bytes, list[str]]:
    """1-3 random mutations of ``data``; returns the new bytes and what was done."""
    done = []
    buf = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.choice(kinds)
        done.append(_MUTATORS[kind](buf, rng))
    return bytes(buf), done


def _at(buf: bytearray, rng: random.Random) -> int:
    return rng.randrange(len(buf)) if buf else 0


def _bit_flips(buf: bytearray, rng: random.Random) -> str:
    if not buf:
        return "bit_flips: empty"
    places = [_at(buf, rng) for _ in range(rng.choice((1, 1, 2, 4, 8)))]
    for at in places:
        buf[at] ^= 1 << rng.randrange(8)
    return f"bit_flips at {places}"


def _byte_run(buf: bytearray, rng: random.Random) -> str:
    at, n = _at(buf, rng), rng.choice((1, 2, 4, 8, 64))
    value = rng.choice((0x00, 0xFF, 0x40, rng.randrange(256), None))
    run = rng.randbytes(n) if value is None else bytes([value]) * n
    buf[at : at + n] = run[: max(0, min(n, len(buf) - at))]
    return f"byte_run of {n} x {'random' if value is None else hex(value)} at {at}"


def _truncate(buf: bytearray, rng: random.Random) -> str:
    at = _at(buf, rng)
    del buf[at:]
    return f"truncate at {at}"


def _duplicate(buf: bytearray, rng: random.Random) -> str:
    start = _at(buf, rng)
    end = min(len(buf), start + rng.choice((1, 8, 64, 512, 4096)))
    to = rng.choice((end, _at(buf, rng)))
    buf[to:to] = buf[start:end]
    return f"duplicate {start}..{end} to {to}"


def _insert(buf: bytearray, rng: random.Random) -> str:
    at, n = _at(buf, rng), rng.choice((1, 3, 8, 64))
    buf[at:at] = rng.randbytes(n)
    return f"insert {n} random bytes at {at}"


def _delete(buf: bytearray, rng: random.Random) -> str:
    at, n = _at(buf, rng), rng.choice((1, 3, 8, 64))
    del buf[at : at + n]
    return f"delete {n} bytes at {at}"


def _length_field(buf: bytearray, rng: random.Random) -> str:
    """A 1/2/4-byte field (big- or little-endian) set to a nearby or extreme value; a length
    at a record start (RDW) or anywhere, since every format here has lengths all over it."""
    width = rng.choice((1, 2, 2, 4))
    at = rng.choice((0, _record_start(buf, rng), _at(buf, rng)))
    if at + width > len(buf):
        return "length_field: too short"
    order = rng.choice(("big", "little"))
    old = int.from_bytes(buf[at : at + width], order)
    limit = (1 << (8 * width)) - 1
    new = rng.choice((0, 1, 4, limit, old + 1, old - 1, old * 2, old // 2, rng.randrange(limit)))
    new = max(0, min(limit, new))
    buf[at : at + width] = new.to_bytes(width, order)
    return f"length_field {width}B {order} at {at}: {old} -> {new}"


def _record_start(buf: bytearray, rng: random.Random) -> int:
    """The start of a random RDW record when the bytes are RDW framed (else 0)."""
    starts, at = [], 0
    while at + 4 <= len(buf) and buf[at + 2 : at + 4] == b"\0\0" and len(starts) < 100_000:
        starts.append(at)
        length = struct.unpack_from(">H", buf, at)[0]
        if length <= 4:
            break
        at += length
    return rng.choice(starts) if starts else 0


def _swap(buf: bytearray, rng: random.Random) -> str:
    a = _at(buf, rng)
    n = rng.choice((2, 16, 128))
    b = min(len(buf), a + n)
    c = min(len(buf), b + n)
    buf[a:c] = buf[b:c] + buf[a:b]
    return f"swap {a}..{b} with {b}..{c}"


_MUTATORS: dict[str, Callable[[bytearray, random.Random], str]] = {
    "bit_flips": _bit_flips,
    "byte_run": _byte_run,
    "truncate": _truncate,
    "duplicate": _duplicate,
    "insert": _insert,
    "delete": _delete,
    "length_field": _length_field,
    "swap": _swap,
}


# --- reading a capture as the Spark data sources and SQL functions do -----------------------------


class InvariantError(AssertionError):
    """A run read the capture without raising, but what it read breaks an invariant."""


@dataclass
class Counts:
    """What one run (or many) read."""

    records: int = 0  # rows of the raw tables
    decoded: int = 0
    quarantined: int = 0
    function_rows: int = 0  # rows given to the SQL function bodies
    function_errors: int = 0  # of which the function said why it could not decode them

    def add(self, other: Counts) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _read_all(reader) -> list[pa.RecordBatch]:
    return [batch for part in reader.partitions() for batch in reader.read(part)]


def _rows(batches: list[pa.RecordBatch]) -> list[dict]:
    return [row for batch in batches for row in batch.to_pylist()]


def _account(rows: list[dict], counts: Counts) -> None:
    for row in rows:
        error = row["decode_error"]
        if error is not None and not (isinstance(error, str) and error.strip()):
            raise InvariantError(
                f"decode_error {error!r} at {row['source_file']}:{row['raw_offset']}"
            )
        counts.records += 1
        counts.decoded += error is None
        counts.quarantined += error is not None


def check_tiling(raw: Path, rows: list[dict], relative: str) -> None:
    """The rows of one binary file cover it exactly, in order, holding its bytes."""
    data = (raw / relative).read_bytes()
    at = 0
    for row in sorted(rows, key=lambda r: r["raw_offset"]):
        offset, length, held = row["raw_offset"], row["record_length"], row["record_bytes"]
        if offset != at:
            raise InvariantError(
                f"{relative}: bytes {at}..{offset} are in no row"
                if offset > at
                else f"{relative}: bytes from {offset} twice"
            )
        if length <= 0 or held is None or data[offset : offset + len(held)] != held:
            raise InvariantError(f"{relative}: the row at {offset} does not hold the file's bytes")
        if len(held) != length and row["decode_error"] is None:
            raise InvariantError(f"{relative}: a decoded row at {offset} holds part of its bytes")
        at = offset + length
    if at != len(data):
        raise InvariantError(f"{relative}: rows end at {at}, the file at {len(data)}")


def _check_function(result: pa.Array, given: int, what: str, error_field: str = "error") -> int:
    """One answer per row; returns how many answers say why they could not decode."""
    if len(result) != given:
        raise InvariantError(f"{what} gave {len(result)} answers for {given} rows")
    return sum(1 for row in result.to_pylist() if row and row.get(error_field) is not None)


def read_logmaster(raw: Path, rng: random.Random) -> Counts:
    from udfs.logmaster import catalog
    from udfs.logmaster import rows as row_images
    from udfs.logmaster.source import LogMasterReader, discover

    counts = Counts()
    root = raw / "logmaster"
    split = rng.choice((None, 4096, 65536))
    tables = {}
    for records in ("control", "data"):
        options = {"path": str(root), "raw_root": str(raw), "split_bytes": split}
        tables[records] = _rows(_read_all(LogMasterReader(options, records)))
        _account(tables[records], counts)
    for found in discover(root, raw):
        if found.kind in ("control", "data"):
            check_tiling(
                raw,
                [r for r in tables[found.kind] if r["source_file"] == found.relative],
                found.relative,
            )
    # row images, with the layouts the control records describe (int_logmaster_table_layouts)
    control_rows = [r for r in tables["control"] if r["decode_error"] is None]
    dtbi = [r["dtbi"] for r in control_rows if r["record_type"] == "DTBI" and r["dtbi"]]
    dlci = [r["dlci"] for r in control_rows if r["record_type"] == "DLCI" and r["dlci"]]
    xtyp = [r["xtyp"] for r in control_rows if r["record_type"] == "XTYP" and r["xtyp"]]
    ccsid = xtyp[0]["ebcdicsbcsccsid"] if xtyp else None
    layouts = {}
    for table in dtbi:
        columns = [
            c
            for c in dlci
            if (c["dbid"], c["tbobid"]) == (table["dbid"], table["tbobid"])
            and c["llcolumnnum"] is not None
            and c["llcolumntype"]
        ]
        with contextlib.suppress(ValueError, TypeError):
            key = (int(table["dbid"], 16), int(table["tbobid"], 16))
            layout = row_images.layout_from_control(table, columns, ccsid)
            layouts.setdefault(key, row_images.layout_text(layout))
    data_rows = [r for r in tables["data"] if r["decode_error"] is None]
    events = [r for r in data_rows if (r["change_type"] or "").strip() in ("CO", "CM", "SC", "E")]
    if events:  # DDL/command/status/exchange DATA (int_logmaster_schema_changes_standardized)
        result = catalog.catalog_event_arrow(
            pa.array([_data(r) for r in events], pa.binary()),
            pa.array([r["change_type"] for r in events], pa.string()),
            pa.array([f"ccsid:{ccsid or 37}"] * len(events)),
        )
        counts.function_rows += len(events)
        counts.function_errors += _check_function(result, len(events), "catalog events")
    if data_rows:
        datas = [_data(r) for r in data_rows]
        result = row_images.row_images_arrow(
            pa.array(datas, pa.binary()),
            pa.array([r["change_type"] for r in data_rows], pa.string()),
            pa.array([layouts.get((r["dbid"], r["tbobid"])) for r in data_rows], pa.string()),
        )
        counts.function_rows += len(data_rows)
        counts.function_errors += _check_function(result, len(data_rows), "row images")
    return counts


def _data(row: dict) -> bytes:
    """An LLDF record's DATA (its segment, for a segmented record: fed as is)."""
    return row["record_bytes"][row["data_offset"] : row["data_offset"] + row["data_length"]]


def read_db2luw(raw: Path, rng: random.Random) -> Counts:
    from udfs.db2luw import functions
    from udfs.db2luw.rows import LAYOUT_KINDS, LIFECYCLE_KINDS, PARTITION_KINDS
    from udfs.db2luw.source import Db2LuwReader, discover

    counts = Counts()
    root = raw / "db2luw"
    base = {"path": str(root), "raw_root": str(raw), "split_bytes": rng.choice((None, 8192))}
    if rng.random() < 0.1:  # now and then the settings the capture was not written with
        base.update(framing=rng.choice(("filter", "lsn")), byteorder=rng.choice(("little", "big")))
    byteorder = base.get("byteorder") or "little"
    tables = {}
    for records in ("log", "catalog_tables", "catalog_columns", "catalog_datapartitions",
                    "catalog_datatypes"):  # fmt: skip
        tables[records] = _rows(_read_all(Db2LuwReader({**base, "records": records})))
        _account(tables[records], counts)
    for found in discover(root, raw):
        if found.kind == "log":
            check_tiling(
                raw,
                [r for r in tables["log"] if r["source_file"] == found.relative],
                found.relative,
            )
            check_db2luw_batch_path(found.path, base.get("framing"), byteorder)
    # layout versions per table (int_db2luw_table_versions), then every row image
    log = [r for r in tables["log"] if r["decode_error"] is None]
    catalog = _db2luw_catalog(tables)
    layout_records: dict[tuple, list] = {}
    for r in log:
        master = (r["master_table_space_identifier"], r["master_table_identifier"])
        if r["kind"] in PARTITION_KINDS and master not in catalog:
            continue  # as int_db2luw_table_versions: only partitions of a table it has
        if (
            r["kind"] in LAYOUT_KINDS
            or r["kind"] in LIFECYCLE_KINDS
            or r["kind"] in PARTITION_KINDS
        ):
            record = {
                k: r[k]
                for k in (
                    "lsn",
                    "kind",
                    "table_space_identifier",
                    "table_identifier",
                    "old_columns",
                    "new_columns",
                    "column_id",
                    "master_table_space_identifier",
                    "master_table_identifier",
                    "partition_action",
                )
            }
            record["master_catalog"] = (
                json.dumps(catalog[master]) if r["kind"] in PARTITION_KINDS else None
            )
            layout_records.setdefault(
                (r["table_space_identifier"], r["table_identifier"]), []
            ).append(record)
    keys = sorted(set(catalog) | set(layout_records), key=str)
    catalog_texts = [json.dumps(catalog[k]) if k in catalog else None for k in keys]
    histories = functions.layout_history_arrow(
        pa.array(catalog_texts, pa.string()),
        pa.array(['{"codec": "utf-8", "graphic_codec": "utf-16-be"}'] * len(keys)),
        pa.array([layout_records.get(k) for k in keys]),
    ).to_pylist()
    if len(histories) != len(keys):
        raise InvariantError("layout history gave a wrong number of answers")
    versions = dict(zip(keys, histories, strict=True))
    images, layouts = [], []
    for r in log:
        found = versions.get((r["table_space_identifier"], r["table_identifier"])) or []
        chosen = [v for v in found if v["layout_json"] and v["valid_from_lsn"] <= r["lsn"]]
        layout = chosen[-1]["layout_json"] if chosen else None
        for image in (r["before_image"], r["after_image"], *(r["images"] or [])):
            if image is not None:
                images.append(image)
                layouts.append(layout)
    if images:
        result = functions.row_arrow(
            pa.array(images, pa.binary()),
            pa.array(layouts, pa.string()),
            pa.array([byteorder] * len(images)),
        )
        counts.function_rows += len(images)
        counts.function_errors += _check_function(result, len(images), "db2luw rows")
    return counts


def check_db2luw_batch_path(path: Path, framing: str | None, byteorder: str) -> None:
    """The column-at-a-time decoder gives exactly the per-record decoder's rows (values and
    quarantine reasons) for every frame batch of a (mutated) Db2 LUW log file."""
    from udfs.db2luw import readers
    from udfs.framing import FrameBatch, db2_read_log_length, db2_resync, frame_file

    framing = framing or "filter"
    length = db2_read_log_length(framing, byteorder)
    resync = db2_resync(framing, byteorder)
    for batch in frame_file(path, length, 0, path.stat().st_size, resync=resync):
        if not isinstance(batch, FrameBatch):
            continue
        fast = list(readers.log_batch(batch, "c", "f", framing, byteorder))
        reference = list(readers.log_batch_per_record(batch, "c", "f", framing, byteorder))
        if len(fast) != len(reference) or not all(
            a.equals(b) for a, b in zip(fast, reference, strict=False)
        ):
            raise InvariantError(f"{path.name}: the Db2 LUW batch decoder's rows differ from the "
                                 "per-record decoder's")  # fmt: skip


def _db2luw_catalog(tables: dict[str, list[dict]]) -> dict[tuple, dict]:
    """The catalog JSON int_db2luw_table_versions builds per ids: each table's columns (a
    distinct type joined to SYSCAT.DATATYPES), and each data partition's ids with its table's
    columns and the table's ids as master_tbspaceid / master_tableid."""
    good = {name: [r for r in rows if r["decode_error"] is None] for name, rows in tables.items()}
    datatypes = [t for t in good["catalog_datatypes"]
                 if (t["metatype"] or "T") == "T" and t["sourcename"] is not None]  # fmt: skip
    catalog: dict[tuple, dict] = {}
    by_name: dict[tuple, dict] = {}
    for table in good["catalog_tables"]:
        columns = []
        for c in good["catalog_columns"]:
            if (c["tabschema"], c["tabname"]) != (table["tabschema"], table["tabname"]):
                continue
            column = {
                k: c[k]
                for k in (
                    "colname",
                    "colno",
                    "typename",
                    "length",
                    "scale",
                    "nulls",
                    "compress",
                    "inline_length",
                    "keyseq",
                )
            }
            for t in datatypes:
                if (
                    t["typename"] == c["typename"]
                    and (c["typeschema"] or t["typeschema"]) == t["typeschema"]
                ):
                    column.update(sourcename=t["sourcename"], type_length=t["length"],
                                  type_scale=t["scale"])  # fmt: skip
            columns.append(column)
        key = (table["tbspaceid"], table["tableid"])
        catalog[key] = {
            **{
                k: table[k] for k in ("tabschema", "tabname", "tbspaceid", "tableid", "compression")
            },
            "columns": columns,
        }
        by_name[(table["tabschema"], table["tabname"])] = catalog[key]
    for partition in good["catalog_datapartitions"]:
        table = by_name.get((partition["tabschema"], partition["tabname"]))
        key = (partition["tbspaceid"], partition["partitionobjectid"])
        if table is not None and key not in catalog:
            catalog[key] = {**table, "tbspaceid": key[0], "tableid": key[1],
                            "master_tbspaceid": table["tbspaceid"],
                            "master_tableid": table["tableid"]}  # fmt: skip
    return catalog


def read_soliddb(raw: Path, rng: random.Random) -> Counts:
    from udfs.soliddb import functions
    from udfs.soliddb.source import SolidDbReader, discover

    counts = Counts()
    root = raw / "soliddb"
    base = {"path": str(root), "raw_root": str(raw), "split_rows": rng.choice((None, 50))}
    tables = {}
    for records in ("sys_log", "catalog_tables", "catalog_columns"):
        tables[records] = _rows(_read_all(SolidDbReader({**base}, records)))
        _account(tables[records], counts)
    for found in discover(root, raw):
        numbers = sorted(
            r["raw_offset"]
            for name in tables
            for r in tables[name]
            if r["source_file"] == found.relative
        )
        if numbers != list(range(len(numbers))):
            raise InvariantError(f"{found.relative}: row numbers are not 0..n-1: {numbers[:10]}…")
    log = [r for r in tables["sys_log"] if r["decode_error"] is None]
    statements = [r for r in log if r["recid"] in (6, 13)]
    if statements:
        result = functions.statement_arrow(
            pa.array([r["recid"] for r in statements], pa.int32()),
            pa.array([r["data"] for r in statements], pa.binary()),
            pa.array(["utf-8"] * len(statements)),
        )
        counts.function_rows += len(statements)
        counts.function_errors += _check_function(result, len(statements), "statements")
    entries_by_capture = {}
    for capture in sorted({r["capture"] for name in tables for r in tables[name]}):
        tables_rows = [
            _without_contract(r)
            for r in tables["catalog_tables"]
            if r["capture"] == capture and r["decode_error"] is None
        ]
        column_rows = [
            _without_contract(r)
            for r in tables["catalog_columns"]
            if r["capture"] == capture and r["decode_error"] is None
        ]
        schema = [
            {k: r[k] for k in ("recid", "trxid", "stmttrxid", "relid", "flags", "logaddr", "data")}
            for r in statements
            if r["capture"] == capture
        ]
        entries_by_capture[capture] = functions.layout_history_arrow(
            pa.array([tables_rows]),
            pa.array([column_rows]),
            pa.array([schema]),
            pa.array(["utf-8"]),
            pa.array(["utf-16-be"]),
        ).to_pylist()[0]
    datas, layouts = [], []
    for r in log:
        if r["recid"] not in (1, 3, 4, 5):
            continue
        entries = [
            e
            for e in entries_by_capture.get(r["capture"], [])
            if e["error"] is None
            and e["rel_id"] == r["relid"]
            and e["valid_from_logaddr"] < (r["logaddr_hex"] or "")
        ]
        datas.append(r["data"])
        layouts.append(entries[-1]["layout_json"] if entries else None)
    if datas:
        result = functions.row_arrow(pa.array(datas, pa.binary()), pa.array(layouts, pa.string()))
        counts.function_rows += len(datas)
        counts.function_errors += _check_function(result, len(datas), "soliddb rows")
    return counts


def _without_contract(row: dict) -> dict:
    contract = {
        "source_system",
        "capture",
        "source_file",
        "raw_offset",
        "record_length",
        "record_bytes",
        "decode_error",
    }
    return {k: v for k, v in row.items() if k not in contract}


READERS: dict[str, Callable[[Path, random.Random], Counts]] = {
    "db2zos": read_logmaster,
    "db2luw": read_db2luw,
    "soliddb": read_soliddb,
}


# --- running ------------------------------------------------------------------------------------


class Hang(Exception):
    """A run took longer than its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`Hang` in the main thread after ``seconds`` (no limit when None)."""
    if not seconds or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expired(signum, frame):
        raise Hang(f"the run took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Finding:
    """A crash, a broken invariant or a hang: what, where, and how to get it again."""

    source: str
    run: int
    kind: str  # 'crash' | 'invariant' | 'hang'
    error: str
    where: str  # the innermost frame in udfs/, or the invariant's message
    file: str
    mutations: list[str]
    seed: int = 1  # of the capture (with transactions): what --replay generates again
    transactions: int = 40
    saved: str | None = None


@dataclass
class Report:
    """Totals of a fuzz session, per source."""

    runs: Counter = field(default_factory=Counter)
    mutations: Counter = field(default_factory=Counter)
    input_bytes: Counter = field(default_factory=Counter)
    counts: dict[str, Counts] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    seconds: Counter = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        return {
            source: {
                "runs": self.runs[source],
                "mutations": self.mutations[source],
                "input_bytes": self.input_bytes[source],
                "seconds": round(self.seconds[source], 1),
                **vars(self.counts.get(source, Counts())),
                "findings": Counter(
                    f"{f.kind}: {f.error} @ {f.where}" for f in self.findings if f.source == source
                ),
            }
            for source in self.runs
        }


def fuzz(
    sources: tuple[str, ...] = SOURCES,
    runs: int = 100,
    seed: int = 1,
    transactions: int = 40,
    out: Path | None = None,
    seconds_per_run: float | None = 60,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """``runs`` mutated reads of each source's generated capture; see the module docstring."""
    report = Report()
    with tempfile.TemporaryDirectory(prefix="logmart-fuzz-") as work:
        for source in sources:
            pristine = generate_capture(
                source, Path(work) / source / "pristine", transactions, seed
            )
            raw = Path(work) / source / "raw"
            shutil.copytree(pristine, raw)
            files = mutable_files(raw)
            # bigger files (the logs) are picked more often than catalogs and control files
            weights = [(raw / f).stat().st_size ** 0.5 + 1 for f in files]
            report.counts[source] = Counts()
            rng = random.Random(f"{seed}-{source}")
            for run in range(runs):
                relative = rng.choices(files, weights)[0]
                original = (pristine / relative).read_bytes()
                mutated, done = mutate(original, rng)
                (raw / relative).write_bytes(mutated)
                finding = _run_once(source, raw, run, relative, done, rng, report, seconds_per_run)
                if finding is not None:
                    finding.seed, finding.transactions = seed, transactions
                    finding.saved = _save(out, finding, raw, relative) if out else None
                    report.findings.append(finding)
                (raw / relative).write_bytes(original)
                report.runs[source] += 1
                report.mutations[source] += len(done)
                report.input_bytes[source] += len(mutated)
                if progress and (run + 1) % max(1, runs // 10) == 0:
                    progress(f"{source}: {run + 1}/{runs} runs, {len(report.findings)} findings")
    return report


def _run_once(source, raw, run, relative, done, rng, report, seconds_per_run) -> Finding | None:
    started = time.perf_counter()
    try:
        with time_limit(seconds_per_run):
            counts = READERS[source](raw, random.Random(rng.random()))
        report.counts[source].add(counts)
        return None
    except Hang as exc:
        return Finding(source, run, "hang", str(exc), "", str(relative), done)
    except InvariantError as exc:
        return Finding(source, run, "invariant", "InvariantError", str(exc), str(relative), done)
    except Exception as exc:  # any exception is a crash of the Spark job
        return Finding(
            source,
            run,
            "crash",
            f"{type(exc).__name__}: {str(exc)[:200]}",
            _where(exc),
            str(relative),
            done,
        )
    finally:
        report.seconds[source] += time.perf_counter() - started


def _where(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/udfs/" in f.filename]
    if not frames:
        return "?"
    frame = frames[-1]
    return f"{frame.filename.split('/udfs/')[-1]}:{frame.lineno} {frame.name}"


def _save(out: Path, finding: Finding, raw: Path, relative: Path) -> str:
    """Keep the mutated capture file and what happened, to replay it."""
    folder = out / finding.source / f"run{finding.run:06d}"
    folder.mkdir(parents=True, exist_ok=True)
    finding.saved = str(folder)
    target = folder / "raw" / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(raw / relative, target)
    (folder / "finding.json").write_text(json.dumps(vars(finding), indent=2, default=str))
    return str(folder)


def replay(folder: Path) -> None:
    """Read a saved finding's capture again (its file put back into a fresh capture of the same
    seed and size); raises what the run raised."""
    finding = json.loads((folder / "finding.json").read_text())
    with tempfile.TemporaryDirectory(prefix="logmart-replay-") as work:
        raw = generate_capture(
            finding["source"], Path(work), finding["transactions"], finding["seed"]
        )
        shutil.copyfile(folder / "raw" / finding["file"], raw / finding["file"])
        READERS[finding["source"]](raw, random.Random(0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sources", default=",".join(SOURCES), help="comma-separated: db2zos, db2luw, soliddb"
    )
    parser.add_argument("--runs", type=int, default=1000, help="mutated reads per source")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--transactions", type=int, default=40, help="size of each capture")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("fuzz-findings"),
        help="where findings (mutated file + finding.json) are kept",
    )
    parser.add_argument("--time-limit", type=float, default=60, help="seconds per run (hang)")
    parser.add_argument("--replay", type=Path, help="read a saved finding again and raise")
    args = parser.parse_args(argv)
    if args.replay:
        replay(args.replay)
        print("replayed without an exception")
        return 0
    sources = tuple(s.strip() for s in args.sources.split(",") if s.strip())
    unknown = set(sources) - set(SOURCES)
    if unknown:
        parser.error(f"unknown sources: {', '.join(sorted(unknown))}")
    report = fuzz(
        sources,
        args.runs,
        args.seed,
        args.transactions,
        args.out,
        args.time_limit,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(json.dumps(report.summary(), indent=2))
    shown: Counter = Counter()
    for finding in report.findings:  # the first three of each distinct finding
        key = (finding.source, finding.kind, finding.where)
        shown[key] += 1
        if shown[key] <= 3:
            print(
                f"{finding.kind} {finding.source} run {finding.run} {finding.file}: "
                f"{finding.error} @ {finding.where} after {finding.mutations} -> {finding.saved}"
            )
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())

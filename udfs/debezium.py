"""Debezium messages from ``marts.fct_changes`` (``logmart export debezium``), read the way
consumers read a log: one log stream at a time, incrementally, in commit order.

What is written under the out folder, per log stream (``fct_changes.log_stream``, the first
folder under the source's raw folder), with the topic prefix ``<source_system>.<log_stream>``
(Debezium's ``topic.prefix``; characters a topic cannot hold become ``_``):

* ``<prefix>.<schema>.<table>.jsonl``: the table's topic, one Kafka record per line in the
  order they were produced, ``{"key": KEY, "value": VALUE}``. VALUE is Debezium's change event
  value as its JSON converter writes it without schemas (``value.converter.schemas.enable=
  false``)::

      {"before": {...} | null, "after": {...} | null,
       "source": {"version", "connector", "name", "ts_ms", "snapshot", "db", "schema", "table",
                  "change_lsn", "commit_lsn", "txId", "change_id", "capture"},
       "op": "c" | "u" | "d" | "t", "ts_ms": <when exported>,
       "transaction": {"id", "total_order", "data_collection_order"}}

  KEY is the row's key as Debezium's message key: ``{<key column>: value, ...}`` from
  ``fct_changes.key_columns`` (the after image for ``c``/``u``, the before image for ``d``);
  null for a table without key columns and for truncates, which concern the whole table
  (Debezium's truncate events have no key either). A tombstone (``--tombstones``, Debezium's
  ``tombstones.on.delete``) is ``{"key": KEY, "value": null}`` right after a delete with a
  key. An update that changes the key is, as Debezium's relational connectors emit it, a
  ``d`` under the old key (then its tombstone) and a ``c`` under the new one.
* ``<prefix>.transaction.jsonl``: Debezium's transaction metadata topic
  (``provide.transaction.metadata``): key ``{"id"}``, values::

      {"status": "BEGIN", "id", "ts_ms", "event_count": null, "data_collections": null}
      {"status": "END", "id", "ts_ms", "event_count": N,
       "data_collections": [{"data_collection": "<schema>.<table>", "event_count": n}, ...]}

  (shapes of Debezium's "Transaction metadata" section, e.g. the Db2 connector's "events that
  represent transaction boundaries"; ``ts_ms`` is the commit time, as ``source.ts_ms``).
  ``transaction.total_order`` is the event's place among the events of its transaction, from
  1, ``data_collection_order`` among those of its transaction on the same table (Debezium's
  definitions): a transaction that spans captures of the stream is numbered once.
  ``event_count`` counts the data events written (tombstones are not events).
* ``logmart-checkpoint.json``: what was exported so far, per stream (`Checkpoint`).

Values: integers and floats (by ``column_types``) as JSON numbers, booleans as JSON booleans,
everything else as the marts' text: decimals as strings (Debezium's
``decimal.handling.mode=string``), binary as hex (``binary.handling.mode=hex``), dates, times
and timestamps as ISO text. Without column types every value is a string. A value the log
does not carry (``fct_changes.before_unavailable`` / ``after_unavailable``: an out-of-row LOB,
a LONG or XML value, a column added after the row was written; ``udfs/unavailable.py``) is the
string ``__debezium_unavailable_value``, Debezium's default ``unavailable.value.placeholder``,
whatever the column's type, never null (null is a real SQL NULL).

Times: ``source.ts_ms`` and the transaction events' ``ts_ms`` are the commit time in
milliseconds since 1970-01-01 UTC, null when the log has none (solidDB logs no times);
``ts_ms`` of a change event is when it was exported. The marts keep commit times as the log
gives them; each source's zone is its declaration's ``commit_time_zone`` (udfs/sources.py).

The logic that turns rows into messages (`stream_messages`) and the checkpoint are plain
Python, tested without Spark; `export` only queries the marts and streams the rows.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from udfs.errors import LogmartError
from udfs.sources import REGISTERED, by_system
from udfs.unavailable import DEBEZIUM_PLACEHOLDER

CONNECTOR_VERSION = "logmart-0.1.0"
INTEGER_TYPES = re.compile(r"^(SMALLINT|INTEGER|INT|BIGINT|TINYINT)\b", re.IGNORECASE)
FLOAT_TYPES = re.compile(r"^(REAL|FLOAT|DOUBLE)\b", re.IGNORECASE)
BOOLEAN_TYPES = re.compile(r"^BOOLEAN\b", re.IGNORECASE)
UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")

CHECKPOINT_FILE = "logmart-checkpoint.json"
CHECKPOINT_FORMAT = "logmart-debezium-checkpoint"
CHECKPOINT_VERSION = 1
TRUNCATES = ("emit", "skip")

# A source whose log holds wall-clock times with no zone (its declaration's commit_time_zone is
# None) gets a zone setting: `--<system>-time-zone` or LOGMART_<SYSTEM>_TIME_ZONE, default UTC.
DEFAULT_TIME_ZONE = "UTC"
OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")

OPEN_FILES = 64  # topic files kept open at once while writing


# ---------------------------------------------------------------------------------------------
# Values and names


def topic(source_system: str, log_stream: str, schema: str | None, table: str) -> str:
    """Debezium's topic name <prefix>.<schema>.<table>, prefix <source_system>.<log_stream>;
    characters a topic cannot hold → _ (an empty stream, files directly under the source's
    folder, is left out)."""
    parts = [source_system, *([log_stream] if log_stream else []), *([schema] if schema else [])]
    return ".".join(UNSAFE.sub("_", part) for part in [*parts, table])


def prefix(source_system: str, log_stream: str) -> str:
    """The stream's topic prefix (Debezium's topic.prefix, the source's ``name``)."""
    parts = [source_system, *([log_stream] if log_stream else [])]
    return ".".join(UNSAFE.sub("_", part) for part in parts)


def transaction_topic(source_system: str, log_stream: str) -> str:
    """Debezium's transaction metadata topic, <topic.prefix>.transaction."""
    return f"{prefix(source_system, log_stream)}.transaction"


def value(text: str | None, data_type: str | None) -> Any:
    """A row value (marts text) as the JSON value Debezium would give for its type."""
    if text is None or data_type is None:
        return text
    if INTEGER_TYPES.match(data_type):
        try:
            return int(text)
        except ValueError:
            return text
    if FLOAT_TYPES.match(data_type):
        try:
            number = float(text)
        except ValueError:
            return text
        return number if number == number and abs(number) != float("inf") else text
    if BOOLEAN_TYPES.match(data_type) and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _entries(image: Any) -> Iterable[tuple[str, str | None]]:
    """A row image as (column, text) pairs: a dict, or Spark's map_entries (rows of 2)."""
    if isinstance(image, Mapping):
        return image.items()
    return ((name, text) for name, text in image)


def _image(image: Any, types: Mapping[str, str] | None, unavailable: Any = None) -> dict | None:
    """A row image as Debezium's before/after: typed values, and DEBEZIUM_PLACEHOLDER for
    each column ``unavailable`` names (its value is not in the log)."""
    if image is None:
        return None
    types = types or {}
    missing = {name for name, _ in _entries(unavailable)} if unavailable is not None else set()
    return {
        name: DEBEZIUM_PLACEHOLDER if name in missing else value(text, types.get(name))
        for name, text in _entries(image)
    }


def _optional(row: Mapping[str, Any], name: str) -> Any:
    """A column the row may lack (rows of marts built before it existed): None then."""
    try:
        return row[name]
    except (KeyError, ValueError, IndexError):
        return None


def time_zone(name: str) -> dt.tzinfo:
    """A time zone setting: ``UTC``, an IANA name (``Europe/Berlin``) or an offset
    (``+01:00``, ``-0500``)."""
    text = name.strip()
    if text.upper() in ("UTC", "Z", "GMT"):
        return dt.UTC
    match = OFFSET.match(text)
    if match:
        sign, hours, minutes = match.groups()
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes))
        if delta >= dt.timedelta(hours=24):
            raise LogmartError(f"time zone offset {name!r} is not less than 24 hours")
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise LogmartError(
            f"unknown time zone {name!r}: give UTC, an IANA name such as Europe/Berlin or "
            "America/New_York, or an offset such as +01:00"
        ) from None


def wall_clock_systems() -> list[str]:
    """The source systems whose logs give commit times with no zone (the z/OS clock of Log
    Master): each has a time zone setting."""
    return [s.system for s in REGISTERED if s.commit_time_zone is None]


def time_zone_flag(system: str) -> str:
    return f"--{system}-time-zone"


def time_zone_variable(system: str) -> str:
    return f"LOGMART_{system.upper()}_TIME_ZONE"


def wall_clock_time_zones(
    given: Mapping[str, str | None] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The zone each wall-clock source's times are read in: ``given[system]`` (its CLI flag),
    else its environment variable in ``environ`` (``os.environ`` when None), else UTC;
    checked."""
    given, environ = given or {}, os.environ if environ is None else environ
    zones = {}
    for system in wall_clock_systems():
        name = given.get(system) or environ.get(time_zone_variable(system)) or DEFAULT_TIME_ZONE
        time_zone(name)
        zones[system] = name
    return zones


def source_time_zone(source_system: str, zones: Mapping[str, str] | None = None) -> str:
    """The zone a source's commit times are in: its declaration's ``commit_time_zone``, or its
    setting (:func:`wall_clock_time_zones`) when the log gives wall-clock times with no zone."""
    declared = by_system(source_system).commit_time_zone
    return declared or (zones or {}).get(source_system) or DEFAULT_TIME_ZONE


def epoch_ms(moment: dt.datetime | str | None, zone: dt.tzinfo = dt.UTC) -> int | None:
    """Milliseconds since 1970-01-01 UTC of a log time given as a wall-clock time in `zone`
    (a datetime, or ISO text as the marts print it; a time that has a zone already is
    converted as it is). At the end of daylight saving time the repeated hour is read as its
    first occurrence (``fold=0``)."""
    if moment is None:
        return None
    if isinstance(moment, str):
        moment = dt.datetime.fromisoformat(moment)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    delta = moment - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def check_position(position: str, source_system: str | None) -> str:
    """A commit position given by a user, as the marts write it (upper-case hex)."""
    text = position.strip().upper()
    if not text or not re.fullmatch(r"[0-9A-F]+", text):
        raise LogmartError(
            f"commit position {position!r} is not hexadecimal: give a commit_position of "
            "marts.fct_changes (e.g. the one in the out folder's checkpoint)"
        )
    digits = by_system(source_system).commit_position_digits if source_system else 0
    if digits and len(text) != digits:
        raise LogmartError(
            f"commit position {position!r} has {len(text)} hex digits; {source_system} commit "
            f"positions have {digits}"
        )
    return text


# ---------------------------------------------------------------------------------------------
# Checkpoint


@dataclass
class StreamCheckpoint:
    """What was exported of one log stream: every committed change up to and including
    `commit_position` (the last transaction's), `changes` of them (truncates left out by
    ``--truncates skip`` counted too), in `transactions` transactions; `files`: the size each
    file of the stream had after the last complete run (a run that stopped half-way is cut
    back to them); `options`: how the events were written (a continuation must match)."""

    source_system: str
    log_stream: str
    commit_position: str | None = None
    transaction_id: str | None = None
    transactions: int = 0
    changes: int = 0
    messages: int = 0
    files: dict[str, int] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    exported_at: str | None = None

    @property
    def key(self) -> str:
        return stream_key(self.source_system, self.log_stream)


def stream_key(source_system: str, log_stream: str) -> str:
    return f"{source_system}/{log_stream}"


def read_checkpoint(out_dir: Path) -> dict[str, StreamCheckpoint]:
    """The out folder's checkpoint, by `stream_key`; empty when there is none."""
    path = out_dir / CHECKPOINT_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
        if data.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"format is {data.get('format')!r}, not {CHECKPOINT_FORMAT!r}")
        if data.get("version") != CHECKPOINT_VERSION:
            raise ValueError(
                f"version {data.get('version')!r}; this logmart reads version {CHECKPOINT_VERSION}"
            )
        streams = {key: StreamCheckpoint(**entry) for key, entry in data["streams"].items()}
    except (ValueError, KeyError, TypeError) as exc:
        raise LogmartError(
            f"cannot read the checkpoint {path}: {exc}; export into a new folder (or remove "
            "the folder's files to export everything again)"
        ) from None
    return streams


def write_checkpoint(out_dir: Path, streams: Mapping[str, StreamCheckpoint]) -> Path:
    """Write the checkpoint atomically (a temporary file renamed over the old one)."""
    path = out_dir / CHECKPOINT_FILE
    data = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "streams": {key: asdict(streams[key]) for key in sorted(streams)},
    }
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return path


# ---------------------------------------------------------------------------------------------
# Rows → messages


@dataclass(frozen=True)
class Options:
    """How events are written: `tombstones` after deletes; `truncates` ``emit`` (op ``t``)
    or ``skip`` (left out: Flink's debezium-json, among others, rejects ``t``); `time_zone`:
    the zone the stream's commit times are in; `exported_ms`: the events' ``ts_ms``."""

    tombstones: bool = False
    truncates: str = "emit"
    time_zone: str = "UTC"
    exported_ms: int = 0

    def recorded(self) -> dict[str, Any]:
        """The options a continuation of the export must share (kept in the checkpoint)."""
        return {"tombstones": self.tombstones, "truncates": self.truncates,
                "time_zone": self.time_zone}  # fmt: skip


@dataclass(frozen=True)
class Message:
    """One Kafka record: the topic it goes to, its key and its value (null: a tombstone)."""

    topic: str
    key: dict | None
    value: dict | None


def _known(key: dict | None) -> bool:
    """A key whose every value is in the log (none is DEBEZIUM_PLACEHOLDER)."""
    return key is not None and DEBEZIUM_PLACEHOLDER not in key.values()


def _key(columns: Any, image: dict | None) -> dict | None:
    if not columns or image is None:
        return None
    return {name: image.get(name) for name in columns}


class _Transaction:
    """Counters of the transaction being written."""

    def __init__(self, row: Mapping[str, Any], ts_ms: int | None) -> None:
        self.id = row["transaction_id"]
        self.commit_position = row["commit_position"]
        self.ts_ms = ts_ms
        self.events = 0
        self.changes = 0
        self.by_collection: dict[str, int] = {}

    def number(self, collection: str) -> dict:
        self.events += 1
        self.by_collection[collection] = self.by_collection.get(collection, 0) + 1
        return {"id": self.id, "total_order": self.events,
                "data_collection_order": self.by_collection[collection]}  # fmt: skip

    def boundary(self, status: str) -> dict:
        end = status == "END"
        return {
            "status": status,
            "id": self.id,
            "ts_ms": self.ts_ms,
            "event_count": self.events if end else None,
            "data_collections": [
                {"data_collection": name, "event_count": count}
                for name, count in self.by_collection.items()
            ]
            if end
            else None,
        }


def stream_messages(
    rows: Iterable[Mapping[str, Any]], progress: StreamCheckpoint, options: Options
) -> Iterator[Message]:
    """The messages of one log stream's committed changes after `progress`.

    `rows`: committed changes of the stream `progress` names, ordered by commit_position,
    transaction_id, change_seq, each a mapping (a Spark Row or a dict) with source_system,
    log_stream, capture, table_schema, table_name, op, change_id, transaction_id,
    commit_position, log_position, commit_ts, before_image, after_image (dicts, or Spark
    map_entries), key_columns and column_types, and optionally before_unavailable /
    after_unavailable (the same forms: columns written as DEBEZIUM_PLACEHOLDER). Rows at or
    before `progress.commit_position` are an error (the query selects after it), as are rows
    out of commit order.

    For each transaction: BEGIN on the transaction topic, its change events (and tombstones),
    END. `progress` is advanced as each transaction ends (its commit_position, counts), so
    once the generator is exhausted it is the checkpoint to keep.
    """
    zone = time_zone(options.time_zone)
    txn_topic = transaction_topic(progress.source_system, progress.log_stream)
    current: _Transaction | None = None
    last_order: tuple[str, str] | None = (
        (progress.commit_position, progress.transaction_id or "")
        if progress.commit_position is not None
        else None
    )

    def finish(txn: _Transaction) -> Message:
        progress.commit_position = txn.commit_position
        progress.transaction_id = txn.id
        progress.transactions += 1
        progress.changes += txn.changes
        progress.messages += 1
        return Message(txn_topic, {"id": txn.id}, txn.boundary("END"))

    for row in rows:
        if (row["source_system"], row["log_stream"]) != (
            progress.source_system,
            progress.log_stream,
        ):
            raise ValueError(
                f"a change of {row['source_system']}/{row['log_stream']} among those of "
                f"{progress.key}"
            )
        position = row["commit_position"]
        if position is None:
            raise ValueError(f"change {row['change_id']} has no commit_position: not committed")
        if current is None or (position, row["transaction_id"]) != (
            current.commit_position,
            current.id,
        ):
            order = (position, row["transaction_id"])
            if last_order is not None and order <= last_order:
                raise ValueError(
                    f"transaction {row['transaction_id']} at commit position {position} comes "
                    f"after {last_order[1]} at {last_order[0]}: rows are not in commit order "
                    "or were exported already"
                )
            last_order = order
            if current is not None:
                yield finish(current)
            current = _Transaction(row, epoch_ms(row["commit_ts"], zone))
            progress.messages += 1
            yield Message(txn_topic, {"id": current.id}, current.boundary("BEGIN"))
        current.changes += 1
        yield from _change_messages(row, current, progress, options)
    if current is not None:
        yield finish(current)


def _change_messages(
    row: Mapping[str, Any], txn: _Transaction, progress: StreamCheckpoint, options: Options
) -> Iterator[Message]:
    op = row["op"]
    if op == "t" and options.truncates == "skip":
        return
    types = dict(row["column_types"]) if row["column_types"] is not None else None
    before = _image(row["before_image"], types, _optional(row, "before_unavailable"))
    after = _image(row["after_image"], types, _optional(row, "after_unavailable"))
    columns = list(row["key_columns"] or [])
    name = topic(row["source_system"], row["log_stream"], row["table_schema"], row["table_name"])
    collection = ".".join(p for p in (row["table_schema"], row["table_name"]) if p)
    old_key, new_key = _key(columns, before), _key(columns, after)

    def event(op: str, before: dict | None, after: dict | None, key: dict | None) -> Message:
        progress.messages += 1
        return Message(name, key, _envelope(row, op, before, after, txn, collection, options))

    if op == "u" and _known(old_key) and _known(new_key) and old_key != new_key:
        # the key changed: a delete under the old key and a create under the new one (a key
        # value not in the log is not compared: the change stays an update)
        yield event("d", before, None, old_key)
        if options.tombstones:
            progress.messages += 1
            yield Message(name, old_key, None)
        yield event("c", None, after, new_key)
        return
    if op == "t":
        yield event("t", None, None, None)
        return
    key = old_key if op == "d" else new_key
    yield event(op, before, after, key)
    if op == "d" and options.tombstones and key is not None:
        progress.messages += 1
        yield Message(name, key, None)


def _envelope(
    row: Mapping[str, Any],
    op: str,
    before: dict | None,
    after: dict | None,
    txn: _Transaction,
    collection: str,
    options: Options,
) -> dict:
    return {
        "before": before,
        "after": after,
        "source": {
            "version": CONNECTOR_VERSION,
            "connector": row["source_system"],
            "name": prefix(row["source_system"], row["log_stream"]),
            "ts_ms": txn.ts_ms,
            "snapshot": "false",
            "db": row["log_stream"],
            "schema": row["table_schema"],
            "table": row["table_name"],
            "change_lsn": row["log_position"],
            "commit_lsn": row["commit_position"],
            "txId": row["transaction_id"],
            "change_id": row["change_id"],
            "capture": row["capture"],
        },
        "op": op,
        "ts_ms": options.exported_ms,
        "transaction": txn.number(collection),
    }


# ---------------------------------------------------------------------------------------------
# Messages → files


@dataclass(frozen=True)
class Written:
    path: Path
    events: int


class TopicFiles:
    """Appends records to ``<topic>.jsonl`` files of one stream, each first cut back to the
    size the checkpoint recorded (0 for a file it does not know): what an interrupted run
    appended is dropped before this run writes."""

    def __init__(self, out_dir: Path, recorded: Mapping[str, int]) -> None:
        self.out_dir = out_dir
        self.sizes = dict(recorded)
        self.counts: dict[str, int] = {}
        self.handles: OrderedDict[str, IO[str]] = OrderedDict()
        for name, size in recorded.items():
            self._cut(out_dir / name, size)

    def _cut(self, path: Path, size: int) -> None:
        if not path.exists():
            if size:
                raise LogmartError(
                    f"{path} is gone, but the checkpoint says it held {size} bytes: export "
                    "into a new folder, or restore the file"
                )
            return
        actual = path.stat().st_size
        if actual < size:
            raise LogmartError(
                f"{path} has {actual} bytes, less than the {size} the checkpoint recorded: it "
                "was changed outside logmart; export into a new folder, or restore the file"
            )
        if actual > size:
            with path.open("r+b") as handle:
                handle.truncate(size)

    def write(self, message: Message) -> None:
        name = f"{message.topic}.jsonl"
        handle = self.handles.get(name)
        if handle is None:
            if name not in self.sizes:
                self._cut(self.out_dir / name, 0)
                self.sizes[name] = 0
            if len(self.handles) >= OPEN_FILES:
                self.handles.popitem(last=False)[1].close()
            handle = (self.out_dir / name).open("a", encoding="utf-8")
            self.handles[name] = handle
        else:
            self.handles.move_to_end(name)
        record = {"key": message.key, "value": message.value}
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.counts[name] = self.counts.get(name, 0) + 1

    def close(self) -> dict[str, int]:
        """Flush and close every file; the sizes of the stream's files now."""
        while self.handles:
            _, handle = self.handles.popitem()
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        for name in self.counts:
            self.sizes[name] = (self.out_dir / name).stat().st_size
        return dict(self.sizes)


def write_stream(
    out_dir: Path, rows: Iterable[Mapping[str, Any]], start: StreamCheckpoint, options: Options
) -> tuple[StreamCheckpoint, list[Written]]:
    """Write one stream's messages after `start` into `out_dir`; the checkpoint to keep and
    the files written (none when there was nothing new: then the files are as they were)."""
    progress = StreamCheckpoint(**asdict(start))
    progress.options = options.recorded()
    files = TopicFiles(out_dir, start.files)
    try:
        for message in stream_messages(rows, progress, options):
            files.write(message)
    finally:
        sizes = files.close()
    if not files.counts:
        return start, []
    progress.files = sizes
    progress.exported_at = dt.datetime.fromtimestamp(options.exported_ms / 1000, dt.UTC).isoformat()
    written = [Written(out_dir / name, files.counts[name]) for name in sorted(files.counts)]
    return progress, written


# ---------------------------------------------------------------------------------------------
# Spark: which streams, which rows


@dataclass(frozen=True)
class Selection:
    """Which log streams to export: a source, a stream, or the stream of a capture."""

    source_system: str | None = None
    log_stream: str | None = None
    capture: str | None = None
    from_position: str | None = None

    def stream(self) -> str | None:
        """The stream asked for: --stream, else the first folder of --capture."""
        from_capture = self.capture.split("/")[0] if self.capture is not None else None
        if self.log_stream is not None and from_capture is not None:
            if from_capture != self.log_stream:
                raise LogmartError(
                    f"capture {self.capture!r} is part of stream {from_capture!r}, not "
                    f"{self.log_stream!r}: give --stream or --capture, not both"
                )
        return self.log_stream if self.log_stream is not None else from_capture


ROWS_QUERY = """
select
    source_system, log_stream, capture, table_schema, table_name, op, change_id,
    transaction_id, change_seq, commit_position, log_position,
    -- the wall-clock time as the log gives it (session time zone UTC), whatever the time
    -- zone of this Python process: epoch_ms reads it in the source's zone
    cast(commit_ts as string) as commit_ts,
    map_entries(before_image) as before_image,
    map_entries(after_image) as after_image,
    key_columns, column_types,
    map_entries(before_unavailable) as before_unavailable,
    map_entries(after_unavailable) as after_unavailable
from marts.fct_changes
where disposition = 'committed' and commit_position is not null
    and source_system = {source} and log_stream = {stream} {after}
order by commit_position, transaction_id, change_seq
"""

COUNT_QUERY = """
select count(*) as changes
from marts.fct_changes
where disposition = 'committed' and commit_position is not null
    and source_system = {source} and log_stream = {stream} and commit_position <= {position}
"""


def _sql_string(text: str) -> str:
    from udfs.change_sql import sql_string

    return sql_string(text)


def streams(spark: Any, selection: Selection) -> list[tuple[str, str]]:
    """The (source_system, log_stream) pairs with committed changes that `selection` picks."""
    where = ""
    if selection.source_system is not None:
        where += f" and source_system = {_sql_string(selection.source_system)}"
    wanted = selection.stream()
    if wanted is not None:
        where += f" and log_stream = {_sql_string(wanted)}"
    found = [
        (row.source_system, row.log_stream)
        for row in spark.sql(
            "select distinct source_system, log_stream from marts.fct_changes "
            f"where disposition = 'committed' and commit_position is not null{where} "
            "order by source_system, log_stream"
        ).collect()
    ]
    if not found and where:
        known = ", ".join(
            stream_key(row.source_system, row.log_stream)
            for row in spark.sql(
                "select distinct source_system, log_stream from marts.fct_changes "
                "where disposition = 'committed' order by 1, 2"
            ).collect()
        )
        raise LogmartError(
            "no committed changes in marts.fct_changes for "
            + ", ".join(
                f"{name} {val!r}"
                for name, val in (("source", selection.source_system), ("stream", wanted))
                if val is not None
            )
            + f"; streams with committed changes (source/stream): {known or 'none'}"
        )
    return found


def start_of(
    spark: Any,
    selected: StreamCheckpoint | None,
    source_system: str,
    log_stream: str,
    selection: Selection,
    options: Options,
    out_dir: Path,
) -> StreamCheckpoint:
    """Where this run starts for one stream: its checkpoint (checked against the marts and
    the options), or --from-position, or the beginning."""
    if selected is not None:
        where = stream_key(source_system, log_stream)
        if selection.from_position is not None and (
            selection.from_position != selected.commit_position
        ):
            raise LogmartError(
                f"{out_dir} holds the export of {where} up to commit position "
                f"{selected.commit_position} (its {CHECKPOINT_FILE}); leave out --from-position "
                "to continue from there, or export into another folder"
            )
        if selected.options and selected.options != options.recorded():
            raise LogmartError(
                f"{out_dir} holds the export of {where} written with {selected.options}, not "
                f"{options.recorded()}: give the same options to continue it, or export into "
                "another folder"
            )
        if selected.commit_position is not None:
            counted = spark.sql(
                COUNT_QUERY.format(
                    source=_sql_string(source_system),
                    stream=_sql_string(log_stream),
                    position=_sql_string(selected.commit_position),
                )
            ).collect()[0]["changes"]
            if counted != selected.changes:
                raise LogmartError(
                    f"marts.fct_changes now has {counted} committed changes of {where} up to "
                    f"commit position {selected.commit_position}, but {selected.changes} were "
                    f"exported into {out_dir}: changes before the checkpoint arrived (a capture "
                    "added out of order, or the warehouse rebuilt from other files); export the "
                    "stream again into a new folder"
                )
        return selected
    start = StreamCheckpoint(source_system, log_stream)
    if selection.from_position is not None:
        start.commit_position = selection.from_position
        start.changes = spark.sql(
            COUNT_QUERY.format(
                source=_sql_string(source_system),
                stream=_sql_string(log_stream),
                position=_sql_string(selection.from_position),
            )
        ).collect()[0]["changes"]
    return start


def export(
    spark: Any,
    out_dir: Path,
    selection: Selection | None = None,
    tombstones: bool = False,
    truncates: str = "emit",
    time_zones: Mapping[str, str | None] | None = None,
) -> list[Written]:
    """Export the committed changes of every selected log stream that are not in `out_dir`
    yet (after its checkpoint, or after ``selection.from_position``), in commit order, and
    keep the checkpoint. Streams the rows (toLocalIterator): they need not fit in memory.
    Nothing new: nothing is written, the checkpoint stays as it was. ``time_zones``: the zone
    of each wall-clock source's times by system (:func:`wall_clock_time_zones`)."""
    selection = selection or Selection()
    if truncates not in TRUNCATES:
        raise LogmartError(f"truncates must be one of {', '.join(TRUNCATES)}, not {truncates!r}")
    zones = wall_clock_time_zones(time_zones)
    if selection.from_position is not None:
        selection = Selection(
            selection.source_system,
            selection.log_stream,
            selection.capture,
            check_position(selection.from_position, selection.source_system),
        )
    chosen = streams(spark, selection)
    if selection.from_position is not None and len(chosen) != 1:
        raise LogmartError(
            "--from-position needs one log stream, and "
            + (
                f"{len(chosen)} match ({', '.join(stream_key(*s) for s in chosen)})"
                if chosen
                else "none matches"
            )
            + ": give --source and --stream (or --capture)"
        )
    if selection.from_position is not None:
        check_position(selection.from_position, chosen[0][0])
    out_dir.mkdir(parents=True, exist_ok=True)
    checkpoint = read_checkpoint(out_dir)
    exported_ms = int(time.time() * 1000)
    written: list[Written] = []
    for source_system, log_stream in chosen:
        options = Options(
            tombstones, truncates, source_time_zone(source_system, zones), exported_ms
        )
        key = stream_key(source_system, log_stream)
        start = start_of(
            spark, checkpoint.get(key), source_system, log_stream, selection, options, out_dir
        )
        after = ""
        if start.commit_position is not None:
            after = f"and commit_position > {_sql_string(start.commit_position)}"
        rows = spark.sql(
            ROWS_QUERY.format(
                source=_sql_string(source_system), stream=_sql_string(log_stream), after=after
            )
        ).toLocalIterator()
        done, files = write_stream(out_dir, rows, start, options)
        if files:
            checkpoint[key] = done
            write_checkpoint(out_dir, checkpoint)
            written.extend(files)
    return written

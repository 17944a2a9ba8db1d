"""What is under the raw folder, before anything is decoded (``raw.files``, ``raw.captures``).

Every file of every source with its log stream, capture, kind, size, modification time and
content hash (SHA-256, read in 1 MiB chunks on the executors, so a multi-GB file never sits in
memory); which files are byte-for-byte copies of another (``duplicate_of``); and per capture a
fingerprint of everything its decoded rows depend on. The loader (``udfs.pipeline``) decodes a
file again only when its load key changes, and the incremental dbt models recompute a capture
only when its fingerprint changes (docs/architecture.md "Incremental builds").

Log streams: a capture folder directly under ``RAW/<source>/`` is a log of its own; captures
nested one level deeper, ``RAW/<source>/<stream>/<capture>/``, are successive pieces of one
database's log, the stream (its first folder). Transactions are resolved across the captures of
a stream, and a copy is only a copy of a file of the same stream. A stream's ``snapshots``
folder, ``RAW/<source>/<stream>/snapshots/``, holds base snapshots (kinds ``snapshot`` and
``snapshot_side``, read by ``udfs.snapshots``), not a capture.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession

from udfs.source_declaration import SNAPSHOT_KINDS
from udfs.sources import REGISTERED, by_system

HASH_CHUNK = 1 << 20

FILES_SCHEMA = (
    "source_system string, log_stream string, capture string, source_file string, "
    "file_kind string, size_bytes bigint, modified_ns bigint, content_hash string, "
    "duplicate_of string, load_key string, loaded_at timestamp"
)
CAPTURES_SCHEMA = (
    "source_system string, log_stream string, capture string, file_count bigint, "
    "size_bytes bigint, fingerprint string, code_version string, raw_version string"
)


def log_stream(capture: str) -> str:
    """The log stream of a capture: its first folder ('' for files right under the source)."""
    return capture.split("/", 1)[0]


@dataclass
class RawFile:
    """A file under the raw root and what the loader knows about it."""

    source_system: str
    capture: str
    source_file: str  # relative to the raw root, '/' separators
    file_kind: str
    size_bytes: int
    modified_ns: int
    path: Path
    content_hash: str | None = None
    duplicate_of: str | None = None
    load_key: str | None = None

    @property
    def log_stream(self) -> str:
        return log_stream(self.capture)

    @property
    def is_decoded_kind(self) -> bool:
        """Whether the loader reads this kind of file at all."""
        source = by_system(self.source_system)
        return self.file_kind in source.data_kinds | source.context_kinds and self.size_bytes > 0

    @property
    def is_context_kind(self) -> bool:
        """Whether it describes its capture (a catalog, a control file) rather than holds log
        records: the same bytes in another capture are that capture's own, not a copy."""
        return self.file_kind in by_system(self.source_system).context_kinds

    @property
    def loads(self) -> bool:
        """Whether its records go into the raw tables (a duplicate's do not)."""
        return self.is_decoded_kind and self.duplicate_of is None


def list_files(raw_root: Path) -> list[RawFile]:
    """Every file of every source under ``raw_root``, sorted by path (a listing: nothing is
    read but a few first bytes, to tell Log Master control files from data files)."""
    from udfs import snapshots

    found = []
    for source in REGISTERED:
        for f in source.discover(raw_root / source.folder, raw_root):
            stat = f.path.stat()
            kind, capture = f.kind, f.capture
            in_source = f.relative.split("/", 1)[1] if "/" in f.relative else f.relative
            snapshot_kind = snapshots.file_kind(in_source)
            if snapshot_kind:  # <stream>/snapshots/: base snapshots (udfs.snapshots), no log
                kind, capture = snapshot_kind, in_source.rsplit("/", 1)[0]
            found.append(
                RawFile(source.system, capture, f.relative, kind, f.size, stat.st_mtime_ns, f.path)
            )
    return sorted(found, key=lambda f: f.source_file)


# Files to hash that hold this many bytes together are hashed in this process: a Spark job
# and its Python workers cost more than reading a few megabytes (the demo's 1,618 records:
# 1.7 s as a job). Larger sets are hashed on the executors, where on a cluster the bytes are.
DRIVER_HASH_BYTES = 32 << 20


def hash_file(path: str) -> str:
    """SHA-256 of a file's bytes, read in chunks (memory stays flat whatever its size)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _hash_item(item: tuple[str, str]) -> tuple[str, str]:
    return item[0], hash_file(item[1])


def fill_content_hashes(
    spark: SparkSession, files: list[RawFile], known: Mapping[str, tuple[int, int, str]]
) -> int:
    """Set each file's content hash; ``known`` maps a path to (size, mtime ns, hash) from the
    last build, reused when size and modification time are unchanged. The others are hashed
    here when they are small together (:data:`DRIVER_HASH_BYTES`), else on the executors (one
    task per few files). Returns how many files were read."""
    todo = []
    for f in files:
        size, modified, digest = known.get(f.source_file, (None, None, None))
        if size == f.size_bytes and modified == f.modified_ns and digest:
            f.content_hash = digest
        else:
            todo.append((f.source_file, str(f.path)))
    if todo:
        sizes = {f.source_file: f.size_bytes for f in files}
        if sum(sizes[name] for name, _ in todo) <= DRIVER_HASH_BYTES:
            hashes = dict(map(_hash_item, todo))
        else:
            slices = min(len(todo), max(1, spark.sparkContext.defaultParallelism) * 4)
            hashes = dict(spark.sparkContext.parallelize(todo, slices).map(_hash_item).collect())
        for f in files:
            if f.source_file in hashes:
                f.content_hash = hashes[f.source_file]
    return len(todo)


def mark_duplicates(files: Iterable[RawFile]) -> None:
    """Set ``duplicate_of`` on every file whose bytes equal another's of the same source, log
    stream and kind (for a capture's catalog or control file: of the same capture): the
    lexically first path of such a group is the one decoded, the rest point at it. Depends only
    on what is in the folder, so a full rebuild and an incremental one agree."""
    groups: dict[tuple, list[RawFile]] = {}
    for f in files:
        f.duplicate_of = None
        if not f.is_decoded_kind:
            continue
        scope = f.capture if f.is_context_kind else None
        key = (f.source_system, f.log_stream, f.file_kind, scope, f.content_hash)
        groups.setdefault(key, []).append(f)
    for group in groups.values():
        first, *copies = sorted(group, key=lambda f: f.source_file)
        for copy in copies:
            copy.duplicate_of = first.source_file


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def fill_load_keys(
    files: list[RawFile], settings: Mapping[str, Mapping[str, str]], raw_version: str
) -> None:
    """Set the load key of every file the loader decodes: what its raw rows depend on (its
    bytes, the source's settings, the decoders' code and, for a data file of a source that
    reads its data with a context file (``Source.data_read_with``: Log Master's control file
    gives the record header layout and code page), its capture's first such file)."""
    first_context: dict[tuple[str, str], str] = {}
    for f in files:  # sorted by path: the first context file of each capture, as the reader
        if f.file_kind in by_system(f.source_system).data_read_with and f.size_bytes:
            first_context.setdefault((f.source_system, f.capture), f.content_hash or "")
    for f in files:
        if not f.loads:
            f.load_key = None
            continue
        is_data = f.file_kind in by_system(f.source_system).data_kinds
        context = first_context.get((f.source_system, f.capture)) if is_data else None
        f.load_key = _digest(
            [f.content_hash, f.file_kind, dict(settings.get(f.source_system, {})), context,
             raw_version]
        )  # fmt: skip


def capture_rows(
    files: list[RawFile], settings: Mapping[str, Mapping[str, str]], code_version: str
) -> list[tuple]:
    """One row per capture: its files and the fingerprint of what its decoded rows depend on
    (the files decoded from it, the source's settings, logmart's code)."""
    captures: dict[tuple[str, str], list[RawFile]] = {}
    for f in files:
        if f.file_kind in SNAPSHOT_KINDS:  # a stream's snapshots folder is not a capture
            continue
        captures.setdefault((f.source_system, f.capture), []).append(f)
    rows = []
    for (system, capture), members in sorted(captures.items()):
        loaded = sorted((f.source_file, f.file_kind, f.content_hash) for f in members if f.loads)
        fingerprint = _digest(
            [system, capture, loaded, dict(settings.get(system, {})), code_version]
        )
        rows.append((system, log_stream(capture), capture, len(members),
                     sum(f.size_bytes for f in members), fingerprint, code_version))  # fmt: skip
    return rows


def tree_version(root: Path, patterns: Iterable[str]) -> str:
    """A hash of the files matching ``patterns`` under ``root`` (names and bytes): logmart's
    code as it decodes and models the data, so that an upgrade recomputes what it changes."""
    digest = hashlib.sha256()
    paths = sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})
    for path in paths:
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()

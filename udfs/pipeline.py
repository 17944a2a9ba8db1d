"""The build: raw files -> raw tables (Spark data sources, on executors) -> ``dbt build``.

Each source contributes a :class:`RawTable` list: a Spark data source read that frames and
decodes its files, written as a Parquet table in schema ``raw``, partitioned by file. A source
whose folder is absent still gets its (empty) tables, so the dbt models always have their
sources. Builds are incremental: only new or changed files are decoded, and a copy of a file
is listed but not decoded again (:mod:`udfs.raw_files`; docs/architecture.md).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession

from udfs import sources as registry
from udfs.errors import LogmartError
from udfs.raw_files import (
    CAPTURES_SCHEMA,
    FILES_SCHEMA,
    RawFile,
    capture_rows,
    fill_content_hashes,
    fill_load_keys,
    list_files,
    mark_duplicates,
    tree_version,
)
from udfs.session import save_catalog
from udfs.snapshots import DATA_KIND as SNAPSHOT_KIND
from udfs.snapshots import SIDE_KIND as SNAPSHOT_SIDE_KIND
from udfs.snapshots import load_key as snapshot_key
from udfs.snapshots import load_snapshots
from udfs.source_declaration import Source

RAW_SCHEMA = "raw"
PARTITION_COLUMN = "source_file"  # raw tables hold one partition per file

# The capture settings a build decodes with, per source system: option -> value, e.g.
# {"db2luw": {"framing": "lsn", "byteorder": "big"}}; an option not given keeps its default
# (the raw table's option). `capture_settings` makes them from the environment and the CLI.
CaptureSettings = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class RawTable:
    """One raw table: which data source reads it and with what options (made from a source's
    declaration, udfs/<folder>/registration.py)."""

    name: str
    data_source: str
    folder: str  # under the raw root
    options: dict[str, str] = field(default_factory=dict)
    # Options a user sets: option -> (environment variable, accepted values, default). The
    # CLI's flags (e.g. `logmart build --db2luw-byteorder big`) and the variables reach the
    # build as its `settings` argument (`capture_settings`).
    settings: dict[str, tuple[str, tuple[str, ...], str]] = field(default_factory=dict)
    # The file kinds (raw.files.file_kind) whose records this table holds.
    kinds: frozenset[str] = frozenset()
    source_system: str = ""

    def resolved_options(self, settings: Mapping[str, str] | None = None) -> dict[str, str]:
        """The options with ``settings`` (this table's source's, option -> value) applied over
        each setting's default; settings of other tables of the source are ignored, a bad value
        is a LogmartError."""
        options = dict(self.options)
        for option, (_, accepted, default) in self.settings.items():
            value = (settings or {}).get(option)
            name = f"{self.source_system} {option}"
            options[option] = _checked(value, accepted, name, option) if value else default
        return options

    def source_class(self) -> type:
        """The Spark Python data source class named ``data_source``."""
        return next(s for s in data_sources() if s.name() == self.data_source)

    def read(
        self, spark: SparkSession, raw_root: Path, settings: CaptureSettings | None = None
    ) -> DataFrame:
        reader = spark.read.format(self.data_source)
        reader = reader.option("path", str(raw_root / self.folder))
        reader = reader.option("raw_root", str(raw_root))
        options = self.resolved_options((settings or {}).get(self.source_system))
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load()


def _raw_tables(sources: Sequence[Source]) -> list[RawTable]:
    """The raw tables every source declares, with their data source, folder and settings."""
    tables = []
    for source in sources:
        for table in source.raw_tables:
            settings = {
                name: (s.variable, s.allowed, s.default)
                for name in table.settings
                for s in [source.setting(name)]
            }
            tables.append(
                RawTable(table.name, source.data_source_name, source.folder,
                         dict(table.options), settings, table.kinds, source.system)
            )  # fmt: skip
    return tables


RAW_TABLES = _raw_tables(registry.REGISTERED)


def _checked(value: str, accepted: Sequence[str], name: str, option: str) -> str:
    """``value`` if ``accepted``, else a LogmartError naming it as ``name`` (the setting or its
    environment variable)."""
    if value not in accepted:
        raise LogmartError(
            f"{name}={value} is not one of {', '.join(accepted)}; "
            f"set it to the {option} your capture files were written with"
        )
    return value


def capture_settings(
    given: CaptureSettings | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, dict[str, str]]:
    """The capture settings (:data:`CaptureSettings`) of a build: each setting's environment
    variable in ``environ`` (e.g. ``LOGMART_DB2LUW_FRAMING``; none when ``environ`` is None),
    then ``given`` (e.g. the CLI's flags; a None value is not given) over them. A value not
    accepted, or a setting no source has, is a LogmartError naming it."""
    declared = {
        (source.system, setting.name): (setting.variable, setting.allowed)
        for source in registry.REGISTERED
        for setting in source.settings
    }
    for system, options in (given or {}).items():
        for option in options:
            if (system, option) not in declared:
                known = ", ".join(f"{s} {o}" for s, o in declared)
                raise LogmartError(f"{system} has no setting {option}; the settings: {known}")
    settings: dict[str, dict[str, str]] = {}
    for (system, option), (variable, accepted) in declared.items():
        value = (given or {}).get(system, {}).get(option)
        if value:
            value = _checked(value, accepted, f"{system} {option}", option)
        elif environ is not None and environ.get(variable):
            value = _checked(environ[variable], accepted, variable, option)
        if value:
            settings.setdefault(system, {})[option] = value
    return settings


def data_sources() -> list[type]:
    """Every registered source's Spark Python data source class."""
    return [source.data_source for source in registry.REGISTERED]


def register_udfs(spark: SparkSession) -> None:
    """Register logmart's data sources and SQL functions on ``spark`` (idempotent)."""
    from udfs.spark_udfs import register_functions

    for source in data_sources():
        spark.dataSource.register(source)
    register_functions(spark)


def _prepare_dbt_run(spark: SparkSession) -> None:
    """Register logmart's functions and import dbt (about 2 s of a small build's start)."""
    register_udfs(spark)
    import dbt.cli.main  # noqa: F401  (udfs.dbt_runner imports it when dbt runs)


# --- the raw load -------------------------------------------------------------------------------


@dataclass
class LoadReport:
    """What a raw load did: files decoded, kept from the last build, dropped, copies."""

    mode: str  # 'full' (every raw table rewritten) | 'incremental'
    decoded: list[str]
    unchanged: int
    removed: list[str]
    duplicates: dict[str, str]  # copy -> the file decoded in its place
    hashed: int  # files whose bytes were read to hash them
    dbt_full_refresh: bool  # logmart's code changed since the last build
    listing: str = ""  # digest of raw.files and raw.captures as written (and the code version)
    sources: tuple[str, ...] = ()  # source folders with at least one file under the raw root
    snapshots: bool = True  # a snapshot or side file is under the raw root (docs/snapshots.md)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "files_decoded": len(self.decoded),
            "files_unchanged": self.unchanged,
            "files_removed": len(self.removed),
            "duplicates": len(self.duplicates),
            "files_hashed": self.hashed,
        }


def source_settings(settings: CaptureSettings | None = None) -> dict[str, dict[str, str]]:
    """Per source system, the options its files are decoded with (``settings`` applied)."""
    resolved: dict[str, dict[str, str]] = {}
    for table in RAW_TABLES:
        options = resolved.setdefault(table.source_system, {})
        chosen = table.resolved_options((settings or {}).get(table.source_system))
        options.update((k, v) for k, v in chosen.items() if k != "records")
    return resolved


_PACKAGE_DIR = Path(__file__).resolve().parent
# The modules the raw load runs besides the data sources: the listing (which file is what, and
# of which capture) and the writer of the raw tables.
LOAD_MODULES = ("udfs.raw_files", "udfs.raw_writer")
# The module registering the SQL functions the models call (row images, catalogs); each
# source's own functions module (named in its registration) is added to it.
SQL_FUNCTION_MODULES = ("udfs.spark_udfs",)


def decoding_files(package_dir: Path | None = None) -> list[Path]:
    """The files of the udfs package that decode the raw files: each data source's module,
    :data:`LOAD_MODULES`, and every udfs module they import (transitively)."""
    from udfs.code_versions import imported_files

    roots = [source.__module__ for source in data_sources()] + list(LOAD_MODULES)
    return imported_files(package_dir or _PACKAGE_DIR, roots)


def sql_function_files(package_dir: Path | None = None) -> list[Path]:
    """The files of the udfs package that the models' SQL functions run."""
    from udfs.code_versions import imported_files

    modules = [s.sql_function_module for s in registry.REGISTERED if s.sql_function_module]
    return imported_files(package_dir or _PACKAGE_DIR, [*SQL_FUNCTION_MODULES, *modules])


def _raw_tables_declared() -> str:
    """The raw tables as declared (names, data sources, options, settings, file kinds), in a
    stable text: changing which files a table takes, or its options, is a decoder change."""
    return json.dumps(
        [
            [t.name, t.data_source, t.folder, t.options, t.settings, sorted(t.kinds)]
            for t in RAW_TABLES
        ],
        sort_keys=True,
    )


def raw_version(package_dir: Path | None = None) -> str:
    """What decodes the raw files (:func:`decoding_files` and the raw tables' declarations):
    when it changes, every file is decoded again. Nothing else of logmart is in it: the CLI,
    the report, the exports, the server and the generators (package ``logmart_generators``)
    can change without a new decode (docs/architecture.md, "Versions")."""
    from udfs.code_versions import files_version

    package_dir = package_dir or _PACKAGE_DIR
    decoders = files_version(package_dir, decoding_files(package_dir))
    return hashlib.sha256(f"{decoders}:{_raw_tables_declared()}".encode()).hexdigest()


def code_version(package_dir: Path | None = None) -> str:
    """The decoders, the SQL functions (:func:`sql_function_files`) and the dbt project
    (models, macros, seeds): when it changes, the incremental models are rebuilt from scratch
    (``dbt build --full-refresh``)."""
    from udfs.code_versions import files_version
    from udfs.dbt_runner import project_dir

    package_dir = package_dir or _PACKAGE_DIR
    functions = files_version(package_dir, sql_function_files(package_dir))
    project = tree_version(
        project_dir(), ["models/**/*", "macros/**/*", "seeds/**/*", "dbt_project.yml"]
    )
    parts = f"{raw_version(package_dir)}:{functions}:{project}"
    return hashlib.sha256(parts.encode()).hexdigest()


def _table(name: str) -> str:
    return f"{RAW_SCHEMA}.{name}"


def _previous_state(spark: SparkSession) -> tuple[dict[str, Row], Row | None]:
    """raw.files of the last build by path, and one raw.captures row (its code versions)."""
    files: dict[str, Row] = {}
    if spark.catalog.tableExists(_table("files")):
        columns = set(spark.table(_table("files")).columns)
        if {"content_hash", "load_key", "loaded_at", "modified_ns"} <= columns:
            files = {row.source_file: row for row in spark.table(_table("files")).collect()}
    version = None
    if spark.catalog.tableExists(_table("captures")):
        version = spark.table(_table("captures")).select("raw_version", "code_version").first()
    return files, version


def partitioned_by_file(spark: SparkSession) -> set[str]:
    """The raw tables partitioned by file alone: one catalog query for the whole schema
    (`show table extended`: 0.4-1.0 s), not a column listing per table (2.2 s for ten)."""
    expected = f"Partition Columns: [`{PARTITION_COLUMN}`]"
    rows = spark.sql(f"show table extended in {RAW_SCHEMA} like '*'").collect()
    return {
        row.tableName
        for row in rows
        if not row.isTemporary and expected in row.information.splitlines()
    }


def _mirror(folder: Path, files: list[RawFile]) -> Path:
    """A folder of symbolic links laid out as the raw root, holding only ``files``: what a
    data source reads when only some files are to be decoded (it lists a folder)."""
    if folder.exists():
        shutil.rmtree(folder)
    for f in files:
        link = folder / f.source_file
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(f.path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _with_context(files: list[RawFile], loads: list[RawFile]) -> list[RawFile]:
    """``loads`` and what reading them needs: a data file of a source that reads its data with
    a context file (``Source.data_read_with``: a Log Master data file is decoded with its
    extract's first control file) brings every such file of its capture along."""

    def read_with(f: RawFile) -> frozenset[str]:
        return registry.by_system(f.source_system).data_read_with

    captures = {
        (f.source_system, f.capture)
        for f in loads
        if read_with(f) and f.file_kind in registry.by_system(f.source_system).data_kinds
    }
    context = [
        f for f in files
        if f.file_kind in read_with(f) and (f.source_system, f.capture) in captures
    ]  # fmt: skip
    return sorted({f.source_file: f for f in [*loads, *context]}.values(), key=_path)


def _path(f: RawFile) -> str:
    return f.source_file


def _drop_partitions(spark: SparkSession, table: RawTable, paths: list[str]) -> None:
    for start in range(0, len(paths), 200):
        specs = ", ".join(
            f"partition ({PARTITION_COLUMN} = {_literal(path)})"
            for path in paths[start : start + 200]
        )
        spark.sql(f"alter table {_table(table.name)} drop if exists {specs}")


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _write_raw(
    spark: SparkSession,
    table: RawTable,
    root: Path,
    wanted: list[str],
    full: bool,
    settings: CaptureSettings | None,
) -> None:
    """Decode ``wanted`` files (read from ``root``) into ``table``: a new table when ``full``,
    else new partitions. The executors write the Parquet files (udfs/raw_writer.py)."""
    from udfs.raw_writer import write_raw_table

    options = {
        "path": str(root / table.folder),
        "raw_root": str(root),
        **table.resolved_options((settings or {}).get(table.source_system)),
    }
    write_raw_table(spark, table.source_class(), options, _table(table.name), wanted, full)


def _write_listing(spark: SparkSession, name: str, rows: list, schema: str) -> None:
    frame = spark.createDataFrame(rows, schema).coalesce(1)
    frame.write.mode("overwrite").format("parquet").saveAsTable(_table(name))


def _listed_already(
    spark: SparkSession, previous: dict[str, Row], files: list[tuple], captures: list[tuple]
) -> bool:
    """Whether raw.files and raw.captures already hold these rows (files compared without
    loaded_at, which reads back without its zone; nothing was loaded, so it is kept anyway)."""
    listed = sorted(tuple(row)[:-1] for row in previous.values())
    if not listed or listed != sorted(row[:-1] for row in files):
        return False
    stored = [tuple(row) for row in spark.table(_table("captures")).collect()]
    return sorted(stored) == sorted(captures)


def _file_row(f: RawFile, loaded_at: dt.datetime | None) -> tuple:
    return (f.source_system, f.log_stream, f.capture, f.source_file, f.file_kind, f.size_bytes,
            f.modified_ns, f.content_hash, f.duplicate_of, f.load_key, loaded_at)  # fmt: skip


def load_raw(
    spark: SparkSession,
    raw_root: Path,
    scratch: Path | None = None,
    full: bool = False,
    settings: CaptureSettings | None = None,
) -> LoadReport:
    """Decode the files under ``raw_root`` that are new or changed since the last build into
    the ``raw`` tables (partitioned by file), drop the rows of files that are gone, and list
    every file (``raw.files``) and capture (``raw.captures``). ``full`` decodes everything.

    A file is decoded again when its load key changes (bytes, settings, decoders, for a Log
    Master data file its extract's control file); a copy of another file of its log stream is
    listed with ``duplicate_of`` and not decoded. ``scratch`` is a folder for the symbolic
    links the data sources read (on a cluster, on the shared filesystem). ``settings`` are
    the capture settings (:func:`capture_settings`; None: every option's default).
    """
    raw_root = Path(raw_root).expanduser().resolve()
    if not spark.catalog.databaseExists(RAW_SCHEMA):  # (Hive logs an error for "if not exists")
        spark.sql(f"create database {RAW_SCHEMA}")
    previous, versions = _previous_state(spark)
    decoding = source_settings(settings)
    decoders, code = raw_version(), code_version()
    files = list_files(raw_root)
    known = {p: (r.size_bytes, r.modified_ns, r.content_hash) for p, r in previous.items()}
    hashed = fill_content_hashes(spark, files, known)
    mark_duplicates(files)
    fill_load_keys(files, decoding, decoders)

    full = (
        full
        or versions is None
        or versions.raw_version != decoders
        or not {t.name for t in RAW_TABLES} <= partitioned_by_file(spark)
    )
    loading = [f for f in files if f.loads]
    if not full:
        loading = [
            f for f in loading
            if f.source_file not in previous or previous[f.source_file].load_key != f.load_key
        ]  # fmt: skip
    reloaded = {f.source_file for f in loading}
    staying = {f.source_file for f in files if f.loads} - reloaded
    removed = sorted(p for p, r in previous.items() if r.loaded_at and p not in staying)
    nothing_to_load = not full and not loading and not removed
    if not full and not nothing_to_load:
        # What stays valid, first: if the load breaks off, the next build redoes the rest.
        kept = [r for p, r in previous.items() if p in staying or not r.loaded_at]
        _write_listing(spark, "files", kept, FILES_SCHEMA)
        save_catalog(spark)  # a warehouse whose catalog is a file: this point saved too

    scratch_dir = Path(scratch) if scratch else Path(tempfile.mkdtemp(prefix="logmart-load-"))

    def load_system(system: str) -> None:
        tables = [t for t in RAW_TABLES if t.source_system == system]
        loads = [f for f in loading if f.source_system == system]
        if not full:
            gone = [p for p in removed if previous[p].source_system == system]
            for table in tables:
                _drop_partitions(spark, table, gone)
        if not loads and not full:
            return
        root = _mirror(scratch_dir / system, _with_context(files, loads))
        for table in tables:
            wanted = [f.source_file for f in loads if f.file_kind in table.kinds]
            if wanted or full:
                _write_raw(spark, table, root, wanted, full, settings)

    try:
        # The sources' tables side by side: a small table's write is mostly the driver's and
        # the metastore's round trips, which leave the cores idle (docs/performance.md)
        systems = [source.system for source in registry.REGISTERED]
        with ThreadPoolExecutor(len(systems), thread_name_prefix="logmart-load") as pool:
            for _ in pool.map(load_system, systems):  # raises the first source's error
                pass
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
        # the raw tables' partitions as they are on disk, saved before the listing says the
        # files are loaded (udfs/catalog_store.py: the catalog is saved at such points only)
        save_catalog(spark)

    now = dt.datetime.now(dt.UTC)
    rows = []
    for f in files:
        before = previous.get(f.source_file)
        if f.source_file in reloaded:
            loaded_at = now
        elif f.loads and before is not None:
            loaded_at = before.loaded_at
        else:
            loaded_at = None
        rows.append(_file_row(f, loaded_at))
    captures = [(*row, decoders) for row in capture_rows(files, decoding, code)]
    # An unchanged folder rewrites no listing (three table writes: ~3 s of a re-run)
    if not (nothing_to_load and _listed_already(spark, previous, rows, captures)):
        _write_listing(spark, "files", rows, FILES_SCHEMA)
        _write_listing(spark, "captures", captures, CAPTURES_SCHEMA)
    # base snapshots: read again only when a snapshot or side file changed (udfs.snapshots)
    load_snapshots(spark, files, RAW_SCHEMA)
    save_catalog(spark)  # the load as a whole, before dbt starts
    # what the models read of the listing (loaded_at aside: it reads back without its zone)
    listed = [(*_file_row(f, None)[:-1], f.loads) for f in files]
    listing = hashlib.sha256(repr((listed, captures, snapshot_key(files))).encode()).hexdigest()
    return LoadReport(
        mode="full" if full else "incremental",
        decoded=sorted(reloaded),
        unchanged=len(staying),
        removed=[p for p in removed if p not in reloaded],
        duplicates={f.source_file: f.duplicate_of for f in files if f.duplicate_of},
        hashed=hashed,
        dbt_full_refresh=versions is None or versions.code_version != code,
        listing=listing,
        sources=tuple(
            source.folder
            for source in registry.REGISTERED
            if any(f.source_system == source.system for f in files)
        ),
        snapshots=any(f.file_kind in (SNAPSHOT_KIND, SNAPSHOT_SIDE_KIND) for f in files),
    )


# What `logmart build` checks (selectors.yml): 'data' the checks of the user's logs (records
# reconcile, quarantine, keys of the marts), 'all' every dbt test (logmart's own unit tests and
# the tests of its SQL's invariants too: the project's test suite), 'none' no test at all.
CHECKS = {
    "data": ("--selector", "user_build"),
    "all": (),
    "none": ("--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"),
}
# dbt options that choose nodes: when a caller gives one, the `checks` selection is not added
# (dbt refuses --selector beside --select/--exclude).
_SELECTION_OPTIONS = frozenset({
    "-s", "--select", "-m", "--models", "--exclude", "--selector", "--resource-type",
    "--resource-types", "--exclude-resource-type", "--exclude-resource-types",
})  # fmt: skip


def dbt_build_args(checks: str, dbt_args: Sequence[str] = (), full_refresh: bool = False) -> list:
    """The `dbt build` arguments of a build: the `checks` selection unless ``dbt_args`` choose
    nodes themselves, then ``dbt_args``."""
    if checks not in CHECKS:
        raise LogmartError(f"checks={checks} is not one of {', '.join(CHECKS)}")
    chooses = any(arg.split("=", 1)[0] in _SELECTION_OPTIONS for arg in dbt_args)
    args = ["build", *(() if chooses else CHECKS[checks]), *dbt_args]
    if full_refresh and "--full-refresh" not in args:
        args.append("--full-refresh")
    return args


def with_sources_var(args: list[str], sources: Sequence[str]) -> list[str]:
    """``args`` with the var ``logmart_sources``: the source folders whose models are enabled
    (macros/sources.sql; every source when none has files, so the marts still have their
    columns), merged under the caller's ``--vars``, if any. The rest of the registry reaches
    dbt on every command (``udfs.dbt_runner.dbt_args``)."""
    from udfs.dbt_runner import with_vars

    return with_vars(args, {"logmart_sources": list(sources) or registry.folders()})


# An option and its value that keep a `dbt build` from running unit tests: the user's checks
# (the selector of checks="data") or the resource type excluded.
_NO_UNIT_TESTS = frozenset({
    CHECKS["data"],
    ("--exclude-resource-type", "unit_test"),
    ("--exclude-resource-types", "unit_test"),
})  # fmt: skip


def runs_no_unit_test(args: Sequence[str]) -> bool:
    """Whether `dbt build` with ``args`` runs no unit test (``_NO_UNIT_TESTS``, as two
    arguments or as ``--option=value``)."""
    options = [*pairwise(args), *(tuple(a.split("=", 1)) for a in args if "=" in a)]
    return any(option_value in _NO_UNIT_TESTS for option_value in options)


def with_snapshots_var(args: list[str], snapshots: bool) -> list[str]:
    """``args`` (a `dbt build`'s) with the var ``logmart_snapshots`` false when the raw folder
    has no base snapshot (``snapshots``) and the build runs no unit test: fct_row_history then
    does not wait for int_logmart_snapshots_resolved, which waits for the transactions and
    table versions (macros/sources.sql, logmart_has_snapshots). fct_row_history's unit tests
    give snapshots, so a build that may run them keeps the edge; a caller's own
    ``logmart_snapshots`` in ``--vars`` wins."""
    from udfs.dbt_runner import with_vars

    if snapshots or not runs_no_unit_test(args):
        return args
    return with_vars(args, {"logmart_snapshots": False})


def drop_absent_sources(spark: SparkSession, sources: Sequence[str]) -> list[str]:
    """Drop the staging and intermediate relations of sources not in ``sources`` (left by an
    earlier build that had their files): their models are disabled now, and a stale table
    must not look current. Returns the relations dropped."""
    absent = [folder for folder in registry.folders() if sources and folder not in sources]
    dropped = []
    for schema, prefix in (("staging", "stg_{}__"), ("intermediate", "int_{}_")):
        if not absent or not spark.catalog.databaseExists(schema):
            continue
        for table in spark.catalog.listTables(schema):
            if table.isTemporary or not any(
                table.name.startswith(prefix.format(folder)) for folder in absent
            ):
                continue
            kind = "view" if table.tableType == "VIEW" else "table"
            spark.sql(f"drop {kind} if exists {schema}.{table.name}")
            dropped.append(f"{schema}.{table.name}")
    return dropped


def build(
    spark: SparkSession,
    raw_root: Path,
    warehouse: Path,
    target: str = "local",
    full_refresh: bool = False,
    dbt_args: Sequence[str] = (),
    checks: str = "data",
    settings: CaptureSettings | None = None,
    dbt_output: str | None = None,
) -> dict:
    """Load the raw tables (new and changed files only), run ``dbt build`` (incremental
    models recompute only changed captures), and return the summary the CLI prints.
    ``full_refresh`` decodes every file again and rebuilds every model from scratch;
    ``dbt_args`` are more ``dbt build`` arguments (e.g. ``--exclude-resource-type test``);
    ``checks`` which dbt tests run (:data:`CHECKS`); ``settings`` the capture settings
    (:data:`CaptureSettings`; None reads them from the environment variables, once, here:
    ``capture_settings(environ=os.environ)``); ``dbt_output`` what dbt prints
    (``dbt_runner.run_dbt``'s ``output``). When the raw folder, logmart's code and
    the arguments are those of the last successful build, dbt is not run again: the marts are
    current (``summary["dbt"] == "current"``)."""
    from udfs import last_build
    from udfs.dbt_runner import run_dbt
    from udfs.typed import sync_views

    warehouse = Path(warehouse)
    timings: dict[str, Any] = {}
    started = time.monotonic()
    if settings is None:
        settings = capture_settings(environ=os.environ)
    with ThreadPoolExecutor(1, thread_name_prefix="logmart-prepare") as beside:
        # what only dbt's run needs, beside the raw load (which mostly waits on the JVM)
        prepared = beside.submit(_prepare_dbt_run, spark)
        report = load_raw(spark, raw_root, warehouse / "loading", full_refresh, settings)
        prepared.result()
    timings["raw_load_s"] = round(time.monotonic() - started, 2)
    args = dbt_build_args(checks, dbt_args, full_refresh or report.dbt_full_refresh)
    args = with_sources_var(args, report.sources)
    args = with_snapshots_var(args, report.snapshots)
    key = last_build.build_key(report.listing, args, target)
    unchanged = report.mode == "incremental" and not report.decoded and not report.removed
    dbt_started = time.monotonic()
    if unchanged and last_build.is_current(warehouse, key):
        dbt_state = "current"
    else:
        last_build.clear(warehouse)
        drop_absent_sources(spark, report.sources)
        if not run_dbt(spark, args, warehouse, target, output=dbt_output):
            raise LogmartError(
                f"dbt build failed; see {warehouse / 'dbt' / 'logs' / 'dbt.log'} and rerun "
                "`logmart dbt build` after fixing the cause"
            )
        dbt_state = "built"
    timings["dbt_s"] = round(time.monotonic() - dbt_started, 2)
    typed_started = time.monotonic()
    typed = sync_views(spark)  # views over the marts: cheap, and a no-op when nothing moved
    save_catalog(spark)  # the build's tables, kept even if this process dies next
    timings["typed_s"] = round(time.monotonic() - typed_started, 2)
    summary_started = time.monotonic()
    result = {**summary(spark), "load": report.as_dict(), "dbt": dbt_state}
    result["typed_relations"] = typed.as_dict()
    timings["summary_s"] = round(time.monotonic() - summary_started, 2)
    if dbt_state == "built":
        layers = last_build.dbt_layer_seconds(warehouse / "dbt" / "target" / "run_results.json")
        last_build.write(warehouse, key, {**timings, "dbt_layers": layers,
                                          "load": report.as_dict()})  # fmt: skip
    return {**result, "timings": timings}


def summary(spark: SparkSession) -> dict[str, Any]:
    """Records read/decoded/quarantined per source, changes/transactions per table."""
    sources = [
        row.asDict()
        for row in spark.sql(
            "select source_system, sum(records_read) as records_read, "
            "sum(records_decoded) as records_decoded, "
            "sum(records_quarantined) as records_quarantined "
            "from marts.reconciliation group by source_system order by source_system"
        ).collect()
    ]
    tables = [
        row.asDict()
        for row in spark.sql(
            "select source_system, table_schema, table_name, count(*) as changes, "
            "count(distinct transaction_id) as transactions from marts.fct_changes "
            "group by source_system, table_schema, table_name "
            "order by source_system, table_schema, table_name"
        ).collect()
    ]
    return {"sources": sources, "tables": tables}

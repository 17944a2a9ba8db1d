"""The `logmart` command.

    logmart build --raw DIR [--warehouse DIR] [--master URL] [--strict]
        [--watch SECONDS [--watch-builds N]]
    logmart dbt [--warehouse DIR] [--master URL] <dbt args…>
    logmart query [--warehouse DIR] [--format table|csv|json] "SQL"
    logmart generate {db2zos,db2luw,soliddb} --out DIR [--transactions N] [--seed N]
    logmart demo [--raw DIR] [--warehouse DIR]
    logmart sql {undo,redo} (--transaction ID | [--since TS] [--until TS]
        [--from-position P] [--to-position P]) [--table SCHEMA.TABLE]… [--authid A] [--plan P]
        [--connection C] [--operation OP]… [--exclude-transaction ID]… [--include-generated]
        [--force]
        [--source S] [--stream S | --capture C] [--warehouse DIR]
    logmart asof --table SCHEMA.TABLE (--position P | --ts TS) [--source S]
        [--stream S | --capture C] [--format table|csv|json] [--warehouse DIR]
    logmart changes --table SCHEMA.TABLE --from-position P --to-position Q [--net]
        [--source S] [--stream S | --capture C] [--format table|csv|json] [--warehouse DIR]
    logmart export debezium --out DIR [--source S] [--stream S | --capture C]
        [--from-position P] [--tombstones] [--truncates emit|skip] [--<system>-time-zone ZONE]
        [--warehouse DIR]
    logmart serve [--host HOST] [--port PORT] [--warehouse DIR]
    logmart report --out FILE.html [--warehouse DIR]

`sql undo` refused because later committed changes touch the same rows (no `--force`) prints
them and exits 3.

User errors (`LogmartError`: wrong paths, empty raw folder, locked warehouse, missing Java, bad
SQL) print `logmart: <message>` on stderr and exit 2, without a stack trace.

`build` and `demo` print the summary dict returned by `udfs.pipeline.build`:

    {"sources": [{"source_system", "records_read", "records_decoded", "records_quarantined"}],
     "tables": [{"source_system", "table_schema", "table_name", "changes", "transactions"}]}
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from udfs.errors import LogmartError
from udfs.sources import REGISTERED, by_system

DEFAULT_WAREHOUSE = Path("warehouse")
DEFAULT_DEMO_RAW = Path("demo") / "raw"
DEMO_TRANSACTIONS = 100
DEMO_SEED = 1
# Source system -> its folder under the raw root (`logmart generate` writes sample logs there:
# `_generator`), from the registry (udfs/sources.py).
GENERATORS = {source.system: source.folder for source in REGISTERED}
TABLE_WIDTH_SAMPLE = 500  # rows read before column widths of `--format table` are fixed


# ---------------------------------------------------------------------------------------------
# The session


def _session(
    warehouse: Path,
    master: str | None = None,
    workload: tuple[Path, ...] = (),
    profile: str | None = None,
) -> Any:
    """The logmart session as a context (stopped on exit), with PySpark's own error logging
    off: it would print each SQL error as a JSON log line before ours. `workload`: the
    folders it reads besides the warehouse (a build's raw folder), which size the session
    (`udfs.session.session_profile`) unless `profile` is given."""
    from pyspark.logger import PySparkLogger

    from udfs.session import spark_session

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True  # created by PySpark's own class
    _check_warehouse(Path(warehouse))
    return spark_session(warehouse, master, workload=workload, profile=profile)


def _register_udfs(spark: Any) -> None:
    from udfs.pipeline import register_udfs

    register_udfs(spark)


# ---------------------------------------------------------------------------------------------
# Rendering values


def to_jsonable(value: Any) -> Any:
    """A collected Spark value as JSON: maps as objects, binary as upper hex, times ISO.

    Decimals become strings (every digit kept); NaN and infinities become strings too.
    """
    from pyspark.sql import Row

    if isinstance(value, Row):
        return {key: to_jsonable(item) for key, item in value.asDict().items()}
    if isinstance(value, dict):
        return {_json_key(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex().upper()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dt.timedelta):
        return str(value)
    return value


def _json_key(key: Any) -> str:
    rendered = to_jsonable(key)
    return rendered if isinstance(rendered, str) else json.dumps(rendered)


def to_text(value: Any, null: str) -> str:
    """A collected Spark value as one cell of text (table and csv output)."""
    if value is None:
        return null
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    rendered = to_jsonable(value)
    if isinstance(rendered, dict | list):
        return json.dumps(rendered, ensure_ascii=False, separators=(",", ":"))
    return str(rendered)


def write_json_lines(columns: Sequence[str], rows: Iterable[Any], out: TextIO) -> int:
    count = 0
    for row in rows:
        record = {name: to_jsonable(value) for name, value in zip(columns, row, strict=True)}
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_csv(columns: Sequence[str], rows: Iterable[Any], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow([to_text(value, null="") for value in row])
        count += 1
    return count


def write_rows(
    output_format: str, columns: Sequence[str], rows: Iterable[Any], right: Sequence[bool] = ()
) -> None:
    """Rows on stdout as `--format` says: JSON lines, CSV or an aligned table (`right`: per
    column, whether the table aligns it right)."""
    if output_format == "json":
        write_json_lines(columns, rows, sys.stdout)
    elif output_format == "csv":
        write_csv(columns, rows, sys.stdout)
    else:
        write_table(columns, rows, sys.stdout, right=right)


def write_table(
    columns: Sequence[str], rows: Iterable[Any], out: TextIO, right: Sequence[bool] = ()
) -> int:
    """Aligned text; widths come from the first rows so that output still streams."""
    right = list(right) or [False] * len(columns)
    rows = iter(rows)
    first = [
        [to_text(value, null="NULL") for value in row] for row in islice(rows, TABLE_WIDTH_SAMPLE)
    ]
    widths = [
        max([len(name), *(len(cells[i]) for cells in first)]) for i, name in enumerate(columns)
    ]

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if align_right else cell.ljust(width)
            for cell, width, align_right in zip(cells, widths, right, strict=True)
        )
        return "  ".join(padded).rstrip()

    out.write(line(columns) + "\n")
    out.write("  ".join("-" * width for width in widths) + "\n")
    count = 0
    for cells in (*first, *([to_text(v, null="NULL") for v in row] for row in rows)):
        out.write(line(cells) + "\n")
        count += 1
    out.write(f"({count} row{'s' if count != 1 else ''})\n")
    return count


# ---------------------------------------------------------------------------------------------
# Summary of a build


def print_summary(summary: dict[str, Any], out: TextIO) -> None:
    """Print a build summary (shape in the module docstring) as two small tables."""
    sources = summary.get("sources", [])
    write_table(
        ["source_system", "records_read", "records_decoded", "records_quarantined"],
        (
            [
                s.get(key)
                for key in (
                    "source_system",
                    "records_read",
                    "records_decoded",
                    "records_quarantined",
                )
            ]
            for s in sources
        ),
        out,
        right=[False, True, True, True],
    )
    out.write("\n")
    write_table(
        ["source_system", "table", "changes", "transactions"],
        (
            [
                t.get("source_system"),
                # a table the catalog no longer names (Db2 LUW, dropped) has no schema
                ".".join(part for part in (t.get("table_schema"), t.get("table_name")) if part),
                t.get("changes"),
                t.get("transactions"),
            ]
            for t in summary.get("tables", [])
        ),
        out,
        right=[False, False, True, True],
    )
    load = summary.get("load")
    if load:
        out.write(
            f"\nfiles: {load['files_decoded']} decoded, {load['files_unchanged']} unchanged "
            f"since the last build, {load['duplicates']} copies of another file (read once), "
            f"{load['files_removed']} gone\n"
        )
    typed = summary.get("typed_relations")
    if typed and typed.get("missing_model"):
        out.write(
            "typed relations: marts.dim_typed_relations is not built (dbt arguments left it "
            "out); the views in schemas changes and current were left as they were\n"
        )
    elif typed:
        out.write(
            f"typed relations (schemas changes, current): {typed['created']} views created, "
            f"{typed['kept']} unchanged, {len(typed['dropped'])} dropped\n"
        )
        for view in typed["too_wide"]:
            out.write(
                f"typed relations: {view} not created: its SQL is beyond the metastore's "
                "32,700 characters for a view (docs/typed-tables.md)\n"
            )
    if summary.get("dbt") == "current":
        out.write(
            "models: nothing changed since the last build (raw files, settings, logmart, dbt "
            "arguments); the marts are current (--full-refresh rebuilds them)\n"
        )


# ---------------------------------------------------------------------------------------------
# Commands


def _target_for(master: str | None) -> str:
    return "cluster" if master and master.startswith("spark://") else "local"


SOURCE_FOLDERS = tuple(GENERATORS.values())


def _check_raw_dir(raw: Path) -> None:
    if raw.is_file():
        raise LogmartError(
            f"raw folder {raw} is a file; point --raw at the folder holding "
            f"{', '.join(f'{name}/' for name in SOURCE_FOLDERS)} with the captures in them"
        )
    if not raw.is_dir():
        raise LogmartError(
            f"raw folder {raw} does not exist; point --raw at the folder holding the captured "
            "log files (or create sample files with `logmart generate`)"
        )
    if not any(path.is_file() for path in raw.rglob("*")):
        raise LogmartError(
            f"raw folder {raw} has no files; copy log files into it "
            "or create sample files with `logmart generate SOURCE --out DIR`"
        )
    sources = [raw / name for name in SOURCE_FOLDERS]
    if not any(path.is_file() for folder in sources for path in folder.rglob("*")):
        hint = (
            f"; it looks like a source folder itself: use --raw {raw.parent}"
            if raw.name in SOURCE_FOLDERS
            else ""
        )
        raise LogmartError(
            f"raw folder {raw} has no files under "
            f"{', '.join(f'{name}/' for name in SOURCE_FOLDERS)}: each capture goes in "
            f"RAW/<source>/<capture>/ (README: Sources){hint}"
        )


def _check_warehouse(warehouse: Path) -> None:
    """A warehouse path that is a file, or a folder that cannot be made, as one line."""
    if warehouse.exists() and not warehouse.is_dir():
        raise LogmartError(
            f"warehouse {warehouse} is a file; point --warehouse at a folder (created if missing)"
        )
    try:
        warehouse.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LogmartError(
            f"cannot create the warehouse folder {warehouse} ({exc.strerror}); point "
            "--warehouse at a folder you can write to"
        ) from None


def _build(
    spark: Any,
    raw: Path,
    warehouse: Path,
    target: str,
    settings: dict[str, dict[str, str]],
    full_refresh: bool = False,
    dbt_args: Sequence[str] = (),
    checks: str = "data",
) -> dict[str, Any]:
    """`udfs.pipeline.build`: registers the UDFs, loads raw tables, runs `dbt build`; the
    command's settings are its arguments."""
    from udfs import pipeline

    return pipeline.build(
        spark,
        raw,
        warehouse,
        target,
        full_refresh=full_refresh,
        dbt_args=list(dbt_args),
        checks=checks,
        settings=settings,
        dbt_output=_dbt_output(),
    )


def _add_capture_settings(parser: argparse.ArgumentParser) -> None:
    """A flag ``--<folder>-<setting>`` for every capture setting a source declares."""
    for source in REGISTERED:
        for setting in source.settings:
            parser.add_argument(
                setting.flag(source.folder),
                dest=_setting_dest(source.folder, setting.name),
                choices=list(setting.allowed),
                help=setting.help,
            )


def _setting_dest(folder: str, name: str) -> str:
    return f"{folder}_{name}".replace("-", "_")


def _capture_settings(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    """The capture settings of a build: each setting's environment variable (e.g.
    LOGMART_DB2LUW_FRAMING), the flags over them; read here, once, and passed on."""
    from udfs.pipeline import capture_settings

    flags = {
        source.system: {
            setting.name: getattr(args, _setting_dest(source.folder, setting.name), None)
            for setting in source.settings
        }
        for source in REGISTERED
        if source.settings
    }
    return capture_settings(flags, os.environ)


def _dbt_output() -> str:
    """`build` and `demo` print dbt's errors and a progress line, not its whole log
    (LOGMART_DBT_OUTPUT=full brings it back; the log file has it all)."""
    from udfs.dbt_runner import OUTPUT_VARIABLE

    return os.environ.get(OUTPUT_VARIABLE) or "progress"


def cmd_build(args: argparse.Namespace) -> int:
    from udfs.strict import check, strict_from_env

    settings = _capture_settings(args)
    strict = args.strict or strict_from_env()
    _check_raw_dir(args.raw)
    watching = args.watch is not None
    if args.watch_builds is not None and not watching:
        raise LogmartError("--watch-builds counts the builds of --watch; give --watch SECONDS too")
    profile = _watch_profile() if watching else None
    command_started = time.monotonic()
    with _session(args.warehouse, args.master, (args.raw,), profile) as spark:
        first = [True]

        def build_once() -> None:
            # the first build's time is the command's (the session's start included)
            started = command_started if first[0] else time.monotonic()
            summary = _build(
                spark,
                args.raw,
                args.warehouse,
                _target_for(args.master),
                settings,
                args.full_refresh and first[0],  # a full refresh once, not at every change
                args.dbt_args,
                args.checks,
            )
            first[0] = False
            if strict:
                check(spark)  # the first quarantined record or file problem, as one line
            print_summary(summary, sys.stdout)
            took = time.monotonic() - started
            print(f"\nbuilt {args.warehouse} in {took:.0f} s", file=sys.stderr, flush=True)

        if not watching:
            build_once()
            return 0
        from udfs.watch import watch

        print(f"watching {args.raw} every {args.watch:g} s; Ctrl-C stops", file=sys.stderr)
        try:
            watch(args.raw, args.watch, build_once, builds=args.watch_builds)
        except KeyboardInterrupt:
            print("logmart: stopped watching", file=sys.stderr)
    return 0


def _watch_profile() -> str | None:
    """A watching process lives for many builds, where the JVM's C2 compiler pays: the large
    session profile unless LOGMART_SESSION_PROFILE names one."""
    from udfs.session import PROFILE_VARIABLE

    given = os.environ.get(PROFILE_VARIABLE, "").strip().lower()
    return None if given in ("small", "large") else "large"


def cmd_dbt(args: argparse.Namespace) -> int:
    from udfs.dbt_runner import run_dbt

    if not args.dbt_args:
        raise LogmartError("no dbt command given; try `logmart dbt build` or `logmart dbt debug`")
    with _session(args.warehouse, args.master) as spark:
        _register_udfs(spark)
        ok = run_dbt(spark, list(args.dbt_args), args.warehouse, _target_for(args.master))
    return 0 if ok else 1


def _query_rows(spark: Any, sql: str) -> tuple[list[str], list[bool], Iterator[Any]]:
    """Columns, which are numeric, and a streaming iterator of rows; SQL errors as one line."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType, NumericType

    try:
        frame = spark.sql(sql)
    except PySparkException as exc:
        raise LogmartError(_first_line(exc)) from None
    fields = frame.schema.fields
    numeric = [isinstance(field.dataType, NumericType) for field in fields]
    maps = {i for i, field in enumerate(fields) if isinstance(field.dataType, MapType)}
    if maps:
        # Python receives a map as a dict built from a Java HashMap, in no particular order;
        # its entries (an array) keep the map's own order, e.g. a row image's column order.
        frame = frame.select(
            *(F.map_entries(frame[i]) if i in maps else frame[i] for i in range(len(fields)))
        )
    # toLocalIterator fetches one partition at a time: results need not fit in driver memory.
    rows = frame.toLocalIterator()
    if maps:
        rows = (_entries_to_dicts(row, maps) for row in rows)
    return [field.name for field in fields], numeric, rows


def _entries_to_dicts(row: Sequence[Any], maps: set[int]) -> list[Any]:
    return [
        dict(cell) if i in maps and cell is not None else cell  # entries are (key, value)
        for i, cell in enumerate(row)
    ]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cmd_query(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    with _session(args.warehouse) as spark:
        columns, numeric, rows = _query_rows(spark, args.sql)
        try:
            write_rows(args.format, columns, rows, right=numeric)
        except PySparkException as exc:  # errors raised while rows are computed
            raise LogmartError(_first_line(exc)) from None
        sys.stdout.flush()
    return 0


def _generator(source: str) -> Callable[[Path, int, int], Any]:
    """`source`'s `generate(raw_root, transactions, seed)` (the module of package
    logmart_generators its registration names): writes its logs under
    raw_root/<folder>/<capture>/ and its ground truth under raw_root/truth/."""
    from importlib import import_module

    return import_module(f"logmart_generators.{by_system(source).generator}").generate


def _generate(source: str, raw: Path, transactions: int, seed: int) -> Path:
    """Run `source`'s generator into the raw root `raw`; returns the folder it wrote."""
    folder = GENERATORS[source]
    generate = _generator(source)
    raw.mkdir(parents=True, exist_ok=True)
    try:
        generate(raw, transactions, seed)
    except ValueError as exc:  # the generator refused its arguments (e.g. too few transactions)
        raise LogmartError(f"cannot generate {source} logs: {exc}") from None
    return raw / folder


def cmd_generate(args: argparse.Namespace) -> int:
    written = _generate(args.source, args.out, args.transactions, args.seed)
    print(f"wrote {args.source} logs ({args.transactions} transactions) to {written}")
    return 0


def _demo_raw(raw: Path) -> None:
    """Generate sample logs under `raw` for every source that has none there yet."""
    for source, folder in GENERATORS.items():
        existing = raw / folder
        if existing.is_dir() and any(path.is_file() for path in existing.rglob("*")):
            print(f"using the existing {source} files in {existing}", file=sys.stderr)
            continue
        try:
            written = _generate(source, raw, DEMO_TRANSACTIONS, DEMO_SEED)
        except LogmartError as exc:
            print(f"skipping {source}: {exc}", file=sys.stderr)
            continue
        print(f"generated {source} sample logs in {written}", file=sys.stderr)


def cmd_demo(args: argparse.Namespace) -> int:
    settings = _capture_settings(args)
    _demo_raw(args.raw)
    _check_raw_dir(args.raw)
    with _session(args.warehouse, workload=(args.raw,)) as spark:
        summary = _build(spark, args.raw, args.warehouse, "local", settings)
    print_summary(summary, sys.stdout)
    where = "" if args.warehouse == DEFAULT_WAREHOUSE else f" --warehouse {args.warehouse}"
    print(
        "\nQuery the marts, for example:\n"
        f'  logmart query{where} "select source_system, table_schema, table_name, '
        'count(*) as changes from marts.fct_changes group by all order by all"\n'
        f'  logmart query{where} --format json "select * from marts.fct_changes limit 5"'
    )
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    from udfs.backout import check_selection, prepare, refuse_conflicts, script_header
    from udfs.change_sql import write_script

    selection = _sql_selection(args)
    check_selection(selection)  # before Spark starts
    with _session(args.warehouse) as spark:
        narrowed, _, found = prepare(spark, args.direction, selection)
        if found and not args.force:
            return refuse_conflicts(found, sys.stderr)
        header, later = script_header(spark, args.direction, narrowed, found)
        write_script(spark, args.direction, narrowed, sys.stdout, header, later)
        sys.stdout.flush()
    return 0


def _sql_selection(args: argparse.Namespace) -> Any:
    """The `logmart sql` options as a `udfs.change_sql.Selection`."""
    from udfs.change_sql import Selection

    return Selection(
        transaction=args.transaction,
        since=args.since,
        from_position=args.from_position,
        source_system=args.source,
        log_stream=_stream(args),
        until=args.until,
        to_position=args.to_position,
        tables=tuple(args.table or ()),
        authid=args.authid,
        plan=args.plan,
        connection=args.connection,
        operations=tuple(args.operation or ()),
        exclude_transactions=tuple(args.exclude_transaction or ()),
        include_generated=args.include_generated,
    )


def cmd_asof(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from udfs.asof import as_of

    point = args.position if args.position is not None else args.ts.isoformat(" ")
    with _session(args.warehouse) as spark:
        try:
            columns, rows = as_of(spark, args.table, point, args.source, _stream(args))
            write_rows(args.format, columns, rows)
        except PySparkException as exc:
            raise LogmartError(_first_line(exc)) from None
        sys.stdout.flush()
    return 0


def cmd_changes(args: argparse.Namespace) -> int:
    from pyspark.errors import PySparkException

    from udfs.typed import changes

    with _session(args.warehouse) as spark:
        try:
            columns, rows = changes(
                spark,
                args.table,
                args.from_position,
                args.to_position,
                net=args.net,
                source_system=args.source,
                log_stream=_stream(args),
            )
            write_rows(args.format, columns, rows)
        except PySparkException as exc:
            raise LogmartError(_first_line(exc)) from None
        sys.stdout.flush()
    return 0


def cmd_export_debezium(args: argparse.Namespace) -> int:
    from udfs.debezium import Selection, export, wall_clock_systems, wall_clock_time_zones

    selection = Selection(args.source, args.stream, args.capture, args.from_position)
    selection.stream()  # --stream and --capture agree, before Spark starts
    given = {system: getattr(args, f"{system}_time_zone") for system in wall_clock_systems()}
    zones = wall_clock_time_zones(given)  # checked before Spark starts
    with _session(args.warehouse) as spark:
        written = export(spark, args.out, selection, args.tombstones, args.truncates, zones)
    if not written:
        print(f"nothing new to export: {args.out} is up to date", file=sys.stderr)
        return 0
    write_table(
        ["file", "messages"],
        ([str(w.path), w.events] for w in written),
        sys.stdout,
        right=[False, True],
    )
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from udfs import serve

    with _session(args.warehouse) as spark:
        _register_udfs(spark)
        server = serve.start(spark, args.host, args.port)
        print(
            f"serving {args.warehouse} over HiveServer2 (JDBC/ODBC) at {server.url}; Ctrl-C stops",
            file=sys.stderr,
        )
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("logmart: stopping the Thrift server", file=sys.stderr)
        finally:
            server.stop()
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from udfs.report import write

    with _session(args.warehouse) as spark:
        written = write(spark, args.out)
    print(f"wrote {written}")
    return 0


def _timestamp(text: str) -> dt.datetime:
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a timestamp; write YYYY-MM-DD[ HH:MM:SS[.ffffff]]"
        ) from None


def _add_stream_choice(parser: argparse.ArgumentParser) -> None:
    """--source and the log stream: the captures of one database's log are one log."""
    parser.add_argument("--source", choices=sorted(GENERATORS), help="source system")
    stream = parser.add_mutually_exclusive_group()
    stream.add_argument(
        "--stream",
        help="log stream: the first folder under the source's raw folder (every capture in it)",
    )
    stream.add_argument(
        "--capture", help="a capture folder (e.g. PROD/c02): chooses the log stream holding it"
    )


def _stream(args: argparse.Namespace) -> str | None:
    from udfs.change_sql import log_stream_of

    if args.capture is not None:
        return log_stream_of(args.capture)
    return args.stream


# ---------------------------------------------------------------------------------------------
# Arguments


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {text}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
    return value


def _add_warehouse(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--warehouse",
        type=Path,
        default=DEFAULT_WAREHOUSE,
        help="folder of the tables and their metastore (default: ./warehouse)",
    )


def _add_master(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--master",
        default=None,
        help="Spark master URL, e.g. spark://127.0.0.1:7077 (default: local[*])",
    )


def _add_sql_selection(parser: argparse.ArgumentParser) -> None:
    """Which committed changes a script covers: a transaction or a closed window, and the
    filters a DBA uses (udfs.change_sql.Selection)."""
    parser.add_argument("--transaction", help="one transaction id (fct_changes.transaction_id)")
    parser.add_argument(
        "--since", type=_timestamp, help="the transactions committed at or after this time"
    )
    parser.add_argument(
        "--until", type=_timestamp, help="the transactions committed at or before this time"
    )
    parser.add_argument(
        "--from-position", help="the transactions committed at or after this commit position"
    )
    parser.add_argument(
        "--to-position", help="the transactions committed at or before this commit position"
    )
    parser.add_argument(
        "--table",
        action="append",
        metavar="SCHEMA.TABLE",
        help="only the changes of this table (repeatable)",
    )
    parser.add_argument("--authid", help="only the changes made under this authorization id")
    parser.add_argument("--plan", help="only the changes made by this plan (fct_changes.plan_name)")
    parser.add_argument(
        "--connection", help="only the changes of this connection (fct_changes.connection_id)"
    )
    parser.add_argument(
        "--operation",
        action="append",
        choices=["insert", "update", "delete", "truncate"],
        help="only the changes of this operation (repeatable; truncate includes mass deletes)",
    )
    parser.add_argument(
        "--exclude-transaction",
        action="append",
        metavar="ID",
        help="leave out this transaction (repeatable), e.g. REDO after a point-in-time "
        "recovery without the bad transaction",
    )
    parser.add_argument(
        "--include-generated",
        action="store_true",
        help="keep the changes Db2 made itself (fct_changes.generated_by: RI constraints, "
        "triggers, temporal history tables); by default they are left out, as the target's own "
        "constraints and triggers make them again",
    )


def build_parser() -> argparse.ArgumentParser:
    from udfs.debezium import time_zone_flag, time_zone_variable, wall_clock_systems

    parser = argparse.ArgumentParser(
        prog="logmart", description="SQL-first lakehouse for database change logs."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser("build", help="load raw log files and build every model")
    build.add_argument("--raw", type=Path, required=True, help="folder of captured log files")
    _add_warehouse(build)
    _add_master(build)
    _add_capture_settings(build)
    build.add_argument(
        "--strict",
        action="store_true",
        help="fail on the first record that cannot be decoded (or file with a problem), with "
        "its file, offset and reason, instead of quarantining it and going on (also "
        "LOGMART_STRICT=1)",
    )
    build.add_argument(
        "--full-refresh",
        action="store_true",
        help="decode every file again and rebuild every model from scratch (by default only "
        "new or changed files are decoded and only changed captures recomputed)",
    )
    build.add_argument(
        "--checks",
        choices=["data", "all", "none"],
        default="data",
        help="which dbt tests run: data (the default: records reconcile, quarantine, keys of "
        "the marts: what says something about your logs), all (also logmart's own unit tests "
        "and the tests of its SQL, as its test suite runs them), none",
    )
    build.add_argument(
        "dbt_args",
        nargs="*",
        metavar="-- DBT_ARGS",
        help="more `dbt build` options after `--`, e.g. `-- --select fct_changes+` (a "
        "selection of your own replaces --checks)",
    )
    build.add_argument(
        "--watch",
        type=_positive_seconds,
        metavar="SECONDS",
        help="stay up after the build and build again whenever files under --raw change "
        "(looked at every SECONDS; a build starts once they held still that long), until "
        "Ctrl-C: one JVM for every capture, its compiled code kept (docs/operations.md)",
    )
    build.add_argument(
        "--watch-builds",
        type=_positive,
        metavar="N",
        help="with --watch: stop after N builds, the first included",
    )
    build.set_defaults(run=cmd_build)

    dbt = commands.add_parser(
        "dbt",
        help="run dbt on logmart's session (UDFs registered)",
        description="Everything after the logmart options is passed to dbt.",
    )
    _add_warehouse(dbt)
    _add_master(dbt)
    dbt.add_argument("dbt_args", nargs=argparse.REMAINDER, help="dbt command and its options")
    dbt.set_defaults(run=cmd_dbt)

    query = commands.add_parser("query", help="run one SQL statement and print the result")
    _add_warehouse(query)
    query.add_argument(
        "--format",
        choices=["table", "csv", "json"],
        default="table",
        help="json = JSON lines, one object per row (default: table)",
    )
    query.add_argument("sql", help="the SQL statement")
    query.set_defaults(run=cmd_query)

    generate = commands.add_parser("generate", help="write synthetic logs of one source")
    generate.add_argument("source", choices=sorted(GENERATORS))
    generate.add_argument("--out", type=Path, required=True, help="folder to write into")
    generate.add_argument("--transactions", type=_positive, default=DEMO_TRANSACTIONS)
    generate.add_argument("--seed", type=int, default=DEMO_SEED)
    generate.set_defaults(run=cmd_generate)

    demo = commands.add_parser("demo", help="generate sample logs of every source and build")
    demo.add_argument(
        "--raw",
        type=Path,
        default=DEFAULT_DEMO_RAW,
        help="folder for the sample logs (default: ./demo/raw)",
    )
    _add_warehouse(demo)
    demo.set_defaults(run=cmd_demo)

    sql = commands.add_parser(
        "sql",
        help="print UNDO or REDO SQL of committed changes (marts.fct_change_sql)",
        description="UNDO backs the changes out in reverse commit order; REDO applies them "
        "again in commit order. The script is for one log: a source and log stream, every "
        "capture of it (a transaction split between two captures is one transaction).",
    )
    sql.add_argument("direction", choices=["undo", "redo"])
    _add_sql_selection(sql)
    _add_stream_choice(sql)
    sql.add_argument(
        "--force",
        action="store_true",
        help="UNDO: write the script even when later committed changes touch the same rows "
        "or tables (each affected statement then has a CONFLICT comment naming them); "
        "without it such an UNDO is refused (exit 3) with the list of those changes",
    )
    _add_warehouse(sql)
    sql.set_defaults(run=cmd_sql)

    asof = commands.add_parser(
        "asof", help="print a table's rows as of a commit position or time (fct_row_history)"
    )
    asof.add_argument("--table", required=True, help="SCHEMA.TABLE")
    point = asof.add_mutually_exclusive_group(required=True)
    point.add_argument("--position", help="commit position (the state after it committed)")
    point.add_argument(
        "--ts", type=_timestamp, help="time YYYY-MM-DD[ HH:MM:SS[.ffffff]] (by commit time)"
    )
    _add_stream_choice(asof)
    asof.add_argument("--format", choices=["table", "csv", "json"], default="table")
    _add_warehouse(asof)
    asof.set_defaults(run=cmd_asof)

    changes = commands.add_parser(
        "changes",
        help="print a table's typed change feed between two commit positions (schema changes)",
    )
    changes.add_argument("--table", required=True, help="SCHEMA.TABLE")
    changes.add_argument("--from-position", required=True, help="first commit position (included)")
    changes.add_argument("--to-position", required=True, help="last commit position (included)")
    changes.add_argument(
        "--net",
        action="store_true",
        help="net changes (Iceberg net_changes): one change per row over the window",
    )
    _add_stream_choice(changes)
    changes.add_argument("--format", choices=["table", "csv", "json"], default="table")
    _add_warehouse(changes)
    changes.set_defaults(run=cmd_changes)

    export = commands.add_parser("export", help="write the changes in another format")
    formats = export.add_subparsers(dest="export_format", required=True, metavar="FORMAT")
    debezium = formats.add_parser(
        "debezium",
        help="Debezium messages (key and change event value), JSON lines, one file per table "
        "and stream, incrementally",
        description="Each run appends to the files in --out the committed changes of each "
        "selected log stream that are not there yet (after the folder's checkpoint, "
        "logmart-checkpoint.json), in commit order, with Debezium's transaction topic.",
    )
    debezium.add_argument(
        "--out", type=Path, required=True, help="folder to write into (and its checkpoint)"
    )
    _add_stream_choice(debezium)
    debezium.add_argument(
        "--from-position",
        help="export the transactions committed after this commit position (one stream; "
        "default: after the out folder's checkpoint, or from the beginning)",
    )
    debezium.add_argument(
        "--tombstones",
        action="store_true",
        help="write a tombstone (the key, value null) after each delete, as Debezium's "
        "tombstones.on.delete (default: none)",
    )
    debezium.add_argument(
        "--truncates",
        choices=["emit", "skip"],
        default="emit",
        help="emit truncates as Debezium op 't' events (default) or skip them (Flink's "
        "debezium-json, among others, rejects 't')",
    )
    for system in wall_clock_systems():  # sources whose logs give times with no zone
        debezium.add_argument(
            time_zone_flag(system),
            metavar="ZONE",
            help=f"time zone of the clock that {by_system(system).display_name} times are in "
            "(UTC, an IANA name such as Europe/Berlin, or +01:00); also "
            f"{time_zone_variable(system)}; default UTC. The other sources' logs give UTC "
            "times or none",
        )
    _add_warehouse(debezium)
    debezium.set_defaults(run=cmd_export_debezium)

    serve = commands.add_parser(
        "serve",
        help="serve the warehouse to BI tools over JDBC/ODBC (Spark Thrift server, HiveServer2)",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    serve.add_argument("--port", type=_positive, default=10000, help="port (default: 10000)")
    _add_warehouse(serve)
    serve.set_defaults(run=cmd_serve)

    report = commands.add_parser(
        "report", help="write one self-contained HTML page of charts from the audit marts"
    )
    report.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    _add_warehouse(report)
    report.set_defaults(run=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `logmart` console script; returns the exit code."""
    args = build_parser().parse_args(argv)
    # Collected timestamps are converted with the process time zone; the session's is UTC.
    os.environ["TZ"] = "UTC"
    time.tzset()
    try:
        return args.run(args)
    except LogmartError as exc:
        print(f"logmart: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("logmart: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

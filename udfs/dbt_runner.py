"""Run dbt in this process, on the Spark session logmart created.

dbt-spark's `session` method calls `SparkSession.builder.enableHiveSupport().getOrCreate()` for
every statement, so when the caller has created the session (`udfs.session.get_spark`) and
registered the UDFs on it, dbt's models can call them. A `dbt` in another process cannot.

dbt's target and log folders go into the warehouse so the repository stays clean.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pyspark.sql import SparkSession

from udfs.cache import cache_dir
from udfs.errors import LogmartError
from udfs.session import dbt_run_settings, is_local_master, small_data_run

# The dbt var that says a run is over little data (udfs.session.small_data_run): a model may
# then be a table where, over much data, it is a view (int_logmaster_changes_reassembled)
SMALL_DATA_VAR = "logmart_small_data"


def project_dir() -> Path:
    """The dbt project root: `LOGMART_PROJECT_DIR`, else the folder above the `udfs` package."""
    override = os.environ.get("LOGMART_PROJECT_DIR")
    root = Path(override) if override else Path(__file__).resolve().parent.parent
    if not (root / "dbt_project.yml").is_file():
        raise LogmartError(
            f"no dbt_project.yml in {root}; install logmart from its source tree "
            "(pip install -e .) or set LOGMART_PROJECT_DIR to the folder holding dbt_project.yml"
        )
    return root


def _accepted_options(args: Sequence[str]) -> set[str]:
    """Options the dbt (sub)command in `args` accepts, read from dbt's own click definitions.

    Asking dbt rather than keeping a list: e.g. `debug` and `deps` take no --target-path, and a
    flag a subcommand does not know is a usage error.
    """
    from dbt.cli.main import cli

    command = cli
    for word in args:
        if word.startswith("-") or not hasattr(command, "commands"):
            break
        sub = command.commands.get(word)
        if sub is None:
            break
        command = sub
    if command is cli:
        return set()  # no subcommand (e.g. --version): add nothing
    return {opt for param in command.params for opt in param.opts}


def with_vars(args: Sequence[str], ours: dict) -> list[str]:
    """``args`` with the dbt vars ``ours`` merged under the caller's ``--vars``, if any (the
    caller's value of a var wins)."""
    import yaml

    args = list(args)
    for i, arg in enumerate(args):
        if arg == "--vars" and i + 1 < len(args):
            given = yaml.safe_load(args[i + 1]) or {}
            args[i + 1] = json.dumps({**ours, **given})
            return args
        if arg.startswith("--vars="):
            given = yaml.safe_load(arg.split("=", 1)[1]) or {}
            args[i] = "--vars=" + json.dumps({**ours, **given})
            return args
    return [*args, "--vars", json.dumps(ours)]


def dbt_args(
    args: Sequence[str],
    warehouse: Path,
    project: Path,
    target: str = "local",
    threads: int | None = None,
    small_data: bool | None = None,
) -> list[str]:
    """The full dbt argument list: `args` plus project, profiles, target and output paths,
    `threads` (when given; else profiles.yml's), and the registry of sources as vars
    (:func:`udfs.sources.dbt_vars`: dbt cannot import Python, and dbt_project.yml names no
    source), with the var `logmart_small_data` when `small_data` is given (models that
    materialize by the data's size read it; udfs.session.small_data_run).

    Only options the subcommand accepts are added, and never one the caller already gave; a
    var the caller gives wins over the registry's.
    """
    from udfs.sources import dbt_vars

    if not args:
        raise LogmartError("no dbt command given; try `logmart dbt build` or `logmart dbt debug`")
    accepted = _accepted_options(args)
    if "--vars" in accepted:
        ours = dbt_vars()
        if small_data is not None:
            ours = {**ours, SMALL_DATA_VAR: small_data}
        args = with_vars(args, ours)
    given = {arg.split("=", 1)[0] for arg in args}
    if "-t" in given:
        given.add("--target")
    extra: list[str] = []
    for flag, value in (
        ("--project-dir", project),
        ("--profiles-dir", project / "profiles"),
        ("--target", target),
        ("--target-path", warehouse / "dbt" / "target"),
        ("--log-path", warehouse / "dbt" / "logs"),
        ("--threads", threads),
    ):
        if value is not None and flag in accepted and flag not in given:
            extra.extend([flag, str(value)])
    return [*args, *extra]


def local_threads(spark: SparkSession) -> int | None:
    """dbt's threads on `spark`'s session (:func:`threads_for`)."""
    context = spark.sparkContext
    return threads_for(context.master, context.defaultParallelism, os.cpu_count())


def threads_for(master: str, parallelism: int, cores: int | None) -> int | None:
    """dbt's threads on a session of `master`: on a local one, one node per core its tasks run
    on (`parallelism`, Spark's default: N of local[N], the cores of local[*]), at most the
    machine's `cores` (a spark.default.parallelism set high is not a reason to plan that many
    models at once); None on a cluster (profiles.yml's). On 2 cores, 2 nodes at once took
    about 5 % less CPU than 4 and no longer, from a demo build to a million records
    (docs/performance.md, "2026-11-27, evening"): a node's time is mostly the driver's
    planning, which more nodes than cores only interleave."""
    if not is_local_master(master):
        return None
    return max(1, min(parallelism, cores or parallelism))


# LOGMART_DBT_OUTPUT: 'full' prints dbt's own log lines (the default for `logmart dbt`);
# 'progress' (what `logmart build` and `logmart demo` pass to `run_dbt` unless the variable
# says 'full') prints dbt's errors and warnings and one line per tenth of the nodes done.
# dbt's full log is always in <warehouse>/dbt/logs.
OUTPUT_VARIABLE = "LOGMART_DBT_OUTPUT"


class _Progress:
    """A dbt callback: one line per tenth of the nodes (models, tests, seeds) done.

    It counts the nodes that finished (a result or a skip), not dbt's node index: with
    several threads the node with the last index is not the last to finish."""

    # the events dbt fires once per node when it is done with it
    NODE_DONE = frozenset({
        "LogModelResult", "LogSeedResult", "LogSnapshotResult", "LogTestResult",
        "LogNodeResult", "LogNodeNoOpResult", "LogFunctionResult", "SkippingDetails",
        "LogSkipBecauseError",
    })  # fmt: skip

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.shown = -1
        self.done: set[int] = set()
        self.failed = 0

    def __call__(self, event) -> None:
        data = getattr(event, "data", None)
        name = event.info.name if hasattr(event, "info") else ""
        if data is None or name not in self.NODE_DONE:
            return
        # a test's result calls the node count num_models; the others call it total
        total = getattr(data, "total", 0) or getattr(data, "num_models", 0)
        index = getattr(data, "index", 0)
        if not total or index in self.done:
            return
        self.done.add(index)
        if getattr(data, "status", "") in ("error", "fail"):
            self.failed += 1
        count = len(self.done)
        tenth = count * 10 // total
        if tenth > self.shown or count == total:
            self.shown = tenth
            failed = f", {self.failed} failed" if self.failed else ""
            print(f"dbt: {count}/{total} nodes done{failed}", file=self.stream, flush=True)


# dbt parses the project (~4 s) into <target-path>/partial_parse.msgpack and reuses it while
# the project files, dbt version, vars, profile and target are unchanged. A new warehouse has no
# such file, and builds differ in their vars (the sources that have files, the capture settings),
# so logmart keeps the newest parse per project folder *and* per vars, profile and target in a
# cache and seeds a warehouse's target folder with the one that fits; dbt checks it itself and
# parses again what is stale.
PARTIAL_PARSE = "partial_parse.msgpack"
PARSES_KEPT = 8  # per project folder; each is about 3 MB


def _option_value(args: Sequence[str], *names: str) -> str:
    """The value of the last of `names` (e.g. --vars) in `args`, '' when none is given."""
    value = ""
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
            elif name.startswith("--") and arg.startswith(name + "="):
                value = arg.split("=", 1)[1]
    return value


def parse_cache(project: Path, environ: dict | None = None, args: Sequence[str] = ()) -> Path:
    """Where the partial-parse file of `project` run with `args` is cached: in logmart's cache
    folder (`udfs.cache.cache_dir`: `LOGMART_CACHE_DIR`, else `$XDG_CACHE_HOME/logmart`, else
    `~/.cache/logmart`), one file per project folder and per the --vars, --profile and
    --target in `args` (what dbt's own check of a parse compares, besides the files)."""
    key = hashlib.sha256(str(project.resolve()).encode()).hexdigest()[:16]
    given = "\0".join(
        _option_value(args, *names) for names in (("--vars",), ("--profile",), ("--target", "-t"))
    )
    variant = hashlib.sha256(given.encode()).hexdigest()[:16]
    return cache_dir(environ) / f"{PARTIAL_PARSE}.{key}.{variant}"


def _target_path(args: Sequence[str]) -> Path | None:
    value = _option_value(args, "--target-path")
    return Path(value) if value else None


def seed_parse(target: Path | None, cache: Path) -> bool:
    """Copy the cached partial-parse file into a target folder whose own differs (made with
    other vars, or none yet); True if copied. A cache that cannot be read costs a full parse,
    never a failed build."""
    if target is None or not cache.is_file():
        return False
    made = target / PARTIAL_PARSE
    try:
        if made.is_file() and _same_bytes(made, cache):
            return False
        target.mkdir(parents=True, exist_ok=True)
        partial = made.with_name(f"{PARTIAL_PARSE}.{os.getpid()}.tmp")
        shutil.copyfile(cache, partial)
        os.replace(partial, made)
    except OSError:
        return False
    return True


def _same_bytes(one: Path, other: Path) -> bool:
    return one.stat().st_size == other.stat().st_size and one.read_bytes() == other.read_bytes()


def keep_parse(target: Path | None, cache: Path) -> bool:
    """Store the target folder's partial-parse file in the cache when it differs; True if
    stored. Written to a temporary name and renamed, so a concurrent reader never sees half.
    The project's parses beyond the PARSES_KEPT newest are removed."""
    made = target / PARTIAL_PARSE if target is not None else None
    if made is None or not made.is_file():
        return False
    try:
        if cache.is_file() and _same_bytes(cache, made):
            os.utime(cache)  # used: the newest, the last to be pruned
            return False
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        shutil.copyfile(made, partial)
        os.replace(partial, cache)
    except OSError:
        return False
    try:
        _prune(cache)
    except OSError:  # another process pruned or stored at the same moment: stored all the same
        pass
    return True


def _prune(cache: Path) -> None:
    """Remove the oldest parses of `cache`'s project folder beyond PARSES_KEPT."""
    project_key = cache.name.rsplit(".", 1)[0]
    kept = sorted(
        (p for p in cache.parent.glob(f"{project_key}.*") if not p.name.endswith(".tmp")),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in kept[PARSES_KEPT:]:
        old.unlink(missing_ok=True)
    (cache.parent / project_key).unlink(missing_ok=True)  # the one file per project of before


def run_dbt(
    spark: SparkSession,
    args: list[str],
    warehouse: Path,
    target: str = "local",
    output: str | None = None,
) -> bool:
    """Run `dbt <args>` in-process on `spark`'s session; True when dbt succeeded.

    `spark` must be the session from `udfs.session.get_spark` (UDFs registered first): it is
    taken as the proof that the session dbt will reuse exists.
    With `output` 'progress' dbt prints only errors, warnings and a progress line; 'full' its
    whole log; None: LOGMART_DBT_OUTPUT, else 'full'.
    """
    from dbt.cli.main import dbtRunner  # imported late: dbt takes ~1 s to import

    from udfs.session import PROFILE_CONF, save_catalog

    if not spark.conf.get(PROFILE_CONF, ""):
        raise LogmartError("the Spark session is not logmart's; create it with get_spark()")
    warehouse = Path(warehouse).expanduser().resolve()
    project = project_dir()
    # profiles.yml reads the warehouse through env_var('LOGMART_WAREHOUSE').
    os.environ["LOGMART_WAREHOUSE"] = str(warehouse)
    callbacks = []
    if (output or os.environ.get(OUTPUT_VARIABLE) or "full") == "progress":
        args = [*args, "--quiet"] if "--quiet" not in args and "-q" not in args else list(args)
        callbacks.append(_Progress(sys.stderr))
    small = small_data_run(spark, warehouse)
    full_args = dbt_args(args, warehouse, project, target, local_threads(spark), small)
    target_path, cache = _target_path(full_args), parse_cache(project, args=full_args)
    seed_parse(target_path, cache)
    with dbt_run_settings(spark, warehouse, small):
        try:
            result = dbtRunner(callbacks=callbacks).invoke(full_args)
        finally:
            save_catalog(spark)  # what dbt made, kept even if this process dies next
    keep_parse(target_path, cache)
    _raise_usage_error(result.exception)
    return bool(result.success)


def _raise_usage_error(exception: BaseException | None) -> None:
    """dbt hands a usage error (an option it does not know) back to its caller and prints
    nothing: say it, and where logmart's own options go."""
    from dbt.cli.exceptions import DbtUsageException

    if isinstance(exception, DbtUsageException):
        raise LogmartError(
            f"dbt refused its arguments: {exception} logmart's own options (--warehouse, "
            "--master) go before the dbt command: `logmart dbt --warehouse DIR build`"
        )

"""dbt in-process on the test session: arguments, debug/parse, schemas, UDFs, ANSI off."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyspark.sql import SparkSession

from udfs.dbt_runner import (
    PARSES_KEPT,
    PARTIAL_PARSE,
    SMALL_DATA_VAR,
    _Progress,
    dbt_args,
    keep_parse,
    local_threads,
    parse_cache,
    project_dir,
    run_dbt,
    seed_parse,
    threads_for,
)
from udfs.errors import LogmartError
from udfs.session import SMALL_WORKLOAD_BYTES
from udfs.sources import dbt_vars

REPO = Path(__file__).resolve().parent.parent
W, P = Path("/w"), Path("/p")


def test_paths_target_and_registry_are_added() -> None:
    assert dbt_args(["build", "-s", "fct_changes"], W, P) == [
        "build", "-s", "fct_changes", "--vars", json.dumps(dbt_vars()),
        "--project-dir", "/p", "--profiles-dir", "/p/profiles", "--target", "local",
        "--target-path", "/w/dbt/target", "--log-path", "/w/dbt/logs",
    ]  # fmt: skip


def test_a_run_over_little_data_says_so_in_a_var() -> None:
    """logmart's dbt runs say whether the data is small (udfs.session.small_data_run), so a
    model can be a table over little data and a view over much; the caller's var wins."""

    def given_vars(args: list[str]) -> dict:
        return json.loads(args[args.index("--vars") + 1])

    assert given_vars(dbt_args(["build"], W, P, small_data=True))[SMALL_DATA_VAR] is True
    assert given_vars(dbt_args(["build"], W, P, small_data=False))[SMALL_DATA_VAR] is False
    assert SMALL_DATA_VAR not in given_vars(dbt_args(["build"], W, P))
    own = ["build", "--vars", json.dumps({SMALL_DATA_VAR: False})]
    assert given_vars(dbt_args(own, W, P, small_data=True))[SMALL_DATA_VAR] is False


def test_the_reassembled_changes_are_a_table_over_little_data_a_view_over_much(
    tmp_path: Path,
) -> None:
    """The var reaches the model: parsed with small_data, int_logmaster_changes_reassembled
    is a table; without the var (a plain dbt command, or much data) a view."""
    from dbt.cli.main import dbtRunner

    def materialized(small_data: bool | None) -> str:
        target = tmp_path / f"t{small_data}"
        paths = ["--target-path", str(target), "--log-path", str(tmp_path / "l")]
        args = dbt_args(["parse", *paths], tmp_path, REPO, small_data=small_data)
        assert dbtRunner().invoke(args).success
        nodes = json.loads((target / "manifest.json").read_text())["nodes"]
        return nodes["model.logmart.int_logmaster_changes_reassembled"]["config"]["materialized"]

    assert materialized(True) == "table"
    assert materialized(None) == "view"


def test_a_plain_dbt_command_is_told_to_go_through_logmart(tmp_path: Path) -> None:
    """dbt_project.yml names no source: without the registry's vars (a dbt run logmart did
    not start) the parse stops with a message that says what to run; with them it parses."""
    from dbt.cli.main import dbtRunner

    paths = ["--target-path", str(tmp_path / "t"), "--log-path", str(tmp_path / "l")]
    plain = ["parse", "--project-dir", str(REPO), "--profiles-dir", str(REPO / "profiles")]
    result = dbtRunner().invoke([*plain, *paths])
    assert not result.success
    message = str(result.exception)
    assert "dbt has no var logmart_source_folders" in message
    assert "`logmart dbt <command>`" in message
    assert dbtRunner().invoke(dbt_args(["parse", *paths], tmp_path, REPO)).success


@pytest.mark.parametrize("command", ["debug", "deps"])
def test_options_a_subcommand_rejects_are_not_added(command: str) -> None:
    args = dbt_args([command], W, P)
    assert "--target-path" not in args  # dbt debug/deps have no --target-path
    assert "--log-path" in args


def test_the_callers_own_options_win() -> None:
    args = dbt_args(["run", "-t", "cluster", "--target-path=/elsewhere"], W, P)
    assert args.count("--target") == 0
    assert "/w/dbt/target" not in args


def test_threads_are_added_where_the_command_takes_them_unless_the_caller_gives_them() -> None:
    assert dbt_args(["build"], W, P, threads=2)[-2:] == ["--threads", "2"]
    assert dbt_args(["parse"], W, P, threads=3)[-2:] == ["--threads", "3"]
    own = dbt_args(["build", "--threads", "8"], W, P, threads=2)
    assert own.count("--threads") == 1 and own[own.index("--threads") + 1] == "8"
    assert "--threads" not in dbt_args(["deps"], W, P, threads=2)  # deps has no --threads
    assert "--threads" not in dbt_args(["build"], W, P)  # none given: profiles.yml's


def test_a_local_session_runs_a_node_per_core_and_a_cluster_the_profiles_threads() -> None:
    assert threads_for("local[*]", 2, 2) == 2
    assert threads_for("local[3]", 3, 8) == 3
    assert threads_for("local", 1, 8) == 1
    assert threads_for("local[*]", 200, 4) == 4  # spark.default.parallelism set high
    assert threads_for("local[2]", 2, None) == 2  # cores unknown
    assert threads_for("spark://127.0.0.1:7077", 16, 2) is None


def _event(name: str, index: int, total: int, status: str = "success") -> SimpleNamespace:
    """A dbt event as callbacks get it: a test's result names the node count num_models."""
    count = {"num_models" if name == "LogTestResult" else "total": total}
    data = SimpleNamespace(index=index, status=status, **count)
    return SimpleNamespace(info=SimpleNamespace(name=name), data=data)


def test_progress_counts_nodes_done_not_node_indexes() -> None:
    """With threads the node with the last index finishes before others: the last line still
    says every node is done (it counted 406/438 on the cluster before)."""
    out = io.StringIO()
    progress = _Progress(out)
    order = [*range(1, 18), 20, 19]  # node 20 (the last index) done before node 19
    for index in order:
        progress(_event("LogStartLine", index, 20))  # a start is not a node done
        status = "fail" if index == 5 else "success"
        progress(_event("LogTestResult" if index % 2 else "LogModelResult", index, 20, status))
    progress(_event("LogModelResult", 20, 20))  # the same node twice counts once
    progress(_event("SkippingDetails", 18, 20))  # a skipped node is done too
    lines = out.getvalue().splitlines()
    assert lines[0] == "dbt: 1/20 nodes done"
    assert lines[-1] == "dbt: 20/20 nodes done, 1 failed"
    assert len(lines) == 11  # the first node, then one a tenth


def test_no_subcommand_gets_no_options() -> None:
    assert dbt_args(["--version"], W, P) == ["--version"]


def test_empty_dbt_command_is_a_user_error() -> None:
    with pytest.raises(LogmartError, match="no dbt command given"):
        dbt_args([], W, P)


def test_project_dir_is_the_repo_root_unless_overridden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOGMART_PROJECT_DIR", raising=False)
    assert project_dir() == REPO
    monkeypatch.setenv("LOGMART_PROJECT_DIR", str(tmp_path))
    with pytest.raises(LogmartError, match=r"no dbt_project\.yml in .*LOGMART_PROJECT_DIR"):
        project_dir()


@pytest.mark.spark
def test_debug_and_parse_run_with_output_in_the_warehouse(
    spark: SparkSession, warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOGMART_PROJECT_DIR", raising=False)
    repo_outputs = {p: p.exists() for p in (REPO / "target", REPO / "logs")}
    assert run_dbt(spark, ["debug"], warehouse)
    assert run_dbt(spark, ["parse"], warehouse)
    assert (warehouse / "dbt" / "target" / "manifest.json").is_file()
    assert (warehouse / "dbt" / "logs" / "dbt.log").is_file()
    assert {p: p.exists() for p in repo_outputs} == repo_outputs  # nothing new in the repo


@pytest.mark.spark
def test_without_snapshots_the_row_history_does_not_wait_for_them(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The var a build without snapshot files sets (udfs.pipeline.with_snapshots_var) takes
    int_logmart_snapshots_resolved out of fct_row_history's parents. With the var's default
    the edge is there: fct_row_history's unit tests give that model's rows."""
    assert run_dbt(spark, ["parse", "--vars", '{"logmart_snapshots": false}'], tmp_path)
    manifest = json.loads((tmp_path / "dbt" / "target" / "manifest.json").read_text())
    parents = manifest["parent_map"]["model.logmart.fct_row_history"]
    assert "model.logmart.fct_changes" in parents
    assert "model.logmart.int_logmart_snapshots_resolved" not in parents


@pytest.mark.spark
def test_an_option_dbt_does_not_know_is_a_user_error_that_names_it(
    spark: SparkSession, warehouse: Path
) -> None:
    # dbt returns its usage errors to the caller without printing them: `logmart dbt build
    # --warehouse DIR` used to end with status 1 and no word of why
    with pytest.raises(LogmartError, match=r"No such option '--warehouse'.*go before the dbt"):
        run_dbt(spark, ["build", "--warehouse", str(warehouse)], warehouse)


# Spark substitutes ${conf} in SQL text: what the settings were while dbt ran the query
SETTINGS_SQL = (
    "select '${spark.sql.codegen.factoryMode}' as factory_mode, "
    "'${spark.sql.adaptive.enabled}' as adaptive, "
    "'${spark.sql.shuffle.partitions}' as shuffle_partitions"
)
SETTINGS = ("spark.sql.codegen.factoryMode", "spark.sql.adaptive.enabled",
            "spark.sql.shuffle.partitions")  # fmt: skip


def _settings_in_dbt_run(spark: SparkSession, warehouse: Path) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ok = run_dbt(spark, ["show", "--inline", SETTINGS_SQL, "--output", "json"], warehouse)
    assert ok, out.getvalue()[-3000:]
    shown = json.loads(out.getvalue()[out.getvalue().index("{") :])["show"][0]
    return [shown["factory_mode"], shown["adaptive"], shown["shuffle_partitions"]]


@pytest.mark.spark
def test_dbt_runs_over_a_small_warehouse_as_in_a_small_session(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite's session has the large profile (C2 pays over a long run), but dbt's run over
    a small warehouse interprets expressions, plans without adaptive execution and shuffles to
    one partition, as in a small session (udfs.session.dbt_run_settings); over a large
    warehouse, or when LOGMART_SESSION_PROFILE says large, Spark's settings stay."""
    monkeypatch.delenv("LOGMART_SESSION_PROFILE", raising=False)
    outside = [spark.conf.get(key) for key in SETTINGS]
    assert outside[:2] == ["FALLBACK", "true"] and int(outside[2]) >= 4
    small = tmp_path / "small"
    assert _settings_in_dbt_run(spark, small) == ["NO_CODEGEN", "false", "1"]
    assert [spark.conf.get(key) for key in SETTINGS] == outside  # put back
    large = tmp_path / "large"
    (large / "tables").mkdir(parents=True)
    with open(large / "tables" / "part-0.parquet", "wb") as part:
        part.truncate(SMALL_WORKLOAD_BYTES + 1)  # its size is what counts
    # ${key} of a setting left at Spark's default is '' (an error for the factory mode)
    unset = [key for key in SETTINGS if spark.conf.get(key, None) is None]
    try:
        for key, value in zip(SETTINGS, outside, strict=True):
            spark.conf.set(key, value)
        assert _settings_in_dbt_run(spark, large) == outside
        monkeypatch.setenv("LOGMART_SESSION_PROFILE", "large")
        assert _settings_in_dbt_run(spark, small) == outside
    finally:
        for key in unset:
            spark.conf.unset(key)


PLACEHOLDER_MODELS = {
    "staging/stg_placeholder.sql": "select id from values (1), (2) as t(id)",
    # A table may call a temporary function registered on the session; a view may not.
    "marts/fct_placeholder.sql": (
        "select id, logmart_test_plus_one(id) as next_id,\n"
        "    cast('x' as int) as bad_cast\n"
        "from {{ ref('stg_placeholder') }}"
    ),
}


@pytest.fixture
def placeholder_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real dbt_project.yml, profiles and macros with two throwaway models."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "dbt_project.yml", project)
    shutil.copytree(REPO / "profiles", project / "profiles")
    shutil.copytree(REPO / "macros", project / "macros")
    for relative, sql in PLACEHOLDER_MODELS.items():
        (project / "models" / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / "models" / relative).write_text(sql + "\n")
    monkeypatch.setenv("LOGMART_PROJECT_DIR", str(project))
    return project


@pytest.mark.spark
def test_build_uses_the_sessions_udfs_and_literal_schemas(
    spark: SparkSession, warehouse: Path, placeholder_project: Path
) -> None:
    spark.udf.register("logmart_test_plus_one", lambda x: x + 1, "int")
    target = placeholder_project / "target"  # not the warehouse's: another project's manifest
    try:
        assert run_dbt(spark, ["build", "--target-path", str(target)], warehouse)
        rows = spark.sql("select * from marts.fct_placeholder order by id").collect()
        assert [(r.id, r.next_id) for r in rows] == [(1, 2), (2, 3)]
        assert spark.catalog.tableExists("staging.stg_placeholder")
        # dbt-spark turns ANSI off on the shared session: a bad cast is NULL, not an error.
        assert spark.conf.get("spark.sql.ansi.enabled") == "false"
        assert [r.bad_cast for r in rows] == [None, None]
        # a local session: one dbt node per core of the session (udfs.dbt_runner.local_threads)
        log = (warehouse / "dbt" / "logs" / "dbt.log").read_text(errors="replace")
        threads = re.findall(r"Concurrency: (\d+) threads", log)[-1]
        assert int(threads) == local_threads(spark) >= 1
    finally:
        spark.sql("drop table if exists marts.fct_placeholder")
        spark.sql("drop view if exists staging.stg_placeholder")


def test_the_parse_cache_is_one_file_per_project_under_the_chosen_folder(tmp_path: Path) -> None:
    assert parse_cache(P, {"LOGMART_CACHE_DIR": "/c"}).parent == Path("/c")
    assert parse_cache(P, {"XDG_CACHE_HOME": "/x"}).parent == Path("/x/logmart")
    assert parse_cache(P, {}).parent == Path.home() / ".cache" / "logmart"
    assert parse_cache(P, {}) != parse_cache(Path("/q"), {})
    assert parse_cache(P, {}).name.startswith(PARTIAL_PARSE)


def test_the_parse_cache_has_a_file_per_vars_profile_and_target() -> None:
    """What dbt compares before it reuses a parse, besides the files: another value of any of
    them is another cached parse; the same values, however spelled, the same one."""
    build = ["build", "--select", "x", "--vars", '{"a": 1}', "--target", "local"]
    assert parse_cache(P, {}, build) == parse_cache(
        P, {}, ["build", '--vars={"a": 1}', "-t", "local"]
    )  # --select does not count; --vars=, -t are the same options
    others = [
        ["build", "--vars", '{"a": 2}', "--target", "local"],
        ["build", "--vars", '{"a": 1}', "--target", "cluster"],
        ["build", "--vars", '{"a": 1}', "--target", "local", "--profile", "other"],
        ["build", "--target", "local"],
    ]
    paths = {parse_cache(P, {}, args) for args in [build, *others]}
    assert len(paths) == 5
    assert all(p.parent == parse_cache(P, {}).parent for p in paths)
    assert all(p.name.startswith(parse_cache(P, {}).name.rsplit(".", 1)[0]) for p in paths)


def test_a_target_is_seeded_from_the_cache_unless_it_holds_the_same_parse(
    tmp_path: Path,
) -> None:
    cache, target = tmp_path / "cache" / "pp.k.v", tmp_path / "wh" / "target"
    assert not seed_parse(target, cache)  # nothing cached yet: dbt parses in full
    assert not keep_parse(target, cache)  # nothing made yet
    target.mkdir(parents=True)
    (target / PARTIAL_PARSE).write_bytes(b"parsed once")
    assert keep_parse(target, cache) and cache.read_bytes() == b"parsed once"
    assert not keep_parse(target, cache)  # unchanged: not written again
    assert list(cache.parent.iterdir()) == [cache]  # no temporary file left behind

    other = tmp_path / "other" / "target"
    assert seed_parse(other, cache) and (other / PARTIAL_PARSE).read_bytes() == b"parsed once"
    assert not seed_parse(other, cache)  # the same parse already: not copied again
    # A parse the warehouse made with other vars is replaced by the one cached for these.
    (other / PARTIAL_PARSE).write_bytes(b"made with other vars")
    assert seed_parse(other, cache) and (other / PARTIAL_PARSE).read_bytes() == b"parsed once"
    assert sorted(p.name for p in other.iterdir()) == [PARTIAL_PARSE]  # no temporary file
    (other / PARTIAL_PARSE).write_bytes(b"parsed again")
    assert keep_parse(other, cache) and cache.read_bytes() == b"parsed again"  # newest wins


def test_the_cache_keeps_the_newest_parses_of_a_project(tmp_path: Path) -> None:
    """Each set of vars a project was run with leaves a parse; the oldest go beyond
    PARSES_KEPT, and another project's parses are not touched."""
    folder = tmp_path / "cache"
    env = {"LOGMART_CACHE_DIR": str(folder)}
    target = tmp_path / "wh"
    target.mkdir()
    stranger = parse_cache(Path("/q"), env)
    folder.mkdir()
    stranger.write_bytes(b"another project's")
    (folder / parse_cache(P, env).name.rsplit(".", 1)[0]).write_bytes(b"the old single file")
    made = []
    for n in range(PARSES_KEPT + 3):
        cache = parse_cache(P, env, ["build", "--vars", json.dumps({"n": n})])
        (target / PARTIAL_PARSE).write_bytes(f"parse {n}".encode())
        assert keep_parse(target, cache)
        os.utime(cache, (1_000_000 + n, 1_000_000 + n))  # mtimes apart, whatever the clock
        made.append(cache)
    kept = sorted(p for p in folder.iterdir() if p != stranger)
    assert kept == sorted(made[-PARSES_KEPT:])
    assert stranger.read_bytes() == b"another project's"


@pytest.mark.spark
def test_a_new_warehouse_starts_from_the_last_parse(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dbt takes the seeded file as its own: the second warehouse skips parsing, and so does
    a warehouse last run with other vars once it runs with the first vars again."""
    monkeypatch.delenv("LOGMART_PROJECT_DIR", raising=False)
    monkeypatch.setenv("LOGMART_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LOGMART_WAREHOUSE", str(tmp_path))  # run_dbt sets it; restored after
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    one_source = ["--vars", json.dumps({"logmart_sources": ["logmaster"]})]

    def log_of(warehouse: Path) -> str:
        return (warehouse / "dbt" / "logs" / "dbt.log").read_text()

    assert run_dbt(spark, ["parse"], first)
    assert len(list((tmp_path / "cache").glob(f"{PARTIAL_PARSE}.*"))) == 1
    assert run_dbt(spark, ["parse", *one_source], other)  # other vars: parsed in full
    assert "Unable to do partial parsing" in log_of(other)
    assert len(list((tmp_path / "cache").glob(f"{PARTIAL_PARSE}.*"))) == 2
    for warehouse in (second, other):  # a new warehouse; one whose own parse has other vars
        shutil.rmtree(warehouse / "dbt" / "logs", ignore_errors=True)
        assert run_dbt(spark, ["parse"], warehouse)
        log = log_of(warehouse)
        assert "Partial parsing enabled, no changes found, skipping parsing" in log
        assert "Unable to do partial parsing" not in log

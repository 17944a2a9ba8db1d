"""Db2 LUW capture settings: from `logmart build` flags and the environment to the data source's
options, as arguments of the build (the environment is read once, by the CLI)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import environment_without_settings
from udfs.cli import _capture_settings, build_parser
from udfs.errors import LogmartError
from udfs.pipeline import RAW_TABLES, capture_settings, source_settings

REPO = Path(__file__).resolve().parents[1]
LOG_RECORDS = next(table for table in RAW_TABLES if table.name == "db2luw_log_records")


def test_defaults_are_filter_framing_and_little_endian():
    options = LOG_RECORDS.resolved_options({})
    assert (options["framing"], options["byteorder"]) == ("filter", "little")
    assert capture_settings() == {}
    # images: the raw load decodes row images too (a constant option, part of the load key)
    assert source_settings()["db2luw"] == {
        "framing": "filter", "byteorder": "little", "images": "true"
    }  # fmt: skip


def test_environment_settings_override_the_defaults():
    settings = capture_settings(
        environ={"LOGMART_DB2LUW_FRAMING": "lsn", "LOGMART_DB2LUW_BYTEORDER": "big"}
    )
    assert settings == {"db2luw": {"framing": "lsn", "byteorder": "big"}}
    options = LOG_RECORDS.resolved_options(settings["db2luw"])
    assert (options["framing"], options["byteorder"]) == ("lsn", "big")
    assert source_settings(settings)["db2luw"] == {
        "framing": "lsn", "byteorder": "big", "images": "true"
    }  # fmt: skip


def test_given_settings_override_the_environment():
    settings = capture_settings(
        {"db2luw": {"framing": "lsn", "byteorder": None}},
        environ={"LOGMART_DB2LUW_FRAMING": "filter", "LOGMART_DB2LUW_BYTEORDER": "big"},
    )
    assert settings == {"db2luw": {"framing": "lsn", "byteorder": "big"}}


def test_the_environment_is_read_only_when_given():
    assert capture_settings(environ=None) == {}
    assert capture_settings(environ={"LOGMART_DB2LUW_FRAMING": ""}) == {}


def test_a_bad_setting_says_what_to_do():
    with pytest.raises(LogmartError, match="LOGMART_DB2LUW_BYTEORDER=middle is not one of little"):
        capture_settings(environ={"LOGMART_DB2LUW_BYTEORDER": "middle"})
    with pytest.raises(LogmartError, match="db2luw byteorder=middle is not one of little, big; "
                                           "set it to the byteorder"):  # fmt: skip
        capture_settings({"db2luw": {"byteorder": "middle"}})
    with pytest.raises(LogmartError, match="db2luw framing=middle is not one of filter, lsn"):
        LOG_RECORDS.resolved_options({"framing": "middle"})
    with pytest.raises(LogmartError, match="db2luw has no setting byte_order; the settings: "
                                           "db2luw framing, db2luw byteorder"):  # fmt: skip
        capture_settings({"db2luw": {"byte_order": "big"}})


def test_build_flags_become_the_settings_without_touching_the_environment(monkeypatch):
    monkeypatch.setenv("LOGMART_DB2LUW_FRAMING", "filter")
    monkeypatch.setenv("LOGMART_DB2LUW_BYTEORDER", "big")
    environ = dict(os.environ)
    args = build_parser().parse_args(["build", "--raw", "r", "--db2luw-framing", "lsn"])
    assert _capture_settings(args) == {"db2luw": {"framing": "lsn", "byteorder": "big"}}
    assert dict(os.environ) == environ


def test_demo_takes_the_environment_settings(monkeypatch):
    monkeypatch.setenv("LOGMART_DB2LUW_BYTEORDER", "big")
    monkeypatch.delenv("LOGMART_DB2LUW_FRAMING", raising=False)
    args = build_parser().parse_args(["demo"])
    assert _capture_settings(args) == {"db2luw": {"byteorder": "big"}}


def test_unknown_flag_value_is_refused_by_the_parser():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["build", "--raw", "r", "--db2luw-byteorder", "middle"])


# Two `logmart build` commands (udfs.cli.main, as the console script runs it) in one process,
# on one JVM (udfs.session.one_jvm: the second needs no JVM of its own), the environment
# variables given (argv[3]) set between them; a line END<code> on stdout and stderr ends each one.
TWO_BUILDS = """
import json, os, sys
from udfs.cli import main
from udfs.session import one_jvm
first, second, variables = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
with one_jvm():
    for args in (first, second):
        code = main(args)
        print(f"END{code}", flush=True)
        print(f"END{code}", file=sys.stderr, flush=True)
        if code:
            sys.exit(code)
        os.environ.update(variables)
"""


def _two_builds(
    first: list[str], second: list[str], variables: dict[str, str], env: dict[str, str]
) -> list[tuple[int, str, str]]:
    """Exit code, stdout and stderr of each build run (one if the first failed)."""
    done = subprocess.run(
        [sys.executable, "-c", TWO_BUILDS, *(json.dumps(v) for v in (first, second, variables))],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=1200,
    )  # fmt: skip
    outs = re.split(r"^END(-?[0-9]+)\n", done.stdout, flags=re.M)
    errs = re.split(r"^END-?[0-9]+\n", done.stderr, flags=re.M)
    assert len(outs) > 1, (done.stdout + done.stderr)[-3000:]
    return [
        (int(code), out, err) for out, code, err in zip(outs[0::2], outs[1::2], errs, strict=False)
    ]


@pytest.mark.spark
def test_a_big_endian_lsn_capture_builds_with_the_flags_and_with_the_variables(tmp_path: Path):
    """`logmart build --db2luw-framing lsn --db2luw-byteorder big` decodes such a capture with
    nothing quarantined; the same settings given as environment variables are the same build
    (nothing to decode again, the marts current)."""
    from logmart_generators.db2luw import generate

    raw, warehouse = tmp_path / "raw", tmp_path / "warehouse"
    generate(raw, 20, 3, framing="lsn", byteorder="big")
    where = ["--raw", str(raw), "--warehouse", str(warehouse), "--checks", "none"]
    flags = ["--db2luw-framing", "lsn", "--db2luw-byteorder", "big"]
    variables = {"LOGMART_DB2LUW_FRAMING": "lsn", "LOGMART_DB2LUW_BYTEORDER": "big"}
    runs = _two_builds(
        ["build", *where, *flags], ["build", *where], variables, environment_without_settings()
    )
    code, out, err = runs[0]
    assert code == 0, err[-3000:]
    # the first table printed: source_system, records_read, records_decoded, records_quarantined
    db2luw = next(line.split() for line in out.splitlines() if line.startswith("db2luw "))
    read, decoded, quarantined = map(int, db2luw[1:4])
    assert (quarantined, decoded) == (0, read) and read > 0, out
    code, out, err = runs[1]
    assert code == 0, err[-3000:]
    assert re.search(r"files: 0 decoded, [1-9][0-9]* unchanged", out), out
    assert "the marts are current" in out

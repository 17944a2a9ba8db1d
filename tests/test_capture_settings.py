"""Db2 LUW capture settings: from `logmart build` flags and the environment to the data source's
options, as arguments of the build (the environment is read once, by the CLI)."""

import os
import re
from pathlib import Path

import pytest

from tests.conftest import run_logmart
from udfs.cli import _capture_settings, build_parser
from udfs.errors import LogmartError
from udfs.pipeline import RAW_TABLES, capture_settings, source_settings

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


def test_a_big_endian_lsn_capture_builds_with_the_flags_and_with_the_variables(
    own_warehouse: None, tmp_path: Path
) -> None:
    """`logmart build --db2luw-framing lsn --db2luw-byteorder big` decodes such a capture with
    nothing quarantined; the same settings given as environment variables are the same build
    (nothing to decode again, the marts current). Both commands run in this process on the test
    run's JVM (`run_logmart`): the CLI reads the variables at each command."""
    from logmart_generators.db2luw import generate

    raw, warehouse = tmp_path / "raw", tmp_path / "warehouse"
    generate(raw, 20, 3, framing="lsn", byteorder="big")
    where = ["--raw", str(raw), "--warehouse", str(warehouse), "--checks", "none"]
    flags = ["--db2luw-framing", "lsn", "--db2luw-byteorder", "big"]
    variables = {"LOGMART_DB2LUW_FRAMING": "lsn", "LOGMART_DB2LUW_BYTEORDER": "big"}
    first = run_logmart(["build", *where, *flags])
    assert first.returncode == 0, first.stderr[-3000:]
    # the first table printed: source_system, records_read, records_decoded, records_quarantined
    db2luw = next(line.split() for line in first.stdout.splitlines() if line.startswith("db2luw "))
    read, decoded, quarantined = map(int, db2luw[1:4])
    assert (quarantined, decoded) == (0, read) and read > 0, first.stdout
    again = run_logmart(["build", *where], variables)
    assert again.returncode == 0, again.stderr[-3000:]
    assert re.search(r"files: 0 decoded, [1-9][0-9]* unchanged", again.stdout), again.stdout
    assert "the marts are current" in again.stdout

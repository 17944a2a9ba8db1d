"""Db2 LUW capture settings: from `logmart build` flags to the data source's options."""

import pytest

from udfs.cli import _apply_capture_settings, build_parser
from udfs.errors import LogmartError
from udfs.pipeline import RAW_TABLES

LOG_RECORDS = next(table for table in RAW_TABLES if table.name == "db2luw_log_records")


def test_defaults_are_filter_framing_and_little_endian():
    options = LOG_RECORDS.resolved_options({})
    assert (options["framing"], options["byteorder"]) == ("filter", "little")


def test_environment_settings_override_the_defaults():
    options = LOG_RECORDS.resolved_options(
        {"LOGMART_DB2LUW_FRAMING": "lsn", "LOGMART_DB2LUW_BYTEORDER": "big"}
    )
    assert (options["framing"], options["byteorder"]) == ("lsn", "big")


def test_a_bad_setting_says_what_to_do():
    with pytest.raises(LogmartError, match="LOGMART_DB2LUW_BYTEORDER=middle is not one of little"):
        LOG_RECORDS.resolved_options({"LOGMART_DB2LUW_BYTEORDER": "middle"})


def test_build_flags_become_the_settings(monkeypatch):
    # Registered so that monkeypatch restores them after the flags have set them.
    monkeypatch.setenv("LOGMART_DB2LUW_FRAMING", "")
    monkeypatch.setenv("LOGMART_DB2LUW_BYTEORDER", "")
    args = build_parser().parse_args(
        ["build", "--raw", "r", "--db2luw-framing", "lsn", "--db2luw-byteorder", "big"]
    )
    _apply_capture_settings(args)
    options = LOG_RECORDS.resolved_options()
    assert (options["framing"], options["byteorder"]) == ("lsn", "big")


def test_unknown_flag_value_is_refused_by_the_parser():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["build", "--raw", "r", "--db2luw-byteorder", "middle"])

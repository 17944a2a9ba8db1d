"""Bugs the fuzzers found, each pinned by the minimal input that showed it.

Every test names the decoder, what went wrong before the fix, and what the bytes must give now.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from udfs import values
from udfs.errors import DecodeError
from udfs.soliddb import functions as soliddb_functions


def _soliddb_layout(*columns: tuple[str, str]) -> str:
    return json.dumps(
        {
            "char_codec": "utf-8",
            "wchar_codec": "utf-16-be",
            "columns": [[name, sql_type, None, True] for name, sql_type in columns],
        }
    )


def test_soliddb_timestamp_with_a_three_digit_minute_is_a_row_error_not_a_crash():
    """values.timestamp_parts_text formatted minute 100 as '100' and sliced the text at fixed
    places: int(':0') raised ValueError out of logmart_soliddb_row (the build failed)."""
    timestamp = b"\x00\x00\x00\x00\x00\x64\x00\x00\x00\x00\x00"  # 0000-00-00 00:100:00
    with pytest.raises(DecodeError, match="out of range"):
        values.datetime11_text(timestamp, "TIMESTAMP")
    result = soliddb_functions.row_arrow(
        pa.array([bytes([11]) + timestamp]), pa.array([_soliddb_layout(("TS", "TIMESTAMP"))])
    ).to_pylist()
    assert result == [
        {
            "values": None,
            "null_reasons": None,
            "error": "column TS (TIMESTAMP): timestamp parts 0-0-0 0:100:0 are out of range",
        }
    ]


@pytest.mark.parametrize("parts", [(10000, 1, 1, 0, 0, 0), (2024, 1, 1, 0, 0, -1)])
def test_timestamp_parts_out_of_their_digits_are_decode_errors(parts):
    with pytest.raises(DecodeError, match="out of range"):
        values.timestamp_parts_text(*parts)


@pytest.mark.parametrize("codec", ["utf\x008", "hex", "base64", "rot13"])
def test_code_page_settings_that_are_not_text_codecs_are_decode_errors(codec):
    """check_codec let codecs.lookup's ValueError (a NUL in the name) escape, and accepted
    bytes-to-bytes codecs whose decode then raised LookupError: both crashed the UDFs that
    take a code page from a dbt var (e.g. logmart_soliddb_statement)."""
    with pytest.raises(DecodeError, match="unknown code page"):
        values.check_codec(codec)
    result = soliddb_functions.statement_arrow(
        pa.array([6]), pa.array([b"\x05hello"]), pa.array([codec])
    ).to_pylist()
    expected = f"unknown code page {codec!r}: use a Python codec name such as cp037"
    assert result[0]["error"] == expected


@pytest.mark.parametrize("codec", ["punycode", "undefined"])
def test_codecs_raising_plain_unicode_error_are_decode_errors(codec):
    """values.text caught UnicodeDecodeError only; these codecs raise its base UnicodeError."""
    with pytest.raises(DecodeError, match=f"not valid {codec}"):
        values.text(b"\xff\x00", codec)

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

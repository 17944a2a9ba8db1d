"""solidDB: what the log does not carry is not NULL (issue 14 item 9). DATA laid by hand
(interpretation 10: a length byte per field, 0 = NULL); a row written before ALTER TABLE ADD
COLUMN has fewer fields than its table has columns."""

from __future__ import annotations

from udfs import unavailable as na
from udfs.soliddb.catalog import numbered
from udfs.soliddb.records import UNAVAILABLE_REASONS, decode_row_data, unavailable_reasons

from .handmade import col


def test_a_column_added_after_the_row_is_unavailable_a_logged_null_is_not():
    columns = numbered([col("A", "INTEGER"), col("B", "VARCHAR"), col("ADDED", "INTEGER")])
    data = bytes.fromhex("04 00000001 00")  # A = 1, B: zero-length field = NULL; no third
    values, reasons = decode_row_data(data, columns)
    assert values == {"A": "1", "B": None, "ADDED": None}
    assert unavailable_reasons(reasons) == {"ADDED": na.ADDED_AFTER_ROW}


def test_every_reason_is_in_the_shared_vocabulary():
    assert set(UNAVAILABLE_REASONS.values()) <= set(na.REASONS)

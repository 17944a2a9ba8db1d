"""`logmart export debezium`: a value the log does not carry is Debezium's
``__debezium_unavailable_value`` (its default ``unavailable.value.placeholder``), never null,
whatever the column's type; a real NULL stays null (issue 14 item 9). No Spark."""

from __future__ import annotations

from pyspark.sql import Row

from tests.marts.test_debezium_stream import P1, P2, change, data_events, messages
from udfs import unavailable
from udfs.debezium import ROWS_QUERY

PLACEHOLDER = "__debezium_unavailable_value"


def test_the_placeholder_is_debeziums_default():
    assert unavailable.DEBEZIUM_PLACEHOLDER == PLACEHOLDER


def test_unavailable_values_are_the_placeholder_and_a_logged_null_stays_null():
    before = {"ID": "1", "NAME": None, "PRICE": None}
    after = {"ID": "1", "NAME": None, "PRICE": "2.00"}
    row = change("A", 1, "u", before, after, position=P1) | {
        "before_unavailable": {"PRICE": "added_after_row", "ID": "undecodable"},
        "after_unavailable": {"NAME": "not_logged_lob"},
    }
    # one update: a key value not in the log is not compared (no delete + create)
    (event,) = data_events(messages([row])[0])
    assert event.value["op"] == "u" and event.key == {"ID": 1}
    # ID is an INTEGER column: the placeholder is a string all the same
    assert event.value["before"] == {"ID": PLACEHOLDER, "NAME": None, "PRICE": PLACEHOLDER}
    assert event.value["after"] == {"ID": 1, "NAME": PLACEHOLDER, "PRICE": "2.00"}


def test_reasons_as_spark_map_entries_and_rows_without_them():
    entries = [Row(key="NAME", value="not_logged_long")]
    with_entries = change("A", 1, "c", None, {"ID": "4", "NAME": None}, position=P1) | {
        "after_unavailable": entries,
        "before_unavailable": None,
    }
    without = change("B", 1, "c", None, {"ID": "5", "NAME": None}, position=P2)
    first, second = data_events(messages([with_entries, without])[0])
    assert first.value["after"] == {"ID": 4, "NAME": PLACEHOLDER} and first.key == {"ID": 4}
    assert second.value["after"] == {"ID": 5, "NAME": None}


def test_the_export_query_reads_the_reasons():
    assert "map_entries(before_unavailable) as before_unavailable" in ROWS_QUERY
    assert "map_entries(after_unavailable) as after_unavailable" in ROWS_QUERY

"""Point in time: marts.fct_row_history, the table_as_of macro and SQL function, `logmart asof`.

The rows as of the last commit position must be the generator's final rows; as of an earlier
position, the rows a replay of the changes committed until then gives (tests/replay.py).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.dbt_sql import compiled
from tests.marts.oracle import (
    duckdb_type_of_sql,
    generator_capture,
    normalise,
    replayable_tables,
    source_column_types,
)
from tests.replay import as_multiset, columns_of, replay, truth_tables
from udfs import cli
from udfs.unavailable import as_of_placeholder

pytestmark = pytest.mark.spark


def committed_positions(spark, source_system: str, capture: str) -> list[str]:
    return [
        r.commit_position
        for r in spark.sql(
            "select distinct commit_position from marts.fct_changes "
            f"where source_system = '{source_system}' and capture = '{capture}' "
            "and disposition = 'committed' order by commit_position"
        ).collect()
    ]


def rows_as_of(spark, source_system: str, capture: str, name: str, point: str) -> list[dict]:
    schema, table = name.split(".", 1)
    return [
        dict(r.row_image)
        for r in spark.sql(
            f"select row_image from marts.table_as_of('{schema}', '{table}', '{point}') "
            f"where source_system = '{source_system}' and capture = '{capture}'"
        ).collect()
    ]


def column_types_of(spark, source_system: str, capture: str, name: str) -> dict[str, str]:
    """DuckDB-style type names (tests/marts/oracle.py) of a table's columns."""
    given = source_column_types(spark, source_system, capture).get(name, {})
    return {column: duckdb_type_of_sql(sql_type or "") for column, sql_type in given.items()}


def typed_multiset(rows: list[dict], types: dict[str, str]) -> Counter:
    """Rows as a multiset of values compared by type (text or typed JSON alike)."""
    return Counter(
        json.dumps(
            {k: normalise(v, types.get(k, "VARCHAR")) for k, v in row.items()},
            sort_keys=True,
            default=str,
        )
        for row in rows
    )


@pytest.mark.parametrize("source_system", ["db2zos", "db2luw", "soliddb"])
def test_rows_as_of_the_last_position_are_the_generated_tables(spark, demo, source_system):
    if not (demo.raw / "truth" / source_system).exists():
        pytest.skip(f"no {source_system} generator")
    capture = generator_capture(demo.raw, source_system)
    last = committed_positions(spark, source_system, capture)[-1]
    expected = truth_tables(demo.raw, source_system)
    for name in replayable_tables(demo.raw, source_system):
        got = rows_as_of(spark, source_system, capture, name, last)
        # a row last changed before an ADD COLUMN lacks the column in its image: null
        columns = columns_of(got, expected[name])
        assert as_multiset(got, columns) == as_multiset(expected[name], columns), name
        schema, table = name.split(".", 1)
        current = spark.sql(
            "select row_image from marts.fct_row_history "
            f"where source_system = '{source_system}' and capture = '{capture}' "
            f"and table_schema = '{schema}' and table_name = '{table}' and is_current"
        ).collect()
        assert as_multiset([dict(r.row_image) for r in current]) == as_multiset(got), name


@pytest.mark.parametrize("source_system", ["db2zos", "db2luw"])
def test_rows_as_of_earlier_positions_are_a_replay_of_the_changes_until_then(
    spark, demo, source_system
):
    if not (demo.raw / "truth" / source_system).exists():
        pytest.skip(f"no {source_system} generator")
    capture = generator_capture(demo.raw, source_system)
    positions = committed_positions(spark, source_system, capture)
    names = sorted(truth_tables(demo.raw, source_system))
    for point in (positions[0], positions[len(positions) // 3], positions[2 * len(positions) // 3]):
        replayed = replay(spark, source_system, point, log_stream=capture)  # its own stream
        for name in names:
            got = rows_as_of(spark, source_system, capture, name, point)
            want = replayed.get(name, [])
            columns = columns_of(got, want)
            assert as_multiset(got, columns) == as_multiset(want, columns), (point, name)


def test_rows_as_of_a_time_are_those_as_of_the_last_commit_before_it(spark, demo):
    capture = generator_capture(demo.raw, "db2zos")  # the demo's extract: its own stream
    transactions = spark.sql(
        "select commit_position, commit_ts from marts.fct_transactions "
        f"where source_system = 'db2zos' and log_stream = '{capture}' "
        "and commit_position is not null order by commit_position"
    ).collect()
    times = [t.commit_ts for t in transactions]
    assert times == sorted(times)  # the generator's commit times follow commit order
    middle = transactions[len(transactions) // 2]
    for name in truth_tables(demo.raw, "db2zos"):
        by_time = rows_as_of(spark, "db2zos", capture, name, middle.commit_ts.isoformat(" "))
        by_position = rows_as_of(spark, "db2zos", capture, name, middle.commit_position)
        assert as_multiset(by_time) == as_multiset(by_position), name


def test_history_versions_are_keyed_and_truncates_close_them(spark, demo):
    ended = {
        r.ended_by: r.n
        for r in spark.sql(
            "select ended_by, count(*) as n from marts.fct_row_history "
            "where source_system = 'db2zos' group by ended_by"
        ).collect()
    }
    assert {"update", "delete", "truncate", None} <= set(ended)
    kinds = {
        r.row_key_kind
        for r in spark.sql("select distinct row_key_kind from marts.fct_row_history").collect()
    }
    assert "key" in kinds


def test_table_as_of_macro_gives_the_sql_functions_rows(spark, demo):
    capture = generator_capture(demo.raw, "db2zos")
    point = committed_positions(spark, "db2zos", capture)[5]
    inline = (
        "select row_key, row_image from ("
        f"{{{{ table_as_of('SALES', 'CUSTOMER', '{point}', source_system='db2zos', "
        f"log_stream='{capture}') }}}})"
    )
    from_macro = [dict(r.row_image) for r in spark.sql(compiled(demo.warehouse, inline)).collect()]
    assert from_macro
    assert as_multiset(from_macro) == as_multiset(
        rows_as_of(spark, "db2zos", capture, "SALES.CUSTOMER", point)
    )


def test_asof_command_prints_the_rows(spark, demo, capsys):
    capture = generator_capture(demo.raw, "db2zos")
    positions = committed_positions(spark, "db2zos", capture)
    point = positions[len(positions) // 2]
    code = cli.main(
        ["asof", "--table", "SALES.CUSTOMER", "--source", "db2zos", "--stream", capture,
         "--position", point, "--format", "json", "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    expected = replay(spark, "db2zos", point, log_stream=capture).get("SALES.CUSTOMER", [])
    # asof prints typed values (numbers, ISO times): compared by value with the text images
    types = column_types_of(spark, "db2zos", capture, "SALES.CUSTOMER")
    assert got and typed_multiset(got, types) == typed_multiset(expected, types)
    assert list(got[0]) == [c["name"] for c in truth_columns(demo, "db2zos", "SALES.CUSTOMER")]
    code = cli.main(
        ["asof", "--table", "SALES.ORDERS", "--position", point,
         "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    _, err = capsys.readouterr()
    if (
        len(
            spark.sql(
                "select distinct source_system, log_stream from marts.fct_row_history "
                "where table_schema = 'SALES' and table_name = 'ORDERS'"
            ).collect()
        )
        > 1
    ):
        assert code == 2 and "more than one log stream; choose one with --source" in err


def test_values_not_in_the_log_are_unknown_as_of_a_point_not_null(spark, demo, capsys):
    # DOCS.DOCUMENT_NOTE is extracted with LOBSINCLUDED N: as of the last position each row's
    # `unavailable` is what the generator's truth says, and `logmart asof` prints the
    # placeholder where the value is not in the log (a real NULL stays null)
    name = "DOCS.DOCUMENT_NOTE"
    truth = json.loads((demo.raw / "truth" / "db2zos" / "tables.json").read_text())[name]
    assert any(truth["unavailable"]), "the generator left no LOB value out of the log"
    capture = generator_capture(demo.raw, "db2zos")
    last = committed_positions(spark, "db2zos", capture)[-1]
    got = spark.sql(
        "select row_image, unavailable from marts.table_as_of('DOCS', 'DOCUMENT_NOTE', "
        f"'{last}') where source_system = 'db2zos' and capture = '{capture}'"
    ).collect()
    pairs = [{"row": dict(r.row_image), "why": dict(r.unavailable)} for r in got]
    expected = [
        {"row": row, "why": why}
        for row, why in zip(truth["rows"], truth["unavailable"], strict=True)
    ]
    assert as_multiset(pairs) == as_multiset(expected)
    code = cli.main(
        ["asof", "--table", name, "--source", "db2zos", "--stream", capture, "--position", last,
         "--format", "json", "--warehouse", str(demo.warehouse)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    printed = [json.loads(line) for line in out.splitlines()]
    shown = [
        {k: as_of_placeholder(why[k]) if k in why else v for k, v in row.items()}
        for row, why in zip(truth["rows"], truth["unavailable"], strict=True)
    ]
    types = column_types_of(spark, "db2zos", capture, name)
    assert typed_multiset(printed, types) == typed_multiset(shown, types)


def truth_columns(demo, source_system: str, name: str) -> list[dict]:
    truth = json.loads((demo.raw / "truth" / source_system / "tables.json").read_text())
    return truth[name]["columns"]

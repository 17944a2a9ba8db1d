"""A table's rows as of a commit position or a timestamp (``logmart asof``).

Reads the SQL table function ``marts.table_as_of`` that fct_row_history's post-hook defines
from the dbt macro ``as_of_condition``, so the command, the macro and ``logmart query`` agree.

Values are typed as in the typed relations (udfs/typed.py, docs/typed-tables.md): a DECIMAL
column gives Decimal values, a DATE column dates, and so on. A value the log does not carry
(``fct_row_history.unavailable``) is not printed as NULL: its cell holds
:func:`udfs.unavailable.as_of_placeholder` of its reason, e.g. ``<unavailable: not_logged_lob>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from udfs.change_sql import sql_string
from udfs.errors import LogmartError
from udfs.typed import relation_of, typed_value_sql
from udfs.unavailable import AS_OF_PLACEHOLDER_PREFIX, AS_OF_PLACEHOLDER_SUFFIX


def as_of(
    spark: Any,
    table: str,
    point: str,
    source_system: str | None = None,
    log_stream: str | None = None,
) -> tuple[list[str], Iterator[list[Any]]]:
    """Column names and rows (one value per column, in the table's column order) of `table`
    ('SCHEMA.TABLE') as of `point`, a commit position or a timestamp text, over the whole
    log stream (every capture of it)."""
    schema, _, name = table.rpartition(".")
    if not schema or not name:
        raise LogmartError(f"--table {table!r}: give the table as SCHEMA.TABLE")
    source_system, log_stream = _logs(spark, schema, name, source_system, log_stream)
    call = f"marts.table_as_of({sql_string(schema)}, {sql_string(name)}, {sql_string(point)})"
    where = f"source_system = {sql_string(source_system)} and log_stream = {sql_string(log_stream)}"
    columns = [
        row.col_name
        for row in spark.sql(
            "select col_name, min(pos) as pos from "
            f"(select posexplode(map_keys(row_image)) as (pos, col_name) from {call} "
            f"where {where}) group by col_name order by pos, col_name"
        ).collect()
    ]
    types = {
        c.source_name: c.spark_type
        for c in relation_of(spark, table, source_system, log_stream).columns
    }
    picks = ", ".join(
        f"{typed_value_sql(f'row_image[{sql_string(c)}]', types.get(c, 'STRING'))}, "
        f"coalesce(unavailable, map())[{sql_string(c)}]"
        for c in columns
    )
    rows = spark.sql(
        f"select {picks or 'null'} from {call} where {where} order by row_key, occurrence"
    ).toLocalIterator()
    return columns, (_values_or_placeholders(list(row)) for row in rows)


def _values_or_placeholders(cells: list[Any]) -> list[Any]:
    """Each column's typed value, or the placeholder of the reason when the log does not
    carry it (never a null that reads as SQL NULL); `cells` are (value, reason) pairs."""
    return [
        value if why is None else f"{AS_OF_PLACEHOLDER_PREFIX}{why}{AS_OF_PLACEHOLDER_SUFFIX}"
        for value, why in zip(cells[0::2], cells[1::2], strict=True)
    ]


def _logs(
    spark: Any, schema: str, name: str, source_system: str | None, log_stream: str | None
) -> tuple[str, str]:
    """The one (source system, log stream) whose history holds the table."""
    conditions = [f"table_schema = {sql_string(schema)}", f"table_name = {sql_string(name)}"]
    if source_system is not None:
        conditions.append(f"source_system = {sql_string(source_system)}")
    if log_stream is not None:
        conditions.append(f"log_stream = {sql_string(log_stream)}")
    found = spark.sql(
        "select distinct source_system, log_stream from marts.fct_row_history "
        f"where {' and '.join(conditions)} order by source_system, log_stream"
    ).collect()
    if not found:
        raise LogmartError(
            f"no committed change of {schema}.{name} in marts.fct_row_history"
            + (" with that --source/--stream" if source_system or log_stream else "")
        )
    if len(found) > 1:
        logs = ", ".join(f"--source {row.source_system} --stream {row.log_stream}" for row in found)
        raise LogmartError(
            f"{schema}.{name} is in more than one log stream; choose one with {logs}"
        )
    return found[0].source_system, found[0].log_stream

"""solidDB's SQL functions (Arrow UDFs) the models call; ``FUNCTIONS`` is what
udfs.spark_udfs registers (the names are declared in udfs/soliddb/registration.py)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.functions import arrow_udf

from udfs.soliddb import functions as soliddb


@arrow_udf(soliddb.STATEMENT_TYPE)
def soliddb_statement(recid: pa.Array, data: pa.Array, char_codec: pa.Array) -> pa.Array:
    return soliddb.statement_arrow(recid, data, char_codec)


@arrow_udf(soliddb.LAYOUT_HISTORY_TYPE)
def soliddb_layout_history(
    tables: pa.Array,
    columns: pa.Array,
    records: pa.Array,
    char_codec: pa.Array,
    wchar_codec: pa.Array,
) -> pa.Array:
    return soliddb.layout_history_arrow(tables, columns, records, char_codec, wchar_codec)


@arrow_udf(soliddb.ROW_TYPE)
def soliddb_row(data: pa.Array, layout_json: pa.Array) -> pa.Array:
    return soliddb.row_arrow(data, layout_json)


FUNCTIONS = {
    "logmart_soliddb_statement": soliddb_statement,
    "logmart_soliddb_layout_history": soliddb_layout_history,
    "logmart_soliddb_row": soliddb_row,
}

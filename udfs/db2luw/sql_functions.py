"""Db2 LUW's SQL functions (Arrow UDFs) the models call; ``FUNCTIONS`` is what
udfs.spark_udfs registers (the names are declared in udfs/db2luw/registration.py)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.functions import arrow_udf

from udfs.db2luw import functions as db2luw


@arrow_udf(db2luw.LAYOUT_HISTORY_TYPE)
def db2luw_layout_history(catalog: pa.Array, settings: pa.Array, records: pa.Array) -> pa.Array:
    return db2luw.layout_history_arrow(catalog, settings, records)


@arrow_udf(db2luw.ROW_TYPE)
def db2luw_row(image: pa.Array, layout: pa.Array, byteorder: pa.Array) -> pa.Array:
    return db2luw.row_arrow(image, layout, byteorder)


FUNCTIONS = {
    "logmart_db2luw_layout_history": db2luw_layout_history,
    "logmart_db2luw_row": db2luw_row,
}

"""logmart's SQL functions, registered on a Spark session for the dbt models to call.

| function | arguments | returns |
| --- | --- | --- |
| ``logmart_logmaster_row_images`` | DATA, CHANGE TYPE, layout | images, unavailable, warnings |
| ``logmart_logmaster_catalog_event`` | DATA, CHANGE TYPE, code page | text, clone table, error |
| ``logmart_db2luw_layout_history`` | catalog, settings, layout records | layout versions |
| ``logmart_db2luw_row`` | row image, layout JSON, byte order | values, reasons, unavailable |
| ``logmart_soliddb_statement`` | RECID, DATA, char codec | LOGRECID, INFO, SQL text, kind, error |
| ``logmart_soliddb_layout_history`` | catalog rows, DDL/SQL records, codecs | layout versions |
| ``logmart_soliddb_row`` | DATA, layout JSON | values, null_reasons, error |
| ``logmart_typed_columns`` | a table's layouts, oldest first | typed columns (udfs/typed.py) |

They are Arrow UDFs (``logmart_typed_columns`` a plain one, called once per source table):
Spark hands each call a whole batch as Arrow arrays, and the decoders are
vectorised over it.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import arrow_udf, udf

from udfs.db2luw import functions as db2luw
from udfs.logmaster import catalog, rowimage
from udfs.soliddb import functions as soliddb
from udfs.typed import TYPED_COLUMNS_TYPE, typed_columns


@arrow_udf(rowimage.ROW_IMAGES_TYPE)
def logmaster_row_images(data: pa.Array, change_type: pa.Array, layout: pa.Array) -> pa.Array:
    return rowimage.row_images_arrow(data, change_type, layout)


@arrow_udf(catalog.CATALOG_EVENT_TYPE)
def logmaster_catalog_event(data: pa.Array, change_type: pa.Array, codepage: pa.Array) -> pa.Array:
    return catalog.catalog_event_arrow(data, change_type, codepage)


@arrow_udf(db2luw.LAYOUT_HISTORY_TYPE)
def db2luw_layout_history(catalog: pa.Array, settings: pa.Array, records: pa.Array) -> pa.Array:
    return db2luw.layout_history_arrow(catalog, settings, records)


@arrow_udf(db2luw.ROW_TYPE)
def db2luw_row(image: pa.Array, layout: pa.Array, byteorder: pa.Array) -> pa.Array:
    return db2luw.row_arrow(image, layout, byteorder)


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


# no type hints: Spark would try to infer a pandas/Arrow UDF kind from them
@udf(TYPED_COLUMNS_TYPE)
def typed_columns_function(layouts):
    return typed_columns(layouts)


FUNCTIONS = {
    "logmart_logmaster_row_images": logmaster_row_images,
    "logmart_logmaster_catalog_event": logmaster_catalog_event,
    "logmart_db2luw_layout_history": db2luw_layout_history,
    "logmart_db2luw_row": db2luw_row,
    "logmart_soliddb_statement": soliddb_statement,
    "logmart_soliddb_layout_history": soliddb_layout_history,
    "logmart_soliddb_row": soliddb_row,
    "logmart_typed_columns": typed_columns_function,
}


def register_functions(spark: SparkSession) -> None:
    """Register every logmart SQL function (temporary functions of this session)."""
    for name, function in FUNCTIONS.items():
        spark.udf.register(name, function)

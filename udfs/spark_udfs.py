"""logmart's SQL functions, registered on a Spark session for the dbt models to call.

Each source declares its functions (udfs/<folder>/registration.py: names and the module whose
``FUNCTIONS`` maps them to Arrow UDFs); this module registers every registered source's, and
logmart's own shared ones (:data:`SHARED_FUNCTION_NAMES`).

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

from importlib import import_module
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf

from udfs.errors import LogmartError
from udfs.sources import REGISTERED
from udfs.typed import TYPED_COLUMNS_TYPE, typed_columns

# logmart's own SQL functions, shared by every source (the sources' come from their
# registrations); built by shared_functions(), as a UDF with a DDL type needs a session
SHARED_FUNCTION_NAMES = ("logmart_typed_columns",)


def _typed_columns(layouts):  # no type hints: Spark would infer a pandas/Arrow UDF kind
    return typed_columns(layouts)


def shared_functions() -> dict[str, Any]:
    """logmart's own SQL functions (:data:`SHARED_FUNCTION_NAMES`): name -> UDF."""
    return {"logmart_typed_columns": udf(_typed_columns, TYPED_COLUMNS_TYPE)}


def functions() -> dict[str, Any]:
    """logmart's shared SQL functions and every registered source's: name -> UDF."""
    found: dict[str, Any] = shared_functions()
    for source in REGISTERED:
        if not source.sql_functions:
            continue
        provided = import_module(source.sql_function_module).FUNCTIONS
        for name in source.sql_functions:
            if name not in provided:
                raise LogmartError(
                    f"{source.system} declares the SQL function {name}, but "
                    f"{source.sql_function_module}.FUNCTIONS has no such entry; add it there "
                    "or remove it from the source's registration"
                )
            found[name] = provided[name]
    return found


def register_functions(spark: SparkSession) -> None:
    """Register every logmart SQL function (temporary functions of this session)."""
    for name, function in functions().items():
        spark.udf.register(name, function)

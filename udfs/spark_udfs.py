"""logmart's SQL functions, registered on a Spark session for the dbt models to call.

Each source declares its functions (udfs/<folder>/registration.py: names and the module whose
``FUNCTIONS`` maps them to Arrow UDFs); this module registers every registered source's.

| function | arguments | returns |
| --- | --- | --- |
| ``logmart_logmaster_row_images`` | DATA, CHANGE TYPE, layout | images, unavailable, warnings |
| ``logmart_logmaster_catalog_event`` | DATA, CHANGE TYPE, code page | text, clone table, error |
| ``logmart_db2luw_layout_history`` | catalog, settings, layout records | layout versions |
| ``logmart_db2luw_row`` | row image, layout JSON, byte order | values, reasons, unavailable |
| ``logmart_soliddb_statement`` | RECID, DATA, char codec | LOGRECID, INFO, SQL text, kind, error |
| ``logmart_soliddb_layout_history`` | catalog rows, DDL/SQL records, codecs | layout versions |
| ``logmart_soliddb_row`` | DATA, layout JSON | values, null_reasons, error |

They are Arrow UDFs: Spark hands each call a whole batch as Arrow arrays, and the decoders are
vectorised over it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pyspark.sql import SparkSession

from udfs.errors import LogmartError
from udfs.sources import REGISTERED


def functions() -> dict[str, Any]:
    """Every registered source's SQL functions: name -> Arrow UDF."""
    found: dict[str, Any] = {}
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

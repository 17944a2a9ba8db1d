"""logmart's SQL functions, registered on a Spark session for the dbt models to call.

| function | arguments | returns |
| --- | --- | --- |
| ``logmart_logmaster_row_images`` | DATA bytes, CHANGE TYPE, layout JSON | struct of before/after values (column order), warnings, error |

They are Arrow UDFs: Spark hands each call a whole batch as Arrow arrays, and the decoders are
vectorised over it.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import arrow_udf

from udfs.logmaster import rowimage


@arrow_udf(rowimage.ROW_IMAGES_TYPE)
def logmaster_row_images(data: pa.Array, change_type: pa.Array, layout: pa.Array) -> pa.Array:
    return rowimage.row_images_arrow(data, change_type, layout)


FUNCTIONS = {
    "logmart_logmaster_row_images": logmaster_row_images,
}


def register_functions(spark: SparkSession) -> None:
    """Register every logmart SQL function (temporary functions of this session)."""
    for name, function in FUNCTIONS.items():
        spark.udf.register(name, function)

"""Log Master's SQL functions (Arrow UDFs) the models call; ``FUNCTIONS`` is what
udfs.spark_udfs registers (the names are declared in udfs/logmaster/registration.py)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.functions import arrow_udf

from udfs.logmaster import catalog, rows


@arrow_udf(rows.ROW_IMAGES_TYPE)
def logmaster_row_images(data: pa.Array, change_type: pa.Array, layout: pa.Array) -> pa.Array:
    return rows.row_images_arrow(data, change_type, layout)


@arrow_udf(catalog.CATALOG_EVENT_TYPE)
def logmaster_catalog_event(data: pa.Array, change_type: pa.Array, codepage: pa.Array) -> pa.Array:
    return catalog.catalog_event_arrow(data, change_type, codepage)


FUNCTIONS = {
    "logmart_logmaster_row_images": logmaster_row_images,
    "logmart_logmaster_catalog_event": logmaster_catalog_event,
}

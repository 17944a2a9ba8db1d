"""Strict mode: fail a build on the first bad record instead of quarantining it and going on.

``logmart build --strict`` (or ``LOGMART_STRICT=1``) runs the build as usual, then looks at
``marts.quarantine`` and ``marts.reconciliation``: the first quarantined record (in file and
offset order), else the first file with a problem, becomes a :class:`LogmartError` whose one
line says where it is (file, offset or row, record type), what was wrong and what to do. The
marts stay as built, so the record can be looked at (``logmart query``). Without strict mode
the same records are in ``marts.quarantine`` and the build succeeds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pyspark.sql import SparkSession

from udfs.errors import LogmartError
from udfs.sources import by_system

STRICT_VARIABLE = "LOGMART_STRICT"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def strict_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``LOGMART_STRICT`` asks for strict mode; a value that is neither is an error."""
    value = (os.environ if environ is None else environ).get(STRICT_VARIABLE, "")
    if value.strip().lower() in _TRUE:
        return True
    if value.strip().lower() in _FALSE:
        return False
    raise LogmartError(f"{STRICT_VARIABLE}={value} is not 1 or 0; set it to 1 for strict mode")


def first_problem(spark: SparkSession) -> str | None:
    """The strict-mode message of the first quarantined record or file problem, or None."""
    record = spark.sql(
        "select source_system, source_file, raw_offset, record_type, stage, reason, what_to_do "
        "from marts.quarantine order by source_file, raw_offset limit 1"
    ).first()
    if record is not None:
        where = by_system(record.source_system).raw_offset_unit
        # a file-level problem (a rejected base snapshot) has no offset
        place = "" if record.raw_offset is None else f" {where} {record.raw_offset}"
        what = f", {record.record_type}" if record.record_type else ""
        return _one_line(
            f"strict mode: {record.source_file}{place} (stage "
            f"{record.stage}{what}): {record.reason}. What to do: {record.what_to_do} (or build "
            "without --strict to quarantine such records and go on)"
        )
    problem = spark.sql(
        "select source_file, problem from marts.reconciliation where problem is not null "
        "order by source_file limit 1"
    ).first()
    if problem is not None:
        return _one_line(
            f"strict mode: {problem.source_file}: {problem.problem} (or build without "
            "--strict to go on)"
        )
    return None


def check(spark: SparkSession) -> None:
    """Raise the strict-mode :class:`LogmartError` when a record or file is bad."""
    message = first_problem(spark)
    if message is not None:
        raise LogmartError(message)


def _one_line(text: str) -> str:
    return " ".join(text.split())

"""Where logmart keeps what it can make again but would rather not: one folder per user.

`LOGMART_CACHE_DIR`, else `$XDG_CACHE_HOME/logmart`, else `~/.cache/logmart`. It holds dbt's
parse of the project (`udfs.dbt_runner.parse_cache`) and the driver JVM's class archive
(`udfs.class_archive`). Deleting it costs time on the next build, never a result.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CACHE_VARIABLE = "LOGMART_CACHE_DIR"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The cache folder (not created here)."""
    environ = os.environ if environ is None else environ
    base = environ.get(CACHE_VARIABLE)
    if base:
        return Path(base)
    xdg = environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "logmart" if xdg else Path.home() / ".cache" / "logmart"

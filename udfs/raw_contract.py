"""The columns every raw record table starts with (docs/architecture.md "Raw table contract").

Each source's data source puts these first, then its decoded fields, so staging, quarantine and
reconciliation read provenance the same way whatever the source.
"""

from __future__ import annotations

import pyarrow as pa

COMMON_FIELDS = [
    ("source_system", pa.string()),
    ("capture", pa.string()),
    ("source_file", pa.string()),
    ("raw_offset", pa.int64()),
    ("record_length", pa.int64()),
    ("record_bytes", pa.binary()),
    ("decode_error", pa.string()),
]

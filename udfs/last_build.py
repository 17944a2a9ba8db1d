"""What the last successful build of a warehouse was, and how long its phases took.

``<warehouse>/dbt/last_build.json`` holds the build's key (the raw folder's listing as written
to ``raw.files``/``raw.captures``, logmart's code version, the dbt arguments and target) and
its timings. A build whose raw load decoded and removed nothing and whose key equals the last
one's would change nothing: ``udfs.pipeline.build`` skips ``dbt build`` then. The file is
removed before dbt runs and written only when dbt succeeded, so a failed or interrupted build
is never taken as current.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RECORD_NAME = "last_build.json"


def record_path(warehouse: Path) -> Path:
    return Path(warehouse) / "dbt" / RECORD_NAME


def build_key(listing: str, dbt_args: Sequence[str], target: str) -> str:
    """The key of a build: same key, same marts (given logmart's code, in ``listing``).
    ``--full-refresh`` is not part of it: a build from scratch and an incremental one give the
    same marts (tests/incremental), and the first build of a warehouse is always a full one."""
    args = [arg for arg in dbt_args if arg != "--full-refresh"]
    text = json.dumps({"listing": listing, "dbt_args": args, "target": target})
    return hashlib.sha256(text.encode()).hexdigest()


def read(warehouse: Path) -> dict[str, Any] | None:
    try:
        return json.loads(record_path(warehouse).read_text())
    except (OSError, ValueError):
        return None


def is_current(warehouse: Path, key: str) -> bool:
    record = read(warehouse)
    return record is not None and record.get("key") == key


def clear(warehouse: Path) -> None:
    record_path(warehouse).unlink(missing_ok=True)


def write(warehouse: Path, key: str, timings: dict[str, Any]) -> None:
    path = record_path(warehouse)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"key": key, "finished_at": dt.datetime.now(dt.UTC).isoformat(), **timings}
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record, indent=1, sort_keys=True))
    partial.replace(path)


def dbt_layer_seconds(run_results: Path) -> dict[str, dict[str, float]]:
    """Per layer of the dbt graph (seeds, staging, intermediate, marts, tests): the wall
    seconds from its first node's start to its last node's end, and the nodes' summed
    seconds (larger than the span when dbt runs several threads), from run_results.json."""
    try:
        results = json.loads(Path(run_results).read_text())["results"]
    except (OSError, ValueError, KeyError):
        return {}
    spans: dict[str, list] = {}
    for result in results:
        layer = _layer(result.get("unique_id", ""))
        times = [
            (dt.datetime.fromisoformat(t["started_at"].replace("Z", "+00:00")),
             dt.datetime.fromisoformat(t["completed_at"].replace("Z", "+00:00")))
            for t in result.get("timing", [])
            if t.get("started_at") and t.get("completed_at")
        ]  # fmt: skip
        if not times:
            continue
        entry = spans.setdefault(layer, [times[0][0], times[0][1], 0.0, 0])
        entry[0] = min(entry[0], *(start for start, _ in times))
        entry[1] = max(entry[1], *(end for _, end in times))
        entry[2] += float(result.get("execution_time") or 0.0)
        entry[3] += 1
    return {
        layer: {"span_s": round((end - start).total_seconds(), 2),
                "node_s": round(node_s, 2), "nodes": count}
        for layer, (start, end, node_s, count) in sorted(spans.items())
    }  # fmt: skip


def _layer(unique_id: str) -> str:
    kind, _, name = unique_id.partition(".")
    name = name.partition(".")[2]
    if kind in ("test", "unit_test"):
        return "tests"
    if kind == "seed":
        return "seeds"
    if name.startswith("stg_"):
        return "staging"
    if name.startswith("int_"):
        return "intermediate"
    return "marts"

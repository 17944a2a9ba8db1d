"""A short mutation fuzz run over each source's generated capture (tests/fuzz/mutate.py).

A few hundred mutations in all; ``LOGMART_FUZZ_RUNS=2000 pytest tests/fuzz/test_mutate.py``
runs that many per source, and ``benchmarks/fuzz_captures.py`` is the long run.
"""

from __future__ import annotations

import os

import pytest

from tests.fuzz import mutate

# runs per source: reading a Log Master extract (its control file parsed each time) is the slowest
RUNS = {"db2zos": 60, "db2luw": 150, "soliddb": 90}


@pytest.mark.parametrize("source", mutate.SOURCES)
def test_mutated_captures_read_without_crash_and_account_for_every_record(source, tmp_path):
    runs = int(os.environ.get("LOGMART_FUZZ_RUNS") or RUNS[source])
    report = mutate.fuzz((source,), runs=runs, seed=7, transactions=24, out=tmp_path)
    described = [f"{f.kind} run {f.run} {f.file}: {f.error} @ {f.where} after {f.mutations}"
                 for f in report.findings]  # fmt: skip
    assert described == []
    counts = report.counts[source]
    assert report.runs[source] == runs and report.mutations[source] >= runs
    assert counts.records == counts.decoded + counts.quarantined
    assert counts.quarantined > 0, "no mutation reached a quarantine: the fuzzer is not biting"
    assert counts.function_rows > 0

"""Mutation fuzz run over the generated captures of each source (no Spark needed).

    nice -n 19 python benchmarks/fuzz_captures.py --runs 2000 [--sources db2zos,db2luw,soliddb]
        [--seed 1] [--transactions 40] [--out fuzz-findings] [--time-limit 60]
    python benchmarks/fuzz_captures.py --replay fuzz-findings/db2luw/run000123

Each run mutates one file of a generated capture (bit flips, byte runs, truncation,
duplication, insertion, deletion, length fields, swaps) and reads the capture with the same
functions the Spark data sources and SQL functions run, checking that nothing raises or hangs
and that every byte and record is accounted for (``tests/fuzz/mutate.py`` says exactly what).
It prints per source the runs, mutations, bytes read, records decoded and quarantined, and the
findings; each finding's mutated file is kept under ``--out`` for ``--replay``. Exit status 1
when anything was found.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's tests package

from tests.fuzz.mutate import main

if __name__ == "__main__":
    sys.exit(main())

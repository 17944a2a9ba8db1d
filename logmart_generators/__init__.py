"""Synthetic captures of every source and their ground truth: ``logmart generate`` and
``logmart demo`` run them, the tests use them as oracles for the decoders.

Each module's ``generate(out_dir, transactions, seed)`` writes that source's capture under
``out_dir/<source folder>/`` and its truth under ``out_dir/truth/<source system>/``. They are a
package of their own, beside ``udfs`` and not in it: they are written independently of the
decoders, and editing one must not change ``udfs.pipeline.raw_version()`` (docs/architecture.md).
"""

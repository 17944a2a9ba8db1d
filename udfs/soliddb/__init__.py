"""solidDB log reader (SYS_LOG) decoding: layouts, DATA framing, catalog, readers, row images.

Spec: ``../shared/specs/004_bfd8062126bdba17.txt`` and the solidDB section and interpretation 10
of ``../shared/specs/README.md``; every interpretation logmart makes is listed in
``docs/soliddb.md``. Pure Python: the Spark wiring calls into these modules.
"""

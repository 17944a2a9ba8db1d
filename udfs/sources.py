"""The log sources logmart reads: :data:`REGISTERED`, the one list (udfs.source_declaration
says what each entry declares; docs/adding-a-source.md how to add one).

Adding a source is its folders (``udfs/<folder>``, ``models/*/<folder>``, a generator) and one
line here.
"""

from __future__ import annotations

from udfs.db2luw.registration import DB2LUW
from udfs.errors import LogmartError
from udfs.logmaster.registration import LOGMASTER
from udfs.soliddb.registration import SOLIDDB
from udfs.source_declaration import Source

REGISTERED: tuple[Source, ...] = (LOGMASTER, DB2LUW, SOLIDDB)


def by_system(system: str) -> Source:
    """The registered source whose ``source_system`` is ``system``."""
    for source in REGISTERED:
        if source.system == system:
            return source
    known = ", ".join(s.system for s in REGISTERED)
    raise LogmartError(f"no source system {system}; the sources: {known}")


def by_folder(folder: str) -> Source:
    """The registered source whose raw folder (and udfs/models folder) is ``folder``."""
    for source in REGISTERED:
        if source.folder == folder:
            return source
    known = ", ".join(s.folder for s in REGISTERED)
    raise LogmartError(f"no source folder {folder}; the source folders: {known}")


def folders() -> list[str]:
    """The source folders, in registration order."""
    return [source.folder for source in REGISTERED]


def dbt_vars() -> dict[str, object]:
    """What the dbt project needs of the registry, as dbt vars (dbt cannot import Python):
    every dbt command logmart runs gets them (``udfs.dbt_runner.dbt_args``), with each
    source's own vars at their defaults (macros/sources.sql, logmart_registry)."""
    return {
        **{var.name: var.default for s in REGISTERED for var in s.dbt_vars},
        "logmart_sources": folders(),
        "logmart_source_folders": folders(),
        "logmart_source_systems": [s.system for s in REGISTERED],
        "logmart_sql_dialects": {s.system: s.sql_dialect for s in REGISTERED},
        "logmart_file_kinds": {s.system: s.file_kind_names for s in REGISTERED},
        "logmart_decode_vars": {
            s.folder: [v.name for v in s.dbt_vars if v.decodes] for s in REGISTERED
        },
    }

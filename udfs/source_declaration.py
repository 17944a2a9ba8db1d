"""What a log source declares to be part of logmart: the interface every source implements.

A source is one :class:`Source` value, built in its own package (``udfs/<folder>/registration.py``)
and listed once in :data:`udfs.sources.REGISTERED`. Everything shared reads it: the raw load
(discovery, raw tables, capture settings), the SQL function registration, the CLI (``generate``
choices, ``--<folder>-<setting>`` flags) and, through dbt vars the build passes, the dbt project
(the enabled sources, their decode vars, the accepted ``source_system`` values, the SQL dialect
labels). docs/adding-a-source.md walks through adding one.

A declaration names the source's generator and SQL function modules as text, never by importing
them: the declarations are part of ``raw_version()`` (what decodes), and the generators and SQL
functions are not (docs/architecture.md, "Versions").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

# What a file of a capture is to the loader: 'data' holds log records (a copy of one in the same
# log stream is a duplicate); 'context' describes its capture (a catalog, a control file: the
# same bytes in another capture are that capture's own description); 'ignored' is listed only.
FileRole = Literal["data", "context", "ignored"]

# Kinds of the files in any source's stream snapshots folder (udfs.snapshots reads them): a base
# snapshot and its side file; 'ignored' for anything else there.
SNAPSHOT_KIND = "snapshot"
SNAPSHOT_SIDE_KIND = "snapshot_side"
SNAPSHOT_KINDS = frozenset({SNAPSHOT_KIND, SNAPSHOT_SIDE_KIND})
SNAPSHOT_FOLDER_OTHER = "ignored"


class DiscoveredFile(Protocol):
    """What a source's ``discover`` yields for each file under its folder."""

    path: Path
    relative: str  # to the raw root, '/' separators
    capture: str
    size: int

    @property
    def kind(self) -> str: ...


@dataclass(frozen=True)
class FileKind:
    """One kind of file in a capture (``raw.files.file_kind``): its role and how it is found."""

    name: str
    role: FileRole
    pattern: str  # where and how it is named, for people (discover decides)


@dataclass(frozen=True)
class Setting:
    """A capture setting a user chooses (e.g. Db2 LUW byte order): a data source option, given
    as the flag ``--<folder>-<name>`` of ``logmart build``/``demo`` or the environment
    variable ``variable``."""

    name: str  # the data source option
    variable: str  # environment variable, e.g. LOGMART_DB2LUW_FRAMING
    allowed: tuple[str, ...]
    default: str
    help: str  # the flag's help text

    def flag(self, folder: str) -> str:
        return f"--{folder}-{self.name.replace('_', '-')}"


@dataclass(frozen=True)
class RawTable:
    """A raw table (schema ``raw``) the source's data source writes: one ``records`` option."""

    name: str
    options: Mapping[str, str]
    kinds: frozenset[str]  # the file kinds whose records it holds
    description: str
    settings: tuple[str, ...] = ()  # names of the source's settings this table's read takes


@dataclass(frozen=True)
class DbtVar:
    """A dbt var of the source, with its default (passed to dbt by ``udfs.sources.dbt_vars``)."""

    name: str
    default: str
    description: str
    decodes: bool = True  # the source's decoded rows depend on it (incremental fingerprint)


@dataclass(frozen=True)
class Source:
    """One log source, declared once."""

    system: str  # source_system in every table, e.g. 'db2zos'
    folder: str  # its folder under the raw root and in udfs/, models/ (e.g. 'logmaster')
    display_name: str  # e.g. 'Log Master for Db2 z/OS'
    sql_dialect: str  # fct_change_sql.sql_dialect, e.g. 'Db2 for z/OS'
    data_source: type  # the Spark Python data source class
    discover: Callable[[Path, Path], Iterable[DiscoveredFile]]  # (its folder, raw root)
    raw_tables: tuple[RawTable, ...]
    files: tuple[FileKind, ...]
    settings: tuple[Setting, ...] = ()
    # Module (dotted, as text) whose FUNCTIONS maps each SQL function name to its Arrow UDF.
    sql_function_module: str = ""
    sql_functions: tuple[str, ...] = ()
    generator: str = ""  # its generator: a module of the generators package, generate(raw, n, seed)
    dbt_vars: tuple[DbtVar, ...] = ()
    # Context kinds a data file is read with (Log Master: the extract's first control file
    # gives the record header layout): they come along when only data files are decoded, and
    # the first one's bytes are part of each data file's load key.
    data_read_with: frozenset[str] = frozenset()
    # commit_position: upper-case hex digits, this many (docs: change_commit_position)
    commit_position_digits: int = 0
    # The time zone of the log's commit times (fct_changes.commit_ts): 'UTC' when the log holds
    # instants; None when it holds the wall-clock time of the system's clock, read in the zone
    # the user gives (`logmart export debezium --<system>-time-zone`, udfs.debezium).
    commit_time_zone: str | None = "UTC"
    # What raw_offset counts in the source's files, for messages: 'offset' (bytes) or 'row'.
    raw_offset_unit: str = "offset"

    @property
    def data_kinds(self) -> frozenset[str]:
        return frozenset(k.name for k in self.files if k.role == "data")

    @property
    def context_kinds(self) -> frozenset[str]:
        return frozenset(k.name for k in self.files if k.role == "context")

    @property
    def file_kind_names(self) -> list[str]:
        """Every ``raw.files.file_kind`` a file of this source can have: its own kinds, then
        those of a stream's snapshots folder."""
        names = [k.name for k in self.files]
        shared = [*sorted(SNAPSHOT_KINDS), SNAPSHOT_FOLDER_OTHER]
        return names + [n for n in shared if n not in names]

    @property
    def data_source_name(self) -> str:
        return self.data_source.name()

    def setting(self, name: str) -> Setting:
        found = [s for s in self.settings if s.name == name]
        if not found:
            known = ", ".join(s.name for s in self.settings) or "none"
            raise KeyError(f"{self.system} has no setting {name} (its settings: {known})")
        return found[0]

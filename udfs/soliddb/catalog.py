"""solidDB table layouts: from catalog exports and from the DDL text found in the log.

A row record's DATA holds values only (no names, no types), so decoding needs the layout of its
table (RELID) *as it was at the record's LOGADDR*. Layouts come from

* ``catalog/SYS_TABLES.csv`` (ID, TABLE_NAME, SCHEMA, …) and ``catalog/SYS_COLUMNS.csv``
  (REL_ID, COLUMN_NAME, COLUMN_NUMBER, DATA_TYPE, CHAR_MAX_LENGTH, NUMERIC_PRECISION,
  NUMERIC_SCALE, NULLABLE, …): the baseline, in force before the first record of the capture;
* SQL records (RECID 6) in the log: each CREATE/ALTER/RENAME/DROP TABLE statement makes a new
  layout, in force for records *after* the statement's LOGADDR.

:class:`LayoutHistory` keeps both, keyed by RELID and LOGADDR.
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from udfs.errors import DecodeError
from udfs.soliddb.ddl_sql import ColumnDef, DdlStatement, parse_statement
from udfs.soliddb.layouts import TYPE_ENCODINGS, Encoding, canonical_sql_type

# solidDB's hidden system columns are not user data; logmart leaves them out of layouts read
# from SYS_COLUMNS (interpretation: the log reader's row DATA holds user columns only).
HIDDEN_COLUMNS = frozenset(("ROWID", "ROWVER"))


@dataclass(frozen=True)
class Column:
    """One column of a table layout.

    ``position`` is 1-based (the field's place in DATA); ``key`` is the 1-based position in the
    primary key, None when the column is not part of it.
    """

    name: str
    sql_type: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    nullable: bool = True
    position: int = 0
    key: int | None = None

    @property
    def encoding(self) -> Encoding | None:
        """How the column's values are stored in DATA; None for a type logmart does not know."""
        return TYPE_ENCODINGS.get(self.sql_type)

    @property
    def ddl_type(self) -> str:
        """The type as DDL spells it: ``VARCHAR(40)``, ``NUMERIC(12,2)``, ``INTEGER``.

        A length or precision logmart does not know is left out (``VARCHAR``).
        """
        if self.encoding in (Encoding.CHAR, Encoding.UNICODE, Encoding.BINARY):
            if self.length is not None and not self.sql_type.startswith("LONG "):
                return f"{self.sql_type}({self.length})"
        elif self.encoding is Encoding.DFLOAT and self.precision is not None:
            return f"{self.sql_type}({self.precision},{self.scale or 0})"
        return self.sql_type


@dataclass(frozen=True)
class TableLayout:
    """A table's columns at one point of the log. ``rel_id`` is SYS_TABLES.ID / SYS_LOG.RELID."""

    rel_id: int | None
    schema: str | None
    name: str
    columns: tuple[Column, ...]
    origin: str = "catalog"  # 'catalog' export or 'sql' text from the log

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    @property
    def key_columns(self) -> tuple[Column, ...]:
        """Primary key columns in key order (empty when no key is known)."""
        return tuple(sorted((c for c in self.columns if c.key), key=lambda c: c.key or 0))

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise DecodeError(f"table {self.qualified_name} has no column {name}")


# --- building layouts --------------------------------------------------------------------------


def numbered(columns: Iterable[Column]) -> tuple[Column, ...]:
    """Columns renumbered 1..n in the given order (positions follow the DATA fields)."""
    return tuple(replace(column, position=i) for i, column in enumerate(columns, start=1))


def column_from_def(definition: ColumnDef, position: int = 0) -> Column:
    return Column(
        name=definition.name,
        sql_type=definition.sql_type,
        length=definition.length,
        precision=definition.precision,
        scale=definition.scale,
        nullable=definition.nullable,
        position=position,
    )


def with_primary_key(columns: Sequence[Column], key: Sequence[str]) -> tuple[Column, ...]:
    """Columns with ``key`` set from the key's column names (key columns become NOT NULL)."""
    order = {name: i for i, name in enumerate(key, start=1)}
    missing = set(order) - {c.name for c in columns}
    if missing:
        raise DecodeError(f"primary key names unknown columns {sorted(missing)}")
    return tuple(
        replace(c, key=order[c.name], nullable=False) if c.name in order else replace(c, key=None)
        for c in columns
    )


def layout_from_create(statement: DdlStatement, rel_id: int | None) -> TableLayout:
    """The layout a CREATE TABLE statement defines."""
    columns = numbered(column_from_def(d) for d in statement.columns)
    if statement.primary_key:
        columns = with_primary_key(columns, statement.primary_key)
    return TableLayout(rel_id, statement.schema, statement.table or "", columns, origin="sql")


def apply_statement(layout: TableLayout, statement: DdlStatement) -> TableLayout | None:
    """The layout after ``statement`` (ALTER/RENAME/DROP …) ran on ``layout``; None = dropped."""
    kind = statement.kind
    columns = list(layout.columns)
    if kind == "drop_table":
        return None
    if kind == "rename_table":
        schema = statement.new_schema or layout.schema
        return replace(layout, schema=schema, name=statement.new_name or layout.name, origin="sql")
    if kind == "add_column":
        if any(c.name == statement.columns[0].name for c in columns):
            raise DecodeError(f"{layout.qualified_name} already has column {statement.column}")
        columns.append(column_from_def(statement.columns[0]))
    elif kind == "drop_column":
        columns = [c for c in columns if c.name != _existing(layout, statement.column).name]
    elif kind == "rename_column":
        old = _existing(layout, statement.column)
        columns = [
            replace(c, name=statement.new_name or c.name) if c is old else c for c in columns
        ]
    elif kind == "modify_column":
        old = _existing(layout, statement.column)
        new = replace(column_from_def(statement.columns[0]), key=old.key)
        columns = [new if c is old else c for c in columns]
    elif kind == "add_primary_key":
        columns = list(with_primary_key(columns, statement.primary_key))
    else:
        return layout
    return replace(layout, columns=numbered(columns), origin="sql")


def _existing(layout: TableLayout, name: str | None) -> Column:
    return layout.column(name or "")


# --- catalog exports ---------------------------------------------------------------------------


def read_catalog(catalog_dir: Path) -> list[TableLayout]:
    """Layouts from ``SYS_TABLES.csv`` + ``SYS_COLUMNS.csv`` (header rows; extra columns and
    header case ignored). Columns are ordered by COLUMN_NUMBER and numbered 1..n."""
    tables = _csv_rows(catalog_dir / "SYS_TABLES.csv", ("ID", "TABLE_NAME"))
    required = ("REL_ID", "COLUMN_NAME", "COLUMN_NUMBER")
    columns = _csv_rows(catalog_dir / "SYS_COLUMNS.csv", required)
    return catalog_layouts(tables, columns)


def catalog_layouts(
    tables: Iterable[dict[str, str]], columns: Iterable[dict[str, str]]
) -> list[TableLayout]:
    """Layouts from catalog rows keyed by upper-case SYS_TABLES / SYS_COLUMNS column names
    (values as text, as in the CSV exports), in RELID order. Hidden columns are left out."""
    by_id = {_int(row, "ID", "SYS_TABLES.csv"): row for row in tables}
    by_table: dict[int, list[tuple[int, Column]]] = {}
    for row in columns:
        if row["COLUMN_NAME"] in HIDDEN_COLUMNS:
            continue
        rel_id = _int(row, "REL_ID", "SYS_COLUMNS.csv")
        number = _int(row, "COLUMN_NUMBER", "SYS_COLUMNS.csv")
        by_table.setdefault(rel_id, []).append((number, _column(row)))
    layouts = []
    for rel_id, table in sorted(by_id.items()):
        ordered = [column for _, column in sorted(by_table.get(rel_id, []), key=lambda p: p[0])]
        schema = table.get("SCHEMA") or table.get("TABLE_SCHEMA") or None
        layouts.append(TableLayout(rel_id, schema, table["TABLE_NAME"], numbered(ordered)))
    return layouts


def _csv_rows(path: Path, required: Sequence[str]) -> list[dict[str, str]]:
    """Rows of a catalog CSV keyed by upper-cased header names; a missing column is an error."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [name.strip().upper() for name in next(reader, [])]
        missing = [name for name in required if name not in header]
        if missing:
            raise DecodeError(f"{path.name} lacks the column(s) {', '.join(missing)}")
        return [
            dict(zip(header, (v.strip() for v in values), strict=False))
            for values in reader
            if any(value.strip() for value in values)
        ]


def _int(row: dict[str, str], name: str, file_name: str) -> int:
    try:
        return int(row[name])
    except (KeyError, ValueError, TypeError):
        raise DecodeError(f"{file_name}: {name} {row.get(name)!r} is not a whole number")


_WHOLE_NUMBER = re.compile(r"-?[0-9]+")  # ASCII digits: str.isdigit() also takes '²', '٣'…


def _optional_int(value: str | None) -> int | None:
    value = (value or "").strip()
    return int(value) if _WHOLE_NUMBER.fullmatch(value) else None


_FALSE = frozenset(("NO", "N", "0", "FALSE", "F"))


def _column(row: dict[str, str]) -> Column:
    """One SYS_COLUMNS row; DATA_TYPE may be a name or (DATA_TYPE_NUMBER) an ODBC number."""
    type_name = row.get("DATA_TYPE") or row.get("DATA_TYPE_NUMBER") or ""
    sql_type = canonical_sql_type(type_name)
    encoding = TYPE_ENCODINGS.get(sql_type)
    textual = encoding in (Encoding.CHAR, Encoding.UNICODE, Encoding.BINARY)
    return Column(
        name=row["COLUMN_NAME"],
        sql_type=sql_type,
        length=_optional_int(row.get("CHAR_MAX_LENGTH")) if textual else None,
        precision=None if textual else _optional_int(row.get("NUMERIC_PRECISION")),
        scale=_optional_int(row.get("NUMERIC_SCALE")) if encoding is Encoding.DFLOAT else None,
        nullable=(row.get("NULLABLE") or "YES").upper() not in _FALSE,
    )


# --- the layout history ------------------------------------------------------------------------


@dataclass(frozen=True)
class LayoutVersion:
    """One layout of one table, in force for records after ``since`` (LOGADDR; b'' = baseline)."""

    since: bytes
    layout: TableLayout | None  # None: the table is dropped from ``since`` on


class LayoutHistory:
    """Table layouts over the log: the catalog baseline, then each DDL statement by LOGADDR.

    Statements must be applied in LOGADDR order (the order solidDB ran them).
    """

    def __init__(self, baseline: Iterable[TableLayout] = ()):
        self._versions: dict[int, list[LayoutVersion]] = {}
        self._last = b""
        self._next_unknown = -1
        for layout in baseline:
            if layout.rel_id is None:
                raise ValueError("a baseline layout needs its RELID")
            self._versions[layout.rel_id] = [LayoutVersion(b"", layout)]

    def layout_at(self, rel_id: int, logaddr: bytes) -> TableLayout | None:
        """The layout of table ``rel_id`` for a record at ``logaddr`` (None: unknown/dropped)."""
        versions = self._versions.get(rel_id)
        if not versions:
            return None
        # The last version whose statement came strictly before this record.
        index = bisect.bisect_left([v.since for v in versions], logaddr) - 1
        if index < 0:
            index = 0 if versions[0].since == b"" else -1
        return versions[index].layout if index >= 0 else None

    def rel_id_at(self, schema: str | None, name: str, logaddr: bytes) -> int | None:
        """The RELID a table name means at ``logaddr``; an unqualified name must be unique."""
        matches = []
        for rel_id in self._versions:
            layout = self.layout_at(rel_id, logaddr)
            if layout is not None and layout.name == name and (schema in (None, layout.schema)):
                matches.append(rel_id)
        return matches[0] if len(matches) == 1 else None

    def apply_sql(self, logaddr: bytes, sql: str, rel_id: int | None = None) -> DdlStatement:
        """Parse a logged statement and record the layout it leaves (see :meth:`apply`)."""
        statement = parse_statement(sql)
        self.apply(logaddr, statement, rel_id)
        return statement

    def apply(
        self, logaddr: bytes, statement: DdlStatement, rel_id: int | None = None
    ) -> TableLayout | None:
        """Record the layout ``statement`` leaves, in force after ``logaddr``.

        ``rel_id``: the table's RELID when the log record carries it; else the table is found by
        name. Returns the new layout (None when dropped or not a layout change).
        """
        return self.apply_resolved(logaddr, statement, rel_id)[1]

    def apply_resolved(
        self, logaddr: bytes, statement: DdlStatement, rel_id: int | None = None
    ) -> tuple[int | None, TableLayout | None]:
        """:meth:`apply`, also returning the RELID the statement applied to (None when it is not
        a layout change; a negative stand-in for a CREATE TABLE with no RELID)."""
        if logaddr < self._last:
            raise ValueError("DDL statements must be applied in LOGADDR order")
        self._last = logaddr
        if not statement.changes_layout:
            return rel_id, None
        if statement.kind == "create_table":
            rel_id = rel_id if rel_id is not None else self._unknown_rel_id()
            layout: TableLayout | None = layout_from_create(statement, rel_id)
        else:
            rel_id = rel_id if rel_id is not None else self._resolve(statement, logaddr)
            current = self.layout_at(rel_id, logaddr)
            if current is None:
                raise DecodeError(f"{statement.verb} on table {statement.table}: no layout known")
            layout = apply_statement(current, statement)
        self._versions.setdefault(rel_id, []).append(LayoutVersion(logaddr, layout))
        return rel_id, layout

    def _resolve(self, statement: DdlStatement, logaddr: bytes) -> int:
        rel_id = self.rel_id_at(statement.schema, statement.table or "", logaddr)
        if rel_id is None:
            name = f"{statement.schema}.{statement.table}" if statement.schema else statement.table
            raise DecodeError(f"{statement.verb}: table {name} is not known (or not unique)")
        return rel_id

    def _unknown_rel_id(self) -> int:
        """A stand-in RELID (negative) for a CREATE TABLE whose record carries none: its later
        ALTERs still apply by name, but rows (which carry the real RELID) cannot match it."""
        self._next_unknown -= 1
        return self._next_unknown + 1

    def versions(self) -> dict[int, list[LayoutVersion]]:
        """Every table's versions in LOGADDR order (for a table-versions model)."""
        return {rel_id: list(versions) for rel_id, versions in self._versions.items()}

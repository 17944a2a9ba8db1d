"""Db2 LUW table layouts and formatted user data records (row images) as rendered values.

A :class:`TableLayout` is built three ways: from an initialize-table record (128,
:meth:`TableLayout.from_descriptors`), from a catalog export (:func:`read_catalog`), and by
applying add/drop/alter column records (:meth:`TableLayout.apply`). :class:`LayoutBook` keeps
every table's layouts by LSN so a row is decoded with the layout in force at its own LSN, and
ends a table's layouts at its DROP TABLE (its ids may be reused by a later table).
:func:`decode_row` turns one "record header and data" (the bytes ``decode_record`` returns as
``before_image`` / ``after_image``) into ``{column name: rendered text or None}`` plus, for each
None, why (``none_sources``, after python-mysql-replication): ``'null'`` (the log said NULL),
``'not_in_row'`` (the row was written before the column existed, or a long field lives outside
the row), ``'out_of_row'`` (0x8000 varying-data descriptor), ``'lob_not_inline'``,
``'system_default_unknown'``, ``'unsupported_type'`` or ``'undecodable: <why>'``; and, for
each value the log does not carry, its reason in the shared vocabulary of :mod:`udfs.unavailable`
(``unavailable``: a real NULL is not there; see :func:`unavailable_reason`).

Values are rendered as ``../shared/specs/README.md`` "Value rendering" says. Interpretations
(also in ``docs/db2luw.md``):

* Record types: the spec's user-record rule (outer 0, 0x10, or the 0x04 bit) selects the outer
  type; the *inner* type then says the format: bit 0x01 formatted user data, bit 0x02 VALUE
  COMPRESSION, 0 internal meta data (not a user row; the real Db2 10.x insert in the specs README
  is outer 0 / inner 1). An outer type with the 0x02 bit (and not 0x04) is the update (163) new
  half whose after image is in the preceding insert: ``image_elsewhere``. Other outer types are
  ``not_user_record``.
* Without VALUE COMPRESSION the fixed section starts right after the 2-byte fixed length (byte 8
  of the record header and data); column field offsets and variable-data offsets count from
  there. A column whose fixed portion lies beyond the fixed length was added after the row was
  written: ``not_in_row``.
* VALUE COMPRESSION: interpretation 11 (offsets from the start of the offset array). An entry
  with 0x8000 pointing at one byte is an attribute byte (0x01 NULL, 0x80 COMPRESSED SYSTEM
  DEFAULT); pointing at 24 bytes of a varying column it is an out-of-row descriptor.
* System defaults (rendered): 0 for numbers (with the scale), blanks for CHAR/GRAPHIC, '' for
  varying strings and LOBs, zero bytes for BINARY, 'false' for BOOLEAN. A DATE/TIME/TIMESTAMP
  system default is the insert's current date/time, which the log does not hold: None with
  ``system_default_unknown``.
* BOOLEAN renders 'true' / 'false' (the README does not say); byte 0x00 false, 0x01 true.
* Descriptor lengths are bytes: GRAPHIC(n) has length 2n. The catalog's GRAPHIC/VARGRAPHIC/DBCLOB
  LENGTH counts double-byte characters and is doubled.
* GRAPHIC/VARGRAPHIC/DBCLOB are UTF-16 (CCSID 1200, big-endian by definition; a setting,
  ``graphic_codec``, default ``utf-16-be``), CHAR/VARCHAR/CLOB use ``codec`` (default UTF-8).
  A CHAR/VARCHAR/LONG VARCHAR column the catalog export gives CODEPAGE 0 (FOR BIT DATA) is
  binary: upper-case hex, never text (the log's column descriptors do not say it).
* DECFLOAT is IEEE 754-2008 decimal64/decimal128 with a DPD coefficient (Db2's encoding on every
  platform), its 8/16 bytes in the server byte order, rendered as ``Decimal`` text.
* Inline LOBs: 0x69 starts a 4-byte header (bytes 1-3 not interpreted) and the data follows;
  a first byte 0x80 is an empty LOB whatever follows it (the spec says only "if the first byte
  is 0x80, the LOB data is an empty string"); anything else is a LOB descriptor
  (``lob_not_inline``).
* Catalog layouts follow interpretation 12: columns in COLNO order, each its fixed portion then
  its null byte when nullable. Added columns get the catalog's names by COLNO; without a
  catalog, columns are named ``C1``..``Cn``.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from udfs import unavailable as na
from udfs.db2luw.records import FIELD_TYPES, NULL_FLAGS
from udfs.errors import DecodeError
from udfs.values import (
    check_codec,
    decfloat_dpd,
    hex_upper,
    ieee_float,
    packed_date,
    packed_decimal,
    packed_time,
    packed_timestamp,
    render_float,
    scaled_text,
    text,
)

# --- field types -------------------------------------------------------------------------------

SMALLINT, INTEGER, DECIMAL, DOUBLE, REAL, BIGINT, DECFLOAT64, DECFLOAT128 = 0, 1, 2, 3, 4, 5, 6, 7
CHAR, VARCHAR, LONG_VARCHAR, DATE, TIME, TIMESTAMP = 0x100, 0x101, 0x104, 0x105, 0x106, 0x107
BLOB, CLOB, STRUCT, BOOLEAN, BINARY, VARBINARY, XML = (
    0x108,
    0x109,
    0x10D,
    0x10F,
    0x110,
    0x111,
    0x112,
)
GRAPHIC, VARGRAPHIC, LONG_VARGRAPHIC, DBCLOB = 0x200, 0x201, 0x202, 0x203

VARYING_TYPES = frozenset(
    (VARCHAR, LONG_VARCHAR, VARBINARY, BLOB, CLOB, VARGRAPHIC, LONG_VARGRAPHIC, DBCLOB, XML)
)
LOB_TYPES = frozenset((BLOB, CLOB, DBCLOB, STRUCT))
_FIXED_WIDTHS = {SMALLINT: 2, INTEGER: 4, BIGINT: 8, REAL: 4, DOUBLE: 8, DECFLOAT64: 8,
                 DECFLOAT128: 16, DATE: 4, TIME: 3, BOOLEAN: 1}  # fmt: skip
VARYING_FIXED_WIDTH = 4  # offset + length (spec: "the fixed portion of all variable fields is 4")
OUT_OF_ROW_DESCRIPTOR = 24

# SYSCAT.COLUMNS TYPENAME -> field type. LENGTH is bytes except for the double-byte types.
CATALOG_TYPES = {
    "SMALLINT": SMALLINT, "INTEGER": INTEGER, "INT": INTEGER, "BIGINT": BIGINT,
    "DECIMAL": DECIMAL, "NUMERIC": DECIMAL, "REAL": REAL, "DOUBLE": DOUBLE, "FLOAT": DOUBLE,
    "DECFLOAT": DECFLOAT64, "CHARACTER": CHAR, "CHAR": CHAR, "VARCHAR": VARCHAR,
    "LONG VARCHAR": LONG_VARCHAR, "DATE": DATE, "TIME": TIME, "TIMESTAMP": TIMESTAMP,
    "BLOB": BLOB, "CLOB": CLOB, "BOOLEAN": BOOLEAN, "BINARY": BINARY, "VARBINARY": VARBINARY,
    "XML": XML, "GRAPHIC": GRAPHIC, "VARGRAPHIC": VARGRAPHIC, "LONG VARGRAPHIC": LONG_VARGRAPHIC,
    "DBCLOB": DBCLOB,
}  # fmt: skip
_DOUBLE_BYTE_TYPES = frozenset((GRAPHIC, VARGRAPHIC, LONG_VARGRAPHIC, DBCLOB))
# Character types SYSCAT.COLUMNS marks FOR BIT DATA with CODEPAGE 0.
_BIT_DATA_TYPES = frozenset((CHAR, VARCHAR, LONG_VARCHAR))

# --- layouts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column as the row decoder needs it (a decoded column descriptor, plus its name)."""

    name: str
    field_type: int
    length: int  # bytes: fixed width of fixed types, maximum length of varying ones
    nullable: bool
    field_offset: int
    precision: int | None = None
    scale: int | None = None
    compress_system_default: bool = False
    lob_length: int | None = None
    lob_inline_length: int | None = None
    for_bit_data: bool = False  # catalog CODEPAGE 0 on a character column: binary, not text

    @property
    def type_name(self) -> str:
        return FIELD_TYPES.get(self.field_type, f"UNKNOWN_{self.field_type:#06x}")

    @property
    def varying(self) -> bool:
        return self.field_type in VARYING_TYPES

    @property
    def fixed_width(self) -> int:
        """Bytes of the column's fixed portion (without its null byte)."""
        return fixed_width(self.field_type, self.length, self.precision)

    def signature(self) -> tuple:
        """What identifies a column across ALTER records (descriptors carry no name)."""
        return (self.field_type, self.length, self.precision, self.scale, self.nullable)


def fixed_width(field_type: int, length: int, precision: int | None = None) -> int:
    """Fixed-portion bytes of a field type: the spec's list after Table 17."""
    if field_type in VARYING_TYPES or field_type in LOB_TYPES:
        return VARYING_FIXED_WIDTH
    if field_type == DECIMAL:
        return ((precision if precision is not None else length) + 2) // 2
    return _FIXED_WIDTHS.get(field_type, length)


@dataclass(frozen=True)
class TableLayout:
    """A table's columns at one point of the log, and where the layout came from."""

    columns: tuple[Column, ...]
    table_space_identifier: int | None = None
    table_identifier: int | None = None
    schema: str | None = None
    name: str | None = None
    source: str = "initialize_table"  # 'initialize_table' | 'catalog' | 'alter'
    names_from_catalog: bool = False
    key_columns: tuple[str, ...] = ()
    value_compression: bool | None = None

    @property
    def qualified_name(self) -> str:
        if self.name is None:
            return f"TBSPACEID={self.table_space_identifier},TABLEID={self.table_identifier}"
        return f"{self.schema}.{self.name}" if self.schema else self.name

    @classmethod
    def from_descriptors(
        cls, descriptors: Iterable[dict], names: list[str] | None = None, **attributes: Any
    ) -> TableLayout:
        """Build from decoded column descriptors (``decode_record(...)['new_columns']``)."""
        names = names or []
        columns = tuple(
            _column_from_descriptor(d, names[i] if i < len(names) else f"C{i + 1}")
            for i, d in enumerate(descriptors)
        )
        attributes.setdefault("names_from_catalog", bool(names))
        return cls(columns=columns, **attributes)

    def apply(self, record: dict, catalog_names: list[str] | None = None) -> TableLayout:
        """The layout after an add/drop/alter column record (a ``decode_record`` dict).

        Add/drop (102/104/169/170) log the whole new column array: names carry over by
        matching descriptors in order; new columns take the catalog's name at their COLNO, or
        ``C<n>``. Alter column attribute (113/115/116/119) replaces the column at ``column_id``
        (read as the 0-based COLNO).
        """
        kind = record["kind"].removeprefix("undo_")
        if kind in ("ddl_add_columns", "ddl_drop_columns"):
            names = _carry_names(self.columns, record["new_columns"], catalog_names or [])
            return dataclasses.replace(
                self,
                columns=tuple(
                    _column_from_descriptor(d, n)
                    for d, n in zip(record["new_columns"], names, strict=True)
                ),
                source="alter",
            )
        if kind == "ddl_alter_column":
            at = record["column_id"]
            if not 0 <= at < len(self.columns):
                raise DecodeError(f"alter column attribute names column {at}; the table has "
                                  f"{len(self.columns)}")  # fmt: skip
            new = _column_from_descriptor(record["new_columns"][0], self.columns[at].name)
            columns = (*self.columns[:at], new, *self.columns[at + 1 :])
            return dataclasses.replace(self, columns=columns, source="alter")
        raise DecodeError(f"a {record['kind']} record does not change a table layout")


def _column_from_descriptor(d: dict, name: str) -> Column:
    field_type = d["field_type"]
    length = d["length"]
    if field_type == DECIMAL:
        length = fixed_width(DECIMAL, 0, d["precision"])
    return Column(
        name=name,
        field_type=field_type,
        length=length,
        nullable=bool(d["nullable"]),
        field_offset=d["field_offset"],
        precision=d.get("precision"),
        scale=d.get("scale"),
        compress_system_default=bool(d.get("compress_system_default")),
        lob_length=d.get("lob_length"),
        lob_inline_length=d.get("lob_inline_length"),
    )


def _carry_names(old: tuple[Column, ...], new: list[dict], catalog: list[str]) -> list[str]:
    """Names for a new column array: old names where descriptors match in order."""
    new_columns = [_column_from_descriptor(d, "") for d in new]
    names, i = [], 0
    for j, column in enumerate(new_columns):
        # skip old columns that are gone (drop) until one matches this new column
        k = i
        while k < len(old) and old[k].signature() != column.signature():
            k += 1
        if k < len(old):
            names.append(old[k].name)
            i = k + 1
        else:
            names.append(catalog[j] if j < len(catalog) else f"C{j + 1}")
    return names


# --- catalog export -----------------------------------------------------------------------------


DATAPARTITIONS_REQUIRED = ("TABSCHEMA", "TABNAME", "TBSPACEID", "PARTITIONOBJECTID")
DATATYPES_REQUIRED = ("TYPESCHEMA", "TYPENAME", "SOURCENAME", "LENGTH", "SCALE")


def read_catalog(catalog_dir: Path) -> dict[tuple[int, int], TableLayout]:
    """Layouts of every table in ``tables.csv`` + ``columns.csv`` (header rows), by
    (TBSPACEID, TABLEID). Offsets by interpretation 12 (COLNO order, fixed portion then null
    byte).

    Optional files (interpretation 21): ``datapartitions.csv`` (SYSCAT.DATAPARTITIONS) adds
    each data partition's (TBSPACEID, PARTITIONOBJECTID) as another key of its table's layout,
    since row records carry the partition's ids; ``datatypes.csv`` (SYSCAT.DATATYPES) gives a
    distinct type column its source type."""
    tables = _read_csv(catalog_dir / "tables.csv", ("TABSCHEMA", "TABNAME", "TBSPACEID", "TABLEID"))
    columns = _read_csv(
        catalog_dir / "columns.csv",
        ("TABSCHEMA", "TABNAME", "COLNAME", "COLNO", "TYPENAME", "LENGTH", "SCALE", "NULLS"),
    )
    datatypes = distinct_types(
        _read_csv(catalog_dir / "datatypes.csv", DATATYPES_REQUIRED)
        if (catalog_dir / "datatypes.csv").is_file()
        else []
    )
    columns = [resolve_distinct_type(row, datatypes) for row in columns]
    by_table: dict[tuple[str, str], list[dict]] = {}
    for row in columns:
        by_table.setdefault((row["TABSCHEMA"].strip(), row["TABNAME"].strip()), []).append(row)
    layouts = {}
    for row in tables:
        schema, name = row["TABSCHEMA"].strip(), row["TABNAME"].strip()
        rows = sorted(by_table.get((schema, name), []), key=lambda r: int(r["COLNO"]))
        key = (_int(row, "TBSPACEID"), _int(row, "TABLEID"))
        layouts[key] = catalog_layout(schema, name, key, rows, row.get("COMPRESSION"))
    if (catalog_dir / "datapartitions.csv").is_file():
        by_name = {(layout.schema, layout.name): layout for layout in layouts.values()}
        for row in _read_csv(catalog_dir / "datapartitions.csv", DATAPARTITIONS_REQUIRED):
            table = by_name.get((row["TABSCHEMA"].strip(), row["TABNAME"].strip()))
            ids = (_int(row, "TBSPACEID"), _int(row, "PARTITIONOBJECTID"))
            if table is not None and ids not in layouts:
                layouts[ids] = partition_layout(table, ids)
    return layouts


def partition_layout(table: TableLayout, ids: tuple[int, int]) -> TableLayout:
    """The layout a data partition's records decode with: its table's columns and name, under
    the partition's own (TBSPACEID, PARTITIONOBJECTID) (``002_…`` Table 28: "The table space
    and table identifiers in the DMSLogRecordHeader match the TBSPACEID and PARTITIONOBJECTID
    column values in the SYSCAT.DATAPARTITIONS catalog view for the table partition")."""
    return dataclasses.replace(table, table_space_identifier=ids[0], table_identifier=ids[1])


def distinct_types(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """SYSCAT.DATATYPES rows of distinct types (METATYPE 'T' when exported; a row with a
    SOURCENAME otherwise), by (TYPESCHEMA, TYPENAME)."""
    return {
        (row["TYPESCHEMA"].strip(), row["TYPENAME"].strip()): row
        for row in rows
        if row.get("SOURCENAME", "").strip() and row.get("METATYPE", "T").strip() in ("T", "")
    }


def resolve_distinct_type(row: dict, datatypes: dict[tuple[str, str], dict]) -> dict:
    """A SYSCAT.COLUMNS row whose type is a distinct type, as its source type: TYPENAME the
    source's, LENGTH and SCALE the distinct type's (SYSCAT.COLUMNS: "LENGTH ... 0 for distinct
    types"; a distinct type's SYSCAT.DATATYPES LENGTH/SCALE are its source type's). The type
    is looked up by TYPESCHEMA and TYPENAME, or by TYPENAME alone when the export has no
    TYPESCHEMA and the name is not ambiguous. A row the SQL already joined carries the
    distinct type's SOURCENAME / TYPE_LENGTH / TYPE_SCALE itself. Built-in types (SYSIBM, or a
    TYPENAME logmart knows with no distinct type of that name) are left as they are."""
    source = (row.get("SOURCENAME") or "").strip()
    if source:
        found = {"SOURCENAME": source, "LENGTH": row.get("TYPE_LENGTH", ""),
                 "SCALE": row.get("TYPE_SCALE", "")}  # fmt: skip
    else:
        schema = (row.get("TYPESCHEMA") or "").strip()
        name = row["TYPENAME"].strip()
        if schema == "SYSIBM" or not datatypes:
            return row
        if schema:
            found = datatypes.get((schema, name))
        else:
            named = [v for (_, n), v in datatypes.items() if n == name]
            found = named[0] if len(named) == 1 else None
        if found is None:
            return row
    resolved = dict(row, TYPENAME=found["SOURCENAME"].strip())
    if _int(row, "LENGTH", 0) == 0:
        resolved["LENGTH"] = found.get("LENGTH") or ""
        resolved["SCALE"] = found.get("SCALE") or row.get("SCALE", "")
    return resolved


def catalog_layout(
    schema: str, name: str, ids: tuple[int, int], rows: list[dict], compression: str | None
) -> TableLayout:
    """One table's layout from its SYSCAT.COLUMNS rows (already in COLNO order)."""
    columns, offset = [], 0
    for row in rows:
        column = _catalog_column(row, offset)
        columns.append(column)
        offset += column.fixed_width + (1 if column.nullable else 0)
    keyed = [
        (int(r["KEYSEQ"]), r["COLNAME"].rstrip()) for r in rows if (r.get("KEYSEQ") or "").strip()
    ]
    return TableLayout(
        columns=tuple(columns),
        table_space_identifier=ids[0],
        table_identifier=ids[1],
        schema=schema,
        name=name,
        source="catalog",
        names_from_catalog=True,
        key_columns=tuple(n for _, n in sorted(keyed)),
        value_compression=None if compression is None else compression.strip() in ("V", "B"),
    )


def _catalog_column(row: dict, offset: int) -> Column:
    """Type-name -> field type and length mapping (documented in docs/db2luw.md)."""
    type_name = row["TYPENAME"].strip().upper()
    field_type = CATALOG_TYPES.get(type_name)
    if field_type is None:
        raise DecodeError(
            f"catalog type {type_name!r} of column {row['COLNAME']!r} is not known"
            " (a distinct type? export catalog/datatypes.csv: docs/db2luw.md)"
        )
    length, scale = _int(row, "LENGTH"), _int(row, "SCALE", 0)
    precision = None
    if field_type == DECFLOAT64 and length == 16:
        field_type = DECFLOAT128
    elif field_type == DOUBLE and length == 4:
        field_type = REAL
    elif field_type in _DOUBLE_BYTE_TYPES:
        length *= 2
    elif field_type == DECIMAL:
        precision, length = length, fixed_width(DECIMAL, 0, length)
    elif field_type == TIMESTAMP:
        length = 7 + (scale + 1) // 2
    return Column(
        name=row["COLNAME"].rstrip(),
        field_type=field_type,
        length=length,
        nullable=row["NULLS"].strip().upper() == "Y",
        field_offset=offset,
        precision=precision,
        scale=scale if field_type == DECIMAL else None,
        compress_system_default=(row.get("COMPRESS") or "").strip().upper() == "S",
        lob_inline_length=_int(row, "INLINE_LENGTH", 0) if field_type in LOB_TYPES else None,
        for_bit_data=field_type in _BIT_DATA_TYPES and (row.get("CODEPAGE") or "").strip() == "0",
    )


def _read_csv(path: Path, required: tuple[str, ...]) -> list[dict]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            fields = {name.strip().upper() for name in reader.fieldnames or ()}
            missing = [name for name in required if name not in fields]
            if missing:
                raise DecodeError(f"{path.name} has no {', '.join(missing)} column(s): export it "
                                  "with a header row (see docs/db2luw.md)")  # fmt: skip
            return [{k.strip().upper(): (v or "") for k, v in row.items()} for row in reader]
    except OSError as exc:
        raise DecodeError(f"cannot read catalog file {path}: {exc.strerror}")


def _int(row: dict, name: str, default: int | None = None) -> int:
    value = (row.get(name) or "").strip()
    if not value:
        if default is None:
            raise DecodeError(f"catalog column {name} is empty")
        return default
    try:
        return int(value)
    except ValueError:
        raise DecodeError(f"catalog column {name} value {value!r} is not a number")


# --- layouts by LSN -----------------------------------------------------------------------------

LAYOUT_KINDS = frozenset(
    ("ddl_initialize_table", "ddl_add_columns", "ddl_drop_columns", "ddl_alter_column",
     "undo_ddl_add_columns", "undo_ddl_drop_columns", "undo_ddl_alter_column")
)  # fmt: skip
# Records that start or end a table on its (table space, table) ids: Db2 may give a dropped
# table's ids to a table created later.
LIFECYCLE_KINDS = frozenset(
    ("ddl_create_table", "ddl_drop_table", "undo_ddl_create_table", "undo_ddl_drop_table")
)
_ENDING_KINDS = frozenset(("ddl_drop_table", "undo_ddl_create_table"))
# Update partition state records (002_… Table 28; 108 undoes 137): their DMS header carries the
# data partition's ids, their body the partitioned (master) table's (interpretation 21).
PARTITION_KINDS = frozenset(("ddl_partition_state", "undo_ddl_partition_state"))
ATTACH_ACTIONS = frozenset((1, 2))  # Table 29: ADD PARTITION, ATTACH PARTITION
DETACH_ACTIONS = frozenset((5, 6, 7, 8, 13, 15, 16, 18, 20, 21))  # Table 29: DETACH PARTITION


class LayoutVersion(NamedTuple):
    """One layout of one table over an LSN range (``valid_from_lsn <= lsn < valid_to_lsn``)."""

    valid_from_lsn: int  # -1 = from the start of the capture
    valid_to_lsn: int | None  # exclusive; None = still in force at the end of the capture
    layout: TableLayout | None  # None when no layout can be built (``error`` says why)
    incarnation: int  # 1, 2, ...: which table of those that had these ids in the capture
    table_schema: str | None
    table_name: str  # the catalog's name, else TBSPACEID=..,TABLEID=..[,DROPPED_LSN=..]
    key_columns: tuple[str, ...]
    dropped_lsn: int | None = None  # LSN of the drop (or undone create) that ended the table
    error: str | None = None
    # the partitioned table's (TBSPACEID, TABLEID) when these ids are one of its data
    # partitions over this version (interpretation 21); None for a table's own ids
    master: tuple[int, int] | None = None


@dataclass
class _Incarnation:
    """One table's life on a pair of ids: from its start to its drop (or the capture's end)."""

    start: int  # -1, a create/initialize-table LSN, or where the previous table ended
    end: int | None = None  # exclusive: the drop record's LSN + 1
    dropped_lsn: int | None = None
    being_created: bool = False  # a create table record came, its initialize table not yet
    records: list[dict] = dataclasses.field(default_factory=list)  # layout records, log order
    master: tuple[int, int] | None = None  # a data partition of this table (interpretation 21)
    attached_lsn: int | None = None  # an ADD/ATTACH PARTITION made the ids a partition here
    detached_lsn: int | None = None  # a DETACH PARTITION ended the partition here


class LayoutBook:
    """Every table's layouts by LSN: initialize-table or catalog first, then ALTER records.

    Feed :meth:`observe` the decoded records in log order; :meth:`history` gives a table's
    versions, :meth:`at` the layout in force at an LSN. The catalog is the state at export time
    (the end of the capture), so before the first ALTER of a table its *old* column array is
    the layout, named from the catalog.

    A table's ids (table space, table) are reused after DROP TABLE, so the records of one pair
    of ids are cut into *incarnations*: a drop table (or an undone create) ends the table in
    force after its own LSN; a create table, or an initialize table not preceded by its create
    (the spec: it is written when a new table is being created), starts the next one; an undo
    drop table brings the dropped table back. Only the table still there at the end of the
    capture is the catalog's: the earlier ones are described by their own records only
    (columns ``C1``..``Cn``, named ``TBSPACEID=..,TABLEID=..,DROPPED_LSN=<16 hex digits>``, or
    ``DROPPED_BEFORE_LSN=`` the next table's first LSN when the capture has no drop record).

    Data partitions (interpretation 21): an update partition state record (137) of ADD or
    ATTACH PARTITION whose master table the catalog has makes its ids (the record's DMS
    header) a partition of that table from its own LSN on: the table's layout and name on the
    partition's ids. A DETACH PARTITION record ends that after its own LSN (rows before it stay
    the table's; what follows on the ids is the detached table, the catalog's if it has the
    ids). A 108 record undoes the latest 137 of the same ids and action. ``partitions`` maps
    the catalog's own data partitions (SYSCAT.DATAPARTITIONS) to their table's ids.
    """

    def __init__(
        self,
        catalog: dict[tuple[int, int], TableLayout] | None = None,
        partitions: dict[tuple[int, int], tuple[int, int]] | None = None,
    ):
        self.catalog = dict(catalog or {})
        self.partitions = dict(partitions or {})
        self._records: dict[tuple[int, int], list[dict]] = {}
        self._histories: dict[tuple[int, int], list[LayoutVersion]] = {}

    def observe(self, record: dict) -> None:
        """Take a ``decode_record`` dict; only layout, create/drop table and partition state
        records count."""
        kind = record.get("kind")
        if kind not in LAYOUT_KINDS and kind not in LIFECYCLE_KINDS and kind not in PARTITION_KINDS:
            return
        key = (record["table_space_identifier"], record["table_identifier"])
        self._records.setdefault(key, []).append(record)
        self._histories.pop(key, None)

    def history(self, table_space: int, table: int) -> list[LayoutVersion]:
        """Every version of the tables that had these ids, in LSN order."""
        key = (table_space, table)
        if key not in self._histories:
            self._histories[key] = _history(
                key, self._records.get(key, []), self.catalog, self.partitions.get(key)
            )
        return self._histories[key]

    def version_at(self, table_space: int, table: int, lsn: int) -> LayoutVersion | None:
        """The version in force at ``lsn``, or None when no table had these ids then."""
        for version in self.history(table_space, table):
            if version.valid_from_lsn <= lsn and (
                version.valid_to_lsn is None or lsn < version.valid_to_lsn
            ):
                return version
        return None

    def at(self, table_space: int, table: int, lsn: int) -> TableLayout | None:
        """The layout in force at ``lsn``, or None when nothing describes the table then."""
        version = self.version_at(table_space, table, lsn)
        return None if version is None else version.layout


def _master_ids(record: dict) -> tuple[int, int]:
    return record["master_table_space_identifier"], record["master_table_identifier"]


def _partition_records(records: list[dict], masters: Iterable[tuple[int, int]]) -> list[dict]:
    """The update partition state records that map ids: those of a master table the catalog
    has, without the ones a rollback record (108, same action) undid, and without the 108s."""
    kept: list[dict] = []
    for record in sorted(records, key=lambda r: r["lsn"]):
        if record["kind"] not in PARTITION_KINDS or _master_ids(record) not in masters:
            continue
        if record["kind"] == "ddl_partition_state":
            kept.append(record)
            continue
        undone = [n for n, r in enumerate(kept)
                  if r["partition_action"] == record["partition_action"]]  # fmt: skip
        if undone:
            del kept[undone[-1]]
    return kept


def _incarnations(
    records: list[dict], has_catalog: bool, masters: Iterable[tuple[int, int]] = ()
) -> list[_Incarnation]:
    """Cut one pair of ids' records (any order) into the tables that had the ids; ``masters``:
    the ids of the tables whose partition state records count (the catalog's)."""
    done: list[_Incarnation] = []
    current: _Incarnation | None = None  # the table that has the ids now (not dropped)
    detached = False  # a DETACH ended the partition: more detach records are the same detach
    masters = set(masters)
    records = [r for r in records if r["kind"] not in PARTITION_KINDS] + _partition_records(
        [r for r in records if r["kind"] in PARTITION_KINDS], masters
    )

    def begin(start: int) -> _Incarnation:
        nonlocal current
        if current is not None:  # a new table on ids still in use: the old one is gone
            current.end = start
        current = _Incarnation(start=start)
        done.append(current)
        return current

    def resume() -> _Incarnation:
        """The table the ids belong to now (one whose start the capture does not hold)."""
        if current is not None:
            return current
        return begin(done[-1].end if done else -1)

    for record in sorted(records, key=lambda r: r["lsn"]):
        kind, lsn = record["kind"], record["lsn"]
        if kind == "ddl_partition_state":
            action = record["partition_action"]
            if action in ATTACH_ACTIONS and not (
                current is not None and current.master == _master_ids(record)
            ):
                table = current if current is not None and current.being_created else begin(lsn)
                table.master, table.attached_lsn, detached = _master_ids(record), lsn, False
            elif action in DETACH_ACTIONS and not detached:
                table = resume()
                table.master = table.master or _master_ids(record)
                table.end, table.detached_lsn, current, detached = lsn + 1, lsn, None, True
        elif kind == "ddl_create_table":
            if current is None or not current.being_created:  # a second one: MDC block map
                begin(lsn).being_created = True
        elif kind == "ddl_initialize_table":
            table = current if current is not None and current.being_created else begin(lsn)
            table.being_created = False
            table.records.append(record)
        elif kind in _ENDING_KINDS:
            if current is None and done and done[-1].dropped_lsn is not None:
                done[-1].end = lsn + 1  # another object of the same table (MDC block map)
                continue
            table = resume()
            table.end, table.dropped_lsn, current = lsn + 1, lsn, None
        elif kind == "undo_ddl_drop_table":
            if current is None and done and done[-1].dropped_lsn is not None:
                current = done[-1]  # the drop was rolled back
                current.end = current.dropped_lsn = None
        else:
            resume().records.append(record)
    if current is None and has_catalog:  # the catalog's table came after the last drop
        begin(done[-1].end if done else -1)
    return done


def _history(
    key: tuple[int, int],
    records: list[dict],
    catalog: dict[tuple[int, int], TableLayout],
    partition_of: tuple[int, int] | None = None,
) -> list[LayoutVersion]:
    own = catalog.get(key)
    incarnations = _incarnations(records, own is not None, catalog)
    history = []
    for number, table in enumerate(incarnations, 1):
        base, master = _base(table, key, catalog, partition_of)
        names = [c.name for c in base.columns] if base else []
        attributes = _identity(base, key)
        if base is not None:
            name = base.name
        else:
            name = f"TBSPACEID={key[0]},TABLEID={key[1]}"
            following = incarnations[number] if number < len(incarnations) else None
            if table.dropped_lsn is not None:
                name += f",DROPPED_LSN={table.dropped_lsn:016X}"
            elif following is not None and following.attached_lsn == table.end:
                name += f",ATTACHED_LSN={table.end:016X}"  # now a partition of another table
            elif table.end is not None:  # a later table took the ids; its drop is not logged
                name += f",DROPPED_BEFORE_LSN={table.end:016X}"
        common = {
            "incarnation": number,
            "table_schema": base.schema if base else None,
            "table_name": name,
            "key_columns": base.key_columns if base else (),
            "dropped_lsn": table.dropped_lsn,
            "master": master,
        }
        try:
            versions = _versions(table, base, names, attributes)
        except DecodeError as exc:
            versions, error = [], exc.reason
        else:
            error = None if versions else _no_layout(table, key)
        if error is not None:
            history.append(LayoutVersion(table.start, table.end, None, error=error, **common))
            continue
        for n, (start, layout) in enumerate(versions):
            end = versions[n + 1][0] if n + 1 < len(versions) else table.end
            history.append(LayoutVersion(start, end, layout, **common))
    return history


def _base(
    table: _Incarnation,
    key: tuple[int, int],
    catalog: dict[tuple[int, int], TableLayout],
    partition_of: tuple[int, int] | None,
) -> tuple[TableLayout | None, tuple[int, int] | None]:
    """The catalog layout an incarnation starts from, and its master table when it is a data
    partition: the catalog's own entry for the table there at the end (the export is the
    state at the end), else, for a partition the log attached or detached, its master's."""
    if table.end is None and key in catalog:
        return catalog[key], table.master or partition_of
    if table.master is not None and table.master in catalog:
        return partition_layout(catalog[table.master], key), table.master
    return None, None


def _versions(
    table: _Incarnation, base: TableLayout | None, names: list[str], attributes: dict
) -> list[tuple[int, TableLayout]]:
    """(first LSN in force, layout) of one incarnation; the first from the table's start."""
    versions: list[tuple[int, TableLayout]] = []
    for record in table.records:
        if record["kind"] == "ddl_initialize_table":
            layout = TableLayout.from_descriptors(record["new_columns"], names, **attributes)
            versions.append((record["lsn"] if versions else table.start, layout))
            continue
        if not versions:
            versions.append((table.start, _before_first_alter(record, base, names, attributes)))
        versions.append((record["lsn"], versions[-1][1].apply(record, names)))
    if not versions and base is not None:
        versions.append((table.start, base))
    return versions


def _no_layout(table: _Incarnation, key: tuple[int, int]) -> str:
    ids = f"TBSPACEID={key[0]},TABLEID={key[1]}"
    if table.dropped_lsn is not None:
        return (f"{ids} was dropped at LSN {table.dropped_lsn:016X} and no initialize-table record "
                "of the capture describes it; the catalog export (taken at the end) describes "
                "only the table that has these ids then")  # fmt: skip
    return (f"{ids} was created at LSN {table.start:016X} but no initialize-table record "
            "follows its create table record")  # fmt: skip


def _before_first_alter(record: dict, base, names, attributes) -> TableLayout:
    """The layout before a table's first ALTER record: its old column array, or the catalog."""
    if record.get("old_columns") and "alter_column" not in record["kind"]:
        return TableLayout.from_descriptors(
            record["old_columns"], names[: len(record["old_columns"])], source="alter",
            **attributes,
        )  # fmt: skip
    if base is None:
        raise DecodeError(
            f"{record['kind']} on table {record['table_space_identifier']}/"
            f"{record['table_identifier']} with no earlier layout and no catalog entry"
        )
    return base


def _identity(base: TableLayout | None, key: tuple[int, int]) -> dict:
    if base is None:
        return {"table_space_identifier": key[0], "table_identifier": key[1]}
    return {
        "table_space_identifier": key[0],
        "table_identifier": key[1],
        "schema": base.schema,
        "name": base.name,
        "key_columns": base.key_columns,
        "value_compression": base.value_compression,
    }


# --- row decoding -------------------------------------------------------------------------------

USER_ROW, INTERNAL, IMAGE_ELSEWHERE, NOT_USER_RECORD = (
    "user_row", "internal", "image_elsewhere", "not_user_record"
)  # fmt: skip


class DecodedRow(NamedTuple):
    """A decoded row image: values by column name and, for each None value, why; for each
    value the log does not carry (every None but a logged NULL), its udfs.unavailable reason."""

    values: dict[str, str | None]
    none_sources: dict[str, str]
    record_kind: str  # user_row | internal | image_elsewhere | not_user_record
    record_type: int  # the outer record type
    format: str | None  # 'formatted' | 'value_compression' (user rows)
    unavailable: dict[str, str]  # column -> udfs.unavailable reason


def decode_row(
    record_header_and_data: bytes,
    layout: TableLayout,
    byteorder: str = "little",
    *,
    codec: str = "utf-8",
    graphic_codec: str = "utf-16-be",
) -> DecodedRow:
    """Decode one record header + data with ``layout`` (see the module docstring)."""
    data = record_header_and_data
    if len(data) < 4:
        raise DecodeError(f"row image of {len(data)} bytes has no 4-byte record header")
    outer = data[0]
    length = int.from_bytes(data[2:4], byteorder)
    if length != len(data):
        raise DecodeError(f"row record header says {length} bytes, the image has {len(data)}")
    if not (outer in (0x00, 0x10) or outer & 0x04):
        kind = IMAGE_ELSEWHERE if outer & 0x02 else NOT_USER_RECORD
        return DecodedRow({}, {}, kind, outer, None, {})
    if len(data) < 5 or not data[4] & 0x03:
        return DecodedRow({}, {}, INTERNAL, outer, None, {})
    if len(data) < 8:
        raise DecodeError(f"user row image of {len(data)} bytes is cut inside its 8-byte header")
    plan = _plan(layout, byteorder, check_codec(codec), check_codec(graphic_codec))
    formatted = bool(data[4] & 0x01)
    read = _formatted if formatted else _value_compressed
    values, reasons, added = read(data, plan, byteorder)
    missing = {
        entry.column.name: unavailable_reason(
            entry.column, reasons[entry.column.name], added=entry.column.name in added
        )
        for entry in plan
        if entry.column.name in reasons
    }
    kept = {name: why for name, why in missing.items() if why is not None}
    return DecodedRow(
        values, reasons, USER_ROW, outer, "formatted" if formatted else "value_compression", kept
    )


def unavailable_reason(column: Column, none_source: str, *, added: bool = False) -> str | None:
    """The :mod:`udfs.unavailable` reason of a None value, from its none_source and the
    column's type; None for a logged NULL (``'null'``). ``added``: the row image ends before
    the column (its none_source is ``not_in_row``, as a LONG field's is): ``added_after_row``.

    ``out_of_row`` / ``lob_not_inline`` / ``not_in_row`` / ``unsupported_type`` of a LOB, LONG
    or XML column are that type's ``not_logged_*``; ``out_of_row`` of another varying column is
    ``not_logged_out_of_row``; ``system_default_unknown`` is ``default_not_logged``; anything
    else (``unsupported_type`` of a STRUCT or unknown type, ``undecodable: …``) is
    ``undecodable``."""
    t = column.field_type
    if none_source == "null":
        return None
    if added:
        return na.ADDED_AFTER_ROW
    if none_source in ("out_of_row", "lob_not_inline", "not_in_row", "unsupported_type"):
        if t in LOB_TYPES and t != STRUCT:
            return na.NOT_LOGGED_LOB
        if t in (LONG_VARCHAR, LONG_VARGRAPHIC):
            return na.NOT_LOGGED_LONG
        if t == XML:
            return na.NOT_LOGGED_XML
        if none_source == "out_of_row":
            return na.NOT_LOGGED_OUT_OF_ROW
    if none_source == "system_default_unknown":
        return na.DEFAULT_NOT_LOGGED
    return na.UNDECODABLE


class _Reason(Exception):
    """A value that decodes to None, and why (internal control flow of the value decoders)."""

    def __init__(self, reason: str):
        self.reason = reason


class _ColumnPlan(NamedTuple):
    column: Column
    decode: Callable[[bytes], str]  # value bytes -> rendered text (may raise _Reason)
    default: Callable[[], str]  # the rendered system default (may raise _Reason)


@functools.lru_cache(maxsize=256)
def _plan(layout: TableLayout, byteorder: str, codec: str, graphic: str) -> tuple[_ColumnPlan, ...]:
    """Per-column decoders chosen once per layout and settings."""
    return tuple(
        _ColumnPlan(c, _value_decoder(c, byteorder, codec, graphic), _default_renderer(c))
        for c in layout.columns
    )


def _formatted(
    data: bytes, plan: tuple[_ColumnPlan, ...], byteorder: str
) -> tuple[dict, dict, set[str]]:
    """(values, none_sources, columns the row ends before: added after it was written)."""
    fixed_length = int.from_bytes(data[6:8], byteorder)
    if 8 + fixed_length > len(data):
        raise DecodeError(f"fixed section of {fixed_length} bytes runs past the {len(data)}-byte "
                          "row")  # fmt: skip
    values: dict[str, str | None] = {}
    reasons: dict[str, str] = {}
    added: set[str] = set()
    for entry in plan:
        column = entry.column
        start = 8 + column.field_offset
        end = start + column.fixed_width
        if end + (1 if column.nullable else 0) > 8 + fixed_length:
            values[column.name], reasons[column.name] = None, "not_in_row"
            added.add(column.name)
            continue
        if column.nullable and _is_null(data[end], column):
            values[column.name], reasons[column.name] = None, "null"
            continue
        raw = data[start:end]
        if column.varying or column.field_type in LOB_TYPES:
            raw = _variable_data(data, raw, column, byteorder)
        _decode_into(entry, raw, values, reasons)
    return values, reasons, added


def _is_null(null_byte: int, column: Column) -> bool:
    if null_byte not in (0x00, 0x01):
        raise DecodeError(f"null byte of column {column.name} is 0x{null_byte:02X}, not 00/01")
    return null_byte == 0x01


def _variable_data(data: bytes, fixed: bytes, column: Column, byteorder: str) -> bytes | None:
    """Follow a varying field's (offset, length) from the fixed section; None if out of row."""
    offset = int.from_bytes(fixed[0:2], byteorder)
    length = int.from_bytes(fixed[2:4], byteorder)
    if offset & 0x8000:
        return None
    start = 8 + offset
    if start + length > len(data):
        raise DecodeError(f"column {column.name}: variable data at {offset} length {length} runs "
                          f"past the {len(data)}-byte row")  # fmt: skip
    return data[start : start + length]


def _value_compressed(
    data: bytes, plan: tuple[_ColumnPlan, ...], byteorder: str
) -> tuple[dict, dict, set[str]]:
    count = int.from_bytes(data[6:8], byteorder)
    base = 8  # interpretation 11: offsets count from the start of the offset array
    if base + 2 * (count + 1) > len(data):
        raise DecodeError(f"offset array of {count + 1} entries runs past the {len(data)}-byte row")
    if count > len(plan):
        raise DecodeError(f"row holds {count} columns, the table layout has {len(plan)}")
    offsets = struct.unpack_from(
        ("<" if byteorder == "little" else ">") + "H" * (count + 1), data, base
    )
    values: dict[str, str | None] = {}
    reasons: dict[str, str] = {}
    added: set[str] = set()
    for i, entry in enumerate(plan):
        column = entry.column
        if i >= count:
            values[column.name], reasons[column.name] = None, "not_in_row"
            added.add(column.name)
            continue
        start, end = base + (offsets[i] & 0x7FFF), base + (offsets[i + 1] & 0x7FFF)
        if not start <= end <= len(data):
            raise DecodeError(f"column {column.name}: data {start}..{end} is outside the "
                              f"{len(data)}-byte row")  # fmt: skip
        raw = data[start:end]
        if offsets[i] & 0x8000:
            _attribute(entry, raw, values, reasons)
        else:
            _decode_into(entry, raw, values, reasons)
    return values, reasons, added


def _attribute(entry: _ColumnPlan, raw: bytes, values: dict, reasons: dict) -> None:
    """A 0x8000 offset: attribute byte (NULL / system default) or out-of-row descriptor."""
    name = entry.column.name
    if len(raw) == 1 and raw[0] == 0x01:
        values[name], reasons[name] = None, "null"
    elif len(raw) == 1 and raw[0] == 0x80:
        try:
            values[name] = entry.default()
        except _Reason as why:
            values[name], reasons[name] = None, why.reason
    elif len(raw) == OUT_OF_ROW_DESCRIPTOR and entry.column.varying:
        values[name], reasons[name] = None, "out_of_row"
    else:
        raise DecodeError(f"column {name}: 0x8000 entry points at {raw.hex().upper()}, neither an "
                          "attribute byte (01/80) nor a 24-byte out-of-row descriptor")  # fmt: skip


def _decode_into(entry: _ColumnPlan, raw: bytes | None, values: dict, reasons: dict) -> None:
    name = entry.column.name
    if raw is None:
        values[name], reasons[name] = None, "out_of_row"
        return
    try:
        values[name] = entry.decode(raw)
    except _Reason as why:
        values[name], reasons[name] = None, why.reason
    except DecodeError as exc:
        values[name], reasons[name] = None, f"undecodable: {exc.reason}"


# --- value decoders -----------------------------------------------------------------------------


def _value_decoder(column: Column, byteorder: str, codec: str, graphic: str) -> Callable:
    t = column.field_type
    if t in (SMALLINT, INTEGER, BIGINT):
        return functools.partial(_integer, width=column.fixed_width, byteorder=byteorder)
    if t == DECIMAL:
        return functools.partial(_decimal, scale=column.scale or 0)
    if t in (REAL, DOUBLE):
        return functools.partial(_float, width=column.fixed_width, byteorder=byteorder)
    if t in (DECFLOAT64, DECFLOAT128):
        return functools.partial(decfloat_dpd, byteorder=byteorder)
    if t in (CHAR, VARCHAR):
        return hex_upper if column.for_bit_data else functools.partial(text, codec=codec)
    if t in (GRAPHIC, VARGRAPHIC):
        return functools.partial(text, codec=graphic)
    if t in (BINARY, VARBINARY):
        return hex_upper
    if t == DATE:
        return packed_date
    if t == TIME:
        return packed_time
    if t == TIMESTAMP:
        return packed_timestamp
    if t == BOOLEAN:
        return _boolean
    if t == CLOB:
        return functools.partial(_inline_lob, render=functools.partial(text, codec=codec))
    if t == DBCLOB:
        return functools.partial(_inline_lob, render=functools.partial(text, codec=graphic))
    if t == BLOB:
        return functools.partial(_inline_lob, render=hex_upper)
    if t in (LONG_VARCHAR, LONG_VARGRAPHIC):
        return functools.partial(_no_value, reason="not_in_row")  # long field object, not row
    return functools.partial(_no_value, reason="unsupported_type")  # XML, STRUCT, unknown


def _integer(raw: bytes, width: int, byteorder: str) -> str:
    if len(raw) != width:
        raise DecodeError(f"a {width}-byte integer field has {len(raw)} bytes")
    return str(int.from_bytes(raw, byteorder, signed=True))


def _decimal(raw: bytes, scale: int) -> str:
    return packed_decimal(raw, scale)


def _float(raw: bytes, width: int, byteorder: str) -> str:
    if len(raw) != width:
        raise DecodeError(f"a {width}-byte float field has {len(raw)} bytes")
    return render_float(ieee_float(raw, byteorder), single=width == 4)


def _boolean(raw: bytes) -> str:
    if raw == b"\x00":
        return "false"
    if raw == b"\x01":
        return "true"
    raise DecodeError(f"BOOLEAN byte(s) {raw.hex().upper()} are not 00/01")


def _inline_lob(raw: bytes, render: Callable[[bytes], str]) -> str:
    """002_… "Extracting inlined LOB data": first byte 0x69 = a 4-byte header, then the data;
    first byte 0x80 = an empty string, whatever bytes follow it."""
    if raw[:1] == b"\x69":
        return render(raw[4:])
    if raw[:1] == b"\x80":
        return render(b"")
    raise _Reason("lob_not_inline")


def _no_value(raw: bytes, reason: str) -> str:
    raise _Reason(reason)


def _default_renderer(column: Column) -> Callable[[], str]:
    """The rendered system default of a column (COMPRESSED SYSTEM DEFAULT attribute)."""
    t = column.field_type
    if t in (SMALLINT, INTEGER, BIGINT, DECFLOAT64, DECFLOAT128):
        value = "0"
    elif t == DECIMAL:
        value = scaled_text(0, column.scale or 0)
    elif t in (REAL, DOUBLE):
        value = "0.0"
    elif t == CHAR and column.for_bit_data:
        value = "20" * column.length  # blanks, shown as binary
    elif t == CHAR:
        value = " " * column.length
    elif t == GRAPHIC:
        value = " " * (column.length // 2)
    elif t == BINARY:
        value = "00" * column.length
    elif t == BOOLEAN:
        value = "false"
    elif t in (DATE, TIME, TIMESTAMP):
        return functools.partial(_no_value, b"", "system_default_unknown")
    elif t in VARYING_TYPES:
        value = ""
    else:
        return functools.partial(_no_value, b"", "unsupported_type")
    return lambda: value


def null_flag_names(null_flag: int) -> list[str]:
    """The named bits of a column descriptor's null flag."""
    return [name for name, bit in NULL_FLAGS.items() if null_flag & bit]

"""A realistic solidDB SYS_LOG capture, plus the ground truth logmart must reproduce from it.

``generate(out_dir)`` writes::

    out_dir/soliddb/<capture>/sys_log.parquet        (or .csv / .jsonl: ``formats``)
    out_dir/soliddb/<capture>/catalog/SYS_TABLES.csv  the catalog at the start of the capture
    out_dir/soliddb/<capture>/catalog/SYS_COLUMNS.csv
    out_dir/truth/soliddb/tables.json        each table's final rows (committed, propagated work)
    out_dir/truth/soliddb/changes.jsonl      every change that is not CAPTURE_OFF, commit order
    out_dir/truth/soliddb/transactions.jsonl every transaction with its disposition
    out_dir/truth/soliddb/schema_changes.jsonl  DDL (13) and SQL (6) records
    out_dir/truth/soliddb/summary.json       counts

With several formats each gets its own capture folder (``<capture>_<format>``), each a complete
copy of the same rows: load one of them.

The workload: every type of the spec's type table, inserts, updates (before + after image),
deletes, a primary-key update (delete + insert), a transaction that began before the capture, a
CAPTURE_OFF transaction, DDL mid-stream (CREATE TABLE then rows; ALTER TABLE ADD COLUMN then
rows, old rows still logged with their old width; TRUNCATE; RENAME; DROP; index, view,
sequence and counter DDL), interleaved transactions, a SHUTDOWN record after which LOGADDRs
move to the next log generation and TRXIDs restart (reusing ids), two transactions without
COMMIT (one whose TRXID is reused: aborted; one not: in flight), an in-flight transaction at the
end, and NOP rows. DATA is packed here with plain ``struct`` (not logmart's decoder) and the
truth is rendered here from Python values, so the generator is an oracle for the decoder.
"""

from __future__ import annotations

import csv
import json
import random
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

# --- tables ------------------------------------------------------------------------------------


@dataclass
class GenColumn:
    name: str
    sql_type: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    nullable: bool = True
    key: int | None = None


@dataclass
class GenTable:
    rel_id: int
    schema: str
    name: str
    columns: list[GenColumn]
    rows: dict[tuple, dict[str, Any]] = field(default_factory=dict)  # key -> python values
    widths: dict[tuple, int] = field(default_factory=dict)  # key -> columns stored (ADD COLUMN)
    next_id: int = 1

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    def key_names(self) -> list[str]:
        return [c.name for c in sorted((c for c in self.columns if c.key), key=lambda c: c.key)]

    def key_of(self, row: dict[str, Any]) -> tuple:
        return tuple(row[name] for name in self.key_names())


def _c(name: str, sql_type: str, **kw: Any) -> GenColumn:
    return GenColumn(name, sql_type, **kw)


def _catalog_tables() -> list[GenTable]:
    """The tables that exist (empty) when the capture starts."""
    customers = [
        _c("ID", "INTEGER", nullable=False, key=1),
        _c("NAME", "VARCHAR", length=40, nullable=False),
        _c("CITY", "WVARCHAR", length=30),
        _c("CREDIT", "NUMERIC", precision=12, scale=2),
        _c("RATING", "REAL"),
        _c("JOINED", "DATE"),
        _c("NOTE", "LONG VARCHAR"),
    ]
    all_types = [
        _c("ID", "BIGINT", nullable=False, key=1),
        _c("C_CHAR", "CHAR", length=8),
        _c("C_VARCHAR", "VARCHAR", length=300),
        _c("C_LONG_VARCHAR", "LONG VARCHAR"),
        _c("C_WCHAR", "WCHAR", length=4),
        _c("C_WVARCHAR", "WVARCHAR", length=20),
        _c("C_LONG_WVARCHAR", "LONG WVARCHAR"),
        _c("C_BINARY", "BINARY", length=4),
        _c("C_VARBINARY", "VARBINARY", length=16),
        _c("C_LONG_VARBINARY", "LONG VARBINARY"),
        _c("C_FLOAT", "FLOAT"),
        _c("C_REAL", "REAL"),
        _c("C_DOUBLE", "DOUBLE PRECISION"),
        _c("C_BIT", "BIT"),
        _c("C_TINYINT", "TINYINT"),
        _c("C_SMALLINT", "SMALLINT"),
        _c("C_INTEGER", "INTEGER"),
        _c("C_BIGINT", "BIGINT"),
        _c("C_DATE", "DATE"),
        _c("C_TIME", "TIME"),
        _c("C_TIMESTAMP", "TIMESTAMP"),
        _c("C_NUMERIC", "NUMERIC", precision=10, scale=3),
        _c("C_DECIMAL", "DECIMAL", precision=18, scale=2),
        _c("C_CODE", "VARCHAR", length=10, nullable=False),  # '' is a value here, not NULL
    ]
    orders = [
        _c("ORDER_ID", "INTEGER", nullable=False, key=1),
        _c("LINE_NO", "SMALLINT", nullable=False, key=2),
        _c("CUSTOMER_ID", "INTEGER", nullable=False),
        _c("AMOUNT", "DECIMAL", precision=10, scale=2, nullable=False),
        _c("STATUS", "CHAR", length=1),
        _c("PLACED", "TIMESTAMP"),
    ]
    return [
        GenTable(1001, "SHOP", "CUSTOMERS", customers),
        GenTable(1002, "SHOP", "ALL_TYPES", all_types),
        GenTable(1003, "SHOP", "ORDERS", orders),
    ]


# --- values: python value -> DATA bytes and -> rendered text (independent of the decoder) ------

_WORDS = ["alpha", "Bravo", "café", "Δelta", "echo", "北京", "Zoë", "smörgås", "naïve", "x"]


def _random_value(rng: random.Random, column: GenColumn) -> Any:
    """A Python value for the column (None sometimes when nullable)."""
    if column.nullable and column.key is None and rng.random() < 0.15:
        return None
    return _VALUE_MAKERS[column.sql_type](rng, column)


def _text(rng: random.Random, limit: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))
    return words[: max(1, limit)]


def _padded(rng: random.Random, column: GenColumn) -> str:
    return _text(rng, column.length or 1).ljust(column.length or 1)


def _long_text(rng: random.Random, column: GenColumn) -> str:
    # Sometimes longer than 253 bytes, so the field needs the 0xFE 4-byte length.
    size = rng.choice([1, 20, 253, 254, 300, 700])
    return ("".join(rng.choice("abcdefghij é") for _ in range(size)))[:size]


def _bmp_text(rng: random.Random, column: GenColumn) -> str:
    return _text(rng, column.length or 200)


def _decimal(rng: random.Random, column: GenColumn) -> Decimal:
    digits = (column.precision or 10) - (column.scale or 0)
    unscaled = rng.randint(-(10 ** min(digits, 9)), 10 ** min(digits, 9))
    return Decimal(unscaled).scaleb(-(column.scale or 0))


def _real(rng: random.Random, column: GenColumn) -> str:
    # A short decimal (≤ 6 significant digits) whose float32 prints back the same.
    return repr(float(f"{rng.randint(-99999, 99999) / rng.choice([1, 8, 100, 1000]):.6g}"))


def _timestamp(rng: random.Random) -> tuple[int, ...]:
    day = date(1970, 1, 1) + timedelta(days=rng.randint(0, 25_000))
    if rng.random() < 0.1:
        day = date(2024, 2, 29)
    nanos = rng.choice([0, 123_456_000, rng.randint(0, 999_999_999)])
    clock = (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
    return (day.year, day.month, day.day, *clock, nanos)


def _varchar(rng: random.Random, column: GenColumn) -> str:
    # NOT NULL text may be '' (an empty field); a nullable column never is (it would be NULL).
    if not column.nullable and column.key is None and rng.random() < 0.2:
        return ""
    return _text(rng, column.length or 40)


def _double(rng: random.Random, column: GenColumn) -> float:
    return rng.choice([1500.5, 0.1, -2.75, 1e-7, 123456789.125, rng.uniform(-1e6, 1e6)])


_VALUE_MAKERS: dict[str, Any] = {
    "CHAR": _padded,
    "VARCHAR": _varchar,
    "LONG VARCHAR": _long_text,
    "WCHAR": _padded,
    "WVARCHAR": _bmp_text,
    "LONG WVARCHAR": _long_text,
    "BINARY": lambda rng, c: rng.randbytes(c.length or 1),
    "VARBINARY": lambda rng, c: rng.randbytes(rng.randint(1, c.length or 16)),
    "LONG VARBINARY": lambda rng, c: rng.randbytes(rng.choice([3, 260, 600])),
    "FLOAT": _double,
    "DOUBLE PRECISION": _double,
    "REAL": _real,
    "BIT": lambda rng, c: rng.randint(0, 1),
    "TINYINT": lambda rng, c: rng.randint(-128, 127),
    "SMALLINT": lambda rng, c: rng.randint(-32768, 32767),
    "INTEGER": lambda rng, c: rng.randint(-(2**31), 2**31 - 1),
    "BIGINT": lambda rng, c: rng.randint(-(2**63), 2**63 - 1),
    "DATE": lambda rng, c: (rng.randint(1900, 2099), rng.randint(1, 12), rng.randint(1, 28)),
    "TIME": lambda rng, c: (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)),
    "TIMESTAMP": lambda rng, c: _timestamp(rng),
    "NUMERIC": _decimal,
    "DECIMAL": _decimal,
}


def encode_value(value: Any, sql_type: str, rng: random.Random) -> bytes:
    """The bytes solidDB stores for a value (spec type table), packed with plain struct."""
    if sql_type in ("CHAR", "VARCHAR", "LONG VARCHAR"):
        return value.encode("utf-8")
    if sql_type in ("WCHAR", "WVARCHAR", "LONG WVARCHAR"):
        return value.encode("utf-16-be")
    if sql_type in ("BINARY", "VARBINARY", "LONG VARBINARY"):
        return value
    if sql_type in ("FLOAT", "DOUBLE PRECISION"):
        return struct.pack(">d", value)
    if sql_type == "REAL":
        as32 = struct.unpack(">f", struct.pack(">f", float(value)))[0]
        return struct.pack(">d", as32)
    if sql_type in ("BIT", "TINYINT", "SMALLINT", "INTEGER"):
        return struct.pack(">i", value)
    if sql_type == "BIGINT":
        return struct.pack(">q", value)
    if sql_type == "DATE":
        return struct.pack(">HBBBBBI", *value, 0, 0, 0, 0)
    if sql_type == "TIME":
        return struct.pack(">HBBBBBI", 0, 0, 0, *value, 0)
    if sql_type == "TIMESTAMP":
        return struct.pack(">HBBBBBI", *value)
    if sql_type in ("NUMERIC", "DECIMAL"):
        return _dfloat_text(value, rng).encode("ascii")
    raise ValueError(sql_type)


def _dfloat_text(value: Decimal, rng: random.Random) -> str:
    """DFLOAT text in the forms a decimal string can take: '52750.5', '52750.50', '5.27505E+4'."""
    form = rng.random()
    if form < 0.5:
        return f"{value.normalize():f}"
    if form < 0.85:
        return f"{value:f}"
    return f"{value.normalize():E}"


def render(value: Any, column: GenColumn) -> str | None:
    """The marts' text of a Python value (the truth), written without logmart's decoders."""
    if value is None:
        return None
    sql_type = column.sql_type
    if sql_type in ("BINARY", "VARBINARY", "LONG VARBINARY"):
        return value.hex().upper()
    if sql_type in ("FLOAT", "DOUBLE PRECISION"):
        return repr(value)
    if sql_type == "REAL":
        return value
    if sql_type == "DATE":
        year, month, day = value
        return f"{year:04d}-{month:02d}-{day:02d}"
    if sql_type == "TIME":
        hour, minute, second = value
        return f"{hour:02d}:{minute:02d}:{second:02d}"
    if sql_type == "TIMESTAMP":
        year, month, day, hour, minute, second, nanos = value
        return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}.{nanos:09d}"
    if sql_type in ("NUMERIC", "DECIMAL"):
        return f"{value:.{column.scale}f}"
    return str(value)


def frame(fields: Sequence[bytes | None]) -> bytes:
    """Interpretation 10, written out again here: 1-byte length < 0xFE, else 0xFE + u32 LE."""
    out = b""
    for raw in fields:
        raw = raw or b""
        if len(raw) < 0xFE:
            out += bytes([len(raw)]) + raw
        else:
            out += b"\xfe" + struct.pack("<I", len(raw)) + raw
    return out


# --- log records -------------------------------------------------------------------------------

RECNAMES = {
    0: "DBE_LOGREADER_LOG_REC_EMPTY",
    1: "DBE_LOGREADER_LOG_REC_INSERT",
    3: "DBE_LOGREADER_LOG_REC_UPDATE",
    4: "DBE_LOGREADER_LOG_REC_DELETE_FULL",
    5: "DBE_LOGREADER_LOG_REC_UPDATE_BEFOREIMAGE",
    6: "DBE_LOGREADER_LOG_REC_SQL",
    7: "DBE_LOGREADER_LOG_REC_TRX_START",
    12: "DBE_LOGREADER_LOG_REC_COMMIT",
    13: "DBE_LOGREADER_LOG_REC_DDL",
}
FLAG_DATA, FLAG_SHUTDOWN, FLAG_CAPTURE_OFF = 1, 2, 64


@dataclass
class GenRecord:
    recid: int
    trxid: int | None
    relid: int | None = None
    data: bytes | None = None
    flags: int = 0
    stmttrxid: int | None = None
    change: dict[str, Any] | None = None  # the truth change this record completes
    schema_change: dict[str, Any] | None = None
    logaddr: bytes | None = None


@dataclass
class GenTxn:
    trxid: int
    records: list[GenRecord] = field(default_factory=list)
    fate: str = "committed"  # committed | rolled_back | open
    capture_off: bool = False
    has_start: bool = True
    touched: set = field(default_factory=set)
    label: str = ""


class _Workload:
    """Builds transactions against the generator's own picture of the tables."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.tables: dict[int, GenTable] = {t.rel_id: t for t in _catalog_tables()}
        self.dropped: set[int] = set()
        self.next_trxid = 4100
        self.reused_from = 4100  # where TRXIDs restart after the SHUTDOWN
        self.next_stmt = 1

    # -- transactions ---------------------------------------------------------------------

    def begin(self, *, capture_off: bool = False, has_start: bool = True) -> GenTxn:
        txn = GenTxn(self.next_trxid, capture_off=capture_off, has_start=has_start)
        self.next_trxid += 1
        if has_start:
            flags = FLAG_CAPTURE_OFF if capture_off else 0
            txn.records.append(GenRecord(7, txn.trxid, flags=flags, stmttrxid=self._stmt()))
        return txn

    def commit(self, txn: GenTxn) -> GenTxn:
        txn.records.append(GenRecord(12, txn.trxid, stmttrxid=self._stmt()))
        return txn

    def _stmt(self) -> int:
        self.next_stmt += 1
        return self.next_stmt

    # -- row changes (the picture changes only for propagated, committed work) ------------

    def insert(self, txn: GenTxn, table: GenTable, apply: bool = True) -> None:
        row = {c.name: _random_value(self.rng, c) for c in table.columns}
        for name in table.key_names():
            row[name] = self._new_key(table, name)
        self._row_record(txn, table, 1, None, row, len(table.columns))
        if apply:
            key = table.key_of(row)
            table.rows[key], table.widths[key] = row, len(table.columns)
        txn.touched.add((table.rel_id, table.key_of(row)))

    def _new_key(self, table: GenTable, name: str) -> Any:
        if name == "LINE_NO":
            return self.rng.randint(1, 9)
        if name == "Sku":
            table.next_id += 1
            return f"SKU-{table.next_id:05d}"
        table.next_id += self.rng.randint(1, 3)
        return table.next_id

    def update(self, txn: GenTxn, table: GenTable, key: tuple, apply: bool = True) -> None:
        before = table.rows[key]
        after = dict(before)
        for column in self.rng.sample(table.columns, k=min(3, len(table.columns))):
            if column.key is None:
                after[column.name] = _random_value(self.rng, column)
        stmt = self._stmt()
        width = table.widths[key]
        self._row_record(txn, table, 5, before, None, width, stmt, complete=False)
        self._row_record(txn, table, 3, before, after, len(table.columns), stmt)
        if apply:
            table.rows[key], table.widths[key] = after, len(table.columns)
        txn.touched.add((table.rel_id, key))

    def delete(self, txn: GenTxn, table: GenTable, key: tuple, apply: bool = True) -> None:
        before = table.rows[key]
        self._row_record(txn, table, 4, before, None, table.widths[key])
        if apply:
            del table.rows[key], table.widths[key]
        txn.touched.add((table.rel_id, key))

    def key_update(self, txn: GenTxn, table: GenTable, key: tuple) -> None:
        """UPDATE … SET <key> = new: solidDB logs DELETE_FULL + INSERT (same statement)."""
        before = table.rows.pop(key)
        width = table.widths.pop(key)
        after = dict(before)
        first_key = table.key_names()[0]
        after[first_key] = self._new_key(table, first_key)
        stmt = self._stmt()
        self._row_record(txn, table, 4, before, None, width, stmt)
        self._row_record(txn, table, 1, None, after, len(table.columns), stmt)
        new_key = table.key_of(after)
        table.rows[new_key], table.widths[new_key] = after, len(table.columns)
        txn.touched |= {(table.rel_id, key), (table.rel_id, new_key)}

    def _row_record(
        self,
        txn: GenTxn,
        table: GenTable,
        recid: int,
        before: dict | None,
        after: dict | None,
        width: int,
        stmt: int | None = None,
        complete: bool = True,
    ) -> GenRecord:
        image = after if recid in (1, 3) else before
        assert image is not None
        columns = table.columns[:width]
        fields = [
            None if image.get(c.name) is None else encode_value(image[c.name], c.sql_type, self.rng)
            for c in columns
        ]
        record = GenRecord(
            recid, txn.trxid, table.rel_id, frame(fields), FLAG_DATA, stmt or self._stmt()
        )
        if complete:
            operation = {1: "insert", 3: "update", 4: "delete"}[recid]
            record.change = {
                "operation": operation,
                "relid": table.rel_id,
                "table_schema": table.schema,
                "table_name": table.name,
                "before_image": self._rendered(table, before),
                "after_image": self._rendered(table, after),
            }
        txn.records.append(record)
        return record

    def _rendered(self, table: GenTable, row: dict | None) -> dict | None:
        if row is None:
            return None
        return {c.name: render(row.get(c.name), c) for c in table.columns}

    # -- DDL ------------------------------------------------------------------------------

    def ddl(
        self,
        txn: GenTxn,
        logrecid: int,
        info: str,
        sql: str,
        relid: int | None,
        table: GenTable | None = None,
    ) -> None:
        """A DDL record (LOGRECID, INFO) then the SQL record with the text, one statement.
        The SQL record carries no RELID: logmart takes it from the DDL record."""
        stmt = self._stmt()
        ddl_data = frame([struct.pack(">i", logrecid), info.encode("utf-8")])
        event = {"logrecid": logrecid, "info": info, "sql_text": sql}
        if table is not None:
            event |= {"table_schema": table.schema, "table_name": table.name}
        txn.records.append(
            GenRecord(13, txn.trxid, relid, ddl_data, FLAG_DATA, stmt, schema_change=event)
        )
        txn.records.append(
            GenRecord(6, txn.trxid, None, frame([sql.encode("utf-8")]), FLAG_DATA, stmt)
        )
        if logrecid == 73 and table is not None:
            txn.records[-2].change = {
                "operation": "truncate",
                "relid": table.rel_id,
                "table_schema": table.schema,
                "table_name": table.name,
                "before_image": None,
                "after_image": None,
            }

    def live_keys(self, table: GenTable, txn: GenTxn, busy: set) -> list[tuple]:
        """Keys of rows the transaction may touch (not locked by an interleaved one)."""
        return [k for k in table.rows if (table.rel_id, k) not in busy | txn.touched]


# --- the script --------------------------------------------------------------------------------


def _dml_transaction(w: _Workload, busy: set, tables: list[GenTable]) -> GenTxn:
    txn = w.begin()
    for _ in range(w.rng.randint(1, 5)):
        table = w.rng.choice(tables)
        keys = w.live_keys(table, txn, busy)
        roll = w.rng.random()
        if not keys or roll < 0.5:
            w.insert(txn, table)
        elif roll < 0.85:
            w.update(txn, table, w.rng.choice(keys))
        else:
            w.delete(txn, table, w.rng.choice(keys))
    return w.commit(txn)


def _create_inventory(w: _Workload) -> GenTxn:
    table = GenTable(
        1004,
        "SHOP",
        "Inventory",
        [
            _c("Sku", "VARCHAR", length=20, nullable=False, key=1),
            _c("QTY", "INTEGER"),
            _c("PRICE", "NUMERIC", precision=8, scale=2),
        ],
    )
    sql = (
        'CREATE TABLE SHOP."Inventory" ("Sku" VARCHAR(20) NOT NULL, QTY INTEGER, '
        'PRICE NUMERIC(8,2), PRIMARY KEY ("Sku")) STORE DISK'
    )
    txn = w.begin()
    w.ddl(txn, 45, "SHOP.Inventory", sql, table.rel_id, table)
    w.tables[table.rel_id] = table
    return w.commit(txn)


def _alter_inventory(w: _Workload) -> GenTxn:
    table = w.tables[1004]
    txn = w.begin()
    sql = 'ALTER TABLE SHOP."Inventory" ADD COLUMN UPDATED_AT TIMESTAMP'
    w.ddl(txn, 22, "Inventory", sql, table.rel_id, table)
    table.columns.append(_c("UPDATED_AT", "TIMESTAMP"))
    return w.commit(txn)


def _scratch_lifecycle(w: _Workload) -> list[GenTxn]:
    """CREATE, rows, TRUNCATE, rows, RENAME, a row; a second table created, used, dropped."""
    scratch = GenTable(
        1005,
        "TMP",
        "SCRATCH",
        [_c("ID", "INTEGER", nullable=False, key=1), _c("V", "VARCHAR", length=10)],
    )
    out = []
    txn = w.begin()
    sql = "create table tmp.scratch (id integer primary key, v varchar(10))"
    w.ddl(txn, 45, "TMP.SCRATCH", sql, scratch.rel_id, scratch)
    w.tables[scratch.rel_id] = scratch
    out.append(w.commit(txn))
    txn = w.begin()
    for _ in range(3):
        w.insert(txn, scratch)
    out.append(w.commit(txn))
    txn = w.begin()
    w.ddl(txn, 73, "SCRATCH", "TRUNCATE TABLE TMP.SCRATCH", scratch.rel_id, scratch)
    scratch.rows.clear()
    scratch.widths.clear()
    w.insert(txn, scratch)
    out.append(w.commit(txn))
    txn = w.begin()
    w.ddl(
        txn,
        47,
        "TMP.SCRATCH_OLD",
        "ALTER TABLE TMP.SCRATCH RENAME TO SCRATCH_OLD",
        scratch.rel_id,
        scratch,
    )
    scratch.name = "SCRATCH_OLD"
    w.insert(txn, scratch)
    out.append(w.commit(txn))
    dropme = GenTable(1006, "TMP", "DROPME", [_c("K", "BIGINT", nullable=False, key=1)])
    txn = w.begin()
    w.ddl(
        txn,
        45,
        "TMP.DROPME",
        "CREATE TABLE TMP.DROPME (K BIGINT NOT NULL PRIMARY KEY)",
        dropme.rel_id,
        dropme,
    )
    w.tables[dropme.rel_id] = dropme
    w.insert(txn, dropme)
    out.append(w.commit(txn))
    txn = w.begin()
    w.ddl(txn, 17, "DROPME", "DROP TABLE TMP.DROPME", dropme.rel_id, dropme)
    del w.tables[dropme.rel_id]
    w.dropped.add(dropme.rel_id)
    out.append(w.commit(txn))
    return out


def _other_ddl(w: _Workload) -> GenTxn:
    """Index, view, sequence and counter DDL: events only, no layout change."""
    txn = w.begin()
    statements = [
        (
            16,
            "IX_ORDERS_CUSTOMER",
            "CREATE INDEX IX_ORDERS_CUSTOMER ON SHOP.ORDERS (CUSTOMER_ID)",
            1003,
        ),
        (
            46,
            "SHOP.V_BIG_ORDERS",
            "CREATE VIEW SHOP.V_BIG_ORDERS AS SELECT * FROM SHOP.ORDERS WHERE AMOUNT > 1000",
            None,
        ),
        (28, "SHOP.SEQ_ORDERS", "CREATE SEQUENCE SHOP.SEQ_ORDERS", None),
        (27, "SHOP.CNT_VISITS", "CREATE COUNTER SHOP.CNT_VISITS", None),
        (20, "V_BIG_ORDERS", "DROP VIEW SHOP.V_BIG_ORDERS", None),
        (30, "SEQ_ORDERS", "DROP SEQUENCE SHOP.SEQ_ORDERS", None),
        (29, "CNT_VISITS", "DROP COUNTER SHOP.CNT_VISITS", None),
        (18, "IX_ORDERS_CUSTOMER", "DROP INDEX SHOP.IX_ORDERS_CUSTOMER", 1003),
    ]
    for logrecid, info, sql, relid in statements:
        w.ddl(txn, logrecid, info, sql, relid)
    return w.commit(txn)


def _key_update(w: _Workload, busy: set) -> GenTxn:
    txn = w.begin()
    customers = w.tables[1001]
    keys = w.live_keys(customers, txn, busy)
    if not keys:
        w.insert(txn, customers)
    else:
        w.key_update(txn, customers, w.rng.choice(keys))
    return w.commit(txn)


def _capture_off(w: _Workload) -> GenTxn:
    """Work done by a replication apply: committed but not to be propagated. Its rows are never
    touched again, and the truth tables leave them out (they are not in the change marts)."""
    txn = w.begin(capture_off=True)
    for _ in range(2):
        w.insert(txn, w.tables[1001], apply=False)
    return w.commit(txn)


def _unfinished(w: _Workload, busy: set, fate: str) -> GenTxn:
    """A transaction without COMMIT: rolled back (solidDB logs nothing more) or still open."""
    txn = w.begin()
    orders = w.tables[1003]
    w.insert(txn, orders, apply=False)
    keys = w.live_keys(orders, txn, busy)
    if keys:
        w.update(txn, orders, w.rng.choice(keys), apply=False)
    txn.fate = fate
    return txn


def _script(w: _Workload, transactions: int) -> list[list[GenTxn] | str]:
    """The workload as groups of transactions (a group's bodies interleave) and markers.

    Scripted events fire once the given share of transactions is made; DML fills the rest.
    """
    base = [w.tables[1001], w.tables[1002], w.tables[1003]]
    n = transactions
    events = [
        (n * 20 // 100, "create_inventory"),
        (n * 30 // 100, "key_update"),
        (n * 35 // 100, "capture_off"),
        (n * 40 // 100, "alter_inventory"),
        (n * 45 // 100, "scratch"),
        (n * 50 // 100, "other_ddl"),
        (n * 55 // 100, "rolled_back_reused"),
        (n * 60 // 100, "shutdown"),
        (n * 70 // 100, "rolled_back"),
        (n * 75 // 100, "key_update"),
    ]
    plan: list[list[GenTxn] | str] = []
    first = w.begin(has_start=False)  # began before the capture: no TRX_START in it
    w.insert(first, base[0])
    plan.append([w.commit(first)])
    made = 1
    while made < n - 2 or events:
        if events and (made >= events[0][0] or made >= n - 2):
            _, event = events.pop(0)
            if event == "shutdown":
                plan.append("shutdown")
                # After the restart TRXIDs start again lower: some ids are used a second time.
                w.next_trxid = w.reused_from
                continue
            group = _event(w, event)
            if event == "rolled_back_reused":
                w.reused_from = group[0].trxid - 3
            plan.extend([txn] for txn in group)  # scripted transactions run one after another
        else:
            inventory = [w.tables[1004]] if 1004 in w.tables else []
            group = _interleavable(w, base + inventory)
            plan.append(group)
        made += len(group)
    # The end: a last commit interleaved with a transaction still open when the capture ends.
    busy: set = set()
    last = _dml_transaction(w, busy, base)
    plan.append([last, _unfinished(w, last.touched, "open")])
    return plan


def _event(w: _Workload, event: str) -> list[GenTxn]:
    if event == "create_inventory":
        txns = [_create_inventory(w)]
        txn = w.begin()
        for _ in range(3):
            w.insert(txn, w.tables[1004])
        return [*txns, w.commit(txn)]
    if event == "alter_inventory":
        txns = [_alter_inventory(w)]
        txn = w.begin()
        inventory = w.tables[1004]
        old = list(inventory.rows)
        w.insert(txn, inventory)
        if old:  # an old row, still stored (and logged) with the old width
            w.update(txn, inventory, old[0])
        if len(old) > 1:
            w.delete(txn, inventory, old[1])
        return [*txns, w.commit(txn)]
    if event == "scratch":
        return _scratch_lifecycle(w)
    if event == "other_ddl":
        return [_other_ddl(w)]
    if event == "key_update":
        return [_key_update(w, set())]
    if event == "capture_off":
        return [_capture_off(w)]
    if event in ("rolled_back", "rolled_back_reused"):
        return [_unfinished(w, set(), "rolled_back")]
    raise ValueError(event)


def _interleavable(w: _Workload, tables: list[GenTable]) -> list[GenTxn]:
    """One to three DML transactions on disjoint rows; their bodies interleave in the log."""
    group: list[GenTxn] = []
    busy: set = set()
    for _ in range(w.rng.choice([1, 1, 2, 3])):
        txn = _dml_transaction(w, busy, tables)
        busy |= txn.touched
        group.append(txn)
    return group


# --- laying out the log ------------------------------------------------------------------------


class _Addresses:
    """20-byte LOGADDRs like 0000000000000001FFFFFFFF0000029500000295, increasing in binary."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.generation = 1
        self.offset = 0x295

    def next(self) -> bytes:
        self.offset += self.rng.randint(24, 600)
        return struct.pack(">QIII", self.generation, 0xFFFFFFFF, self.offset, self.offset)

    def restart(self) -> None:
        """A new log generation after a restart: the offset starts low again."""
        self.generation += 1
        self.offset = 0x100


def _interleave(group: list[GenTxn], rng: random.Random) -> list[GenRecord]:
    """Merge a group's records keeping each transaction's order and the COMMITs in group order."""
    bodies = [list(t.records[:-1] if t.fate == "committed" else t.records) for t in group]
    commits = [t.records[-1] if t.fate == "committed" else None for t in group]
    out: list[GenRecord] = []
    for index in range(len(group)):
        while bodies[index]:
            open_ones = [i for i in range(index, len(group)) if bodies[i]]
            pick = rng.choice(open_ones) if rng.random() < 0.6 else index
            out.append(bodies[pick].pop(0))
        if commits[index] is not None:
            out.append(commits[index])
    return out


def _lay_out(plan: list, rng: random.Random) -> tuple[list[GenRecord], list[GenTxn]]:
    addresses = _Addresses(rng)
    log: list[GenRecord] = []
    txns: list[GenTxn] = []
    for item in plan:
        if item == "shutdown":
            log.append(GenRecord(0, None, flags=FLAG_SHUTDOWN, logaddr=addresses.next()))
            addresses.restart()
            continue
        for record in _interleave(item, rng):
            record.logaddr = addresses.next()
            log.append(record)
        txns.extend(item)
    return log, txns


def _label_transactions(txns: list[GenTxn]) -> None:
    """transaction_id = TRXID, then TRXID#n for its n-th use in the log (starts in log order)."""
    by_first = sorted(txns, key=lambda t: t.records[0].logaddr or b"")
    uses: dict[int, int] = {}
    for txn in by_first:
        uses[txn.trxid] = uses.get(txn.trxid, 0) + 1
        txn.label = str(txn.trxid) if uses[txn.trxid] == 1 else f"{txn.trxid}#{uses[txn.trxid]}"


def _disposition(txn: GenTxn, txns: list[GenTxn]) -> str:
    if txn.fate == "committed":
        return "committed"
    first = txn.records[0].logaddr or b""
    reused = any(
        o.trxid == txn.trxid and o.has_start and (o.records[0].logaddr or b"") > first for o in txns
    )
    return "aborted" if reused else "in_flight"


# --- truth -------------------------------------------------------------------------------------


def _truth(w: _Workload, txns: list[GenTxn]) -> dict[str, Any]:
    """What logmart must report: changes (commit order), transactions, DDL events, tables."""
    changes, transactions, schema_changes = [], [], []
    for txn in txns:
        disposition = _disposition(txn, txns)
        commit = txn.records[-1].logaddr.hex().upper() if txn.fate == "committed" else None
        txn_changes = _txn_changes(txn, disposition, commit)
        if not txn.capture_off:  # not to be propagated: left out of the change marts
            changes.extend(txn_changes)
        schema_changes.extend(_schema_events(txn))
        transactions.append(_txn_truth(txn, disposition, commit, txn_changes))
    changes.sort(key=_truth_order)
    return {
        "tables": {t.qualified: _table_truth(t) for t in w.tables.values()},
        "changes": changes,
        "transactions": transactions,
        "schema_changes": schema_changes,
    }


def _txn_changes(txn: GenTxn, disposition: str, commit: str | None) -> list[dict[str, Any]]:
    changes = [dict(r.change) for r in txn.records if r.change]
    for seq, change in enumerate(changes, start=1):
        change.update(
            transaction_id=txn.label,
            disposition=disposition,
            commit_position=commit,
            change_seq=seq,
        )
    return changes


def _schema_events(txn: GenTxn) -> list[dict[str, Any]]:
    return [
        {
            "transaction_id": txn.label,
            "logaddr": r.logaddr.hex().upper(),
            "relid": r.relid,
            **r.schema_change,
        }
        for r in txn.records
        if r.schema_change and r.logaddr
    ]


def _txn_truth(
    txn: GenTxn, disposition: str, commit: str | None, changes: list[dict[str, Any]]
) -> dict[str, Any]:
    counts = {op: sum(c["operation"] == op for c in changes) for op in _OPS}
    return {
        "transaction_id": txn.label,
        "trxid": txn.trxid,
        "disposition": disposition,
        "fate": txn.fate,  # what really happened: committed, rolled_back or open
        "capture_off": txn.capture_off,
        "has_trx_start": txn.has_start,
        "commit_position": commit,
        "change_count": len(changes),
        **{f"{op}s": n for op, n in counts.items()},
    }


def _truth_order(change: dict[str, Any]) -> tuple:
    committed = change["commit_position"] is not None
    return (not committed, change["commit_position"] or "", change["transaction_id"],
            change["change_seq"])  # fmt: skip


_OPS = ("insert", "update", "delete", "truncate")


def _table_truth(table: GenTable) -> dict[str, Any]:
    """A table at the end: names, columns, key and rows (rendered, in key order)."""
    return {
        "rel_id": table.rel_id,
        "schema": table.schema,
        "name": table.name,
        "columns": [c.name for c in table.columns],
        "key": table.key_names(),
        "rows": [
            {c.name: render(table.rows[key].get(c.name), c) for c in table.columns}
            for key in sorted(table.rows)
        ],
    }


# --- files -------------------------------------------------------------------------------------

SYS_LOG_FIELDS = [
    "RECID",
    "RECNAME",
    "TRXID",
    "STMTTRXID",
    "RELID",
    "FLAGS",
    "LOGADDR",
    "DATA",
    "TEXTDATA",
]
_ARROW_SCHEMA = pa.schema(
    [
        ("RECID", pa.int32()),
        ("RECNAME", pa.string()),
        ("TRXID", pa.int32()),
        ("STMTTRXID", pa.int32()),
        ("RELID", pa.int32()),
        ("FLAGS", pa.int32()),
        ("LOGADDR", pa.binary()),
        ("DATA", pa.binary()),
        ("TEXTDATA", pa.string()),
    ]
)


def _file_rows(log: list[GenRecord], rng: random.Random) -> list[dict[str, Any]]:
    """SYS_LOG rows in file order: the log, with NOP rows (FLAGS 0, all else NULL) among them."""
    rows = []
    for record in log:
        if rng.random() < 0.03:
            rows.append(dict.fromkeys(SYS_LOG_FIELDS) | {"FLAGS": 0})
        rows.append(
            {
                "RECID": record.recid,
                "RECNAME": RECNAMES[record.recid],
                "TRXID": record.trxid,
                "STMTTRXID": record.stmttrxid,
                "RELID": record.relid,
                "FLAGS": record.flags,
                "LOGADDR": record.logaddr,
                "DATA": record.data,
                "TEXTDATA": None,
            }
        )
    rows.append(dict.fromkeys(SYS_LOG_FIELDS) | {"FLAGS": 0})
    return rows


def write_sys_log(rows: list[dict[str, Any]], path: Path) -> None:
    """Write rows as Parquet (binary columns), CSV or JSON lines (binary columns in hex)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows, schema=_ARROW_SCHEMA), path)
        return
    hexed = [
        {k: v.hex().upper() if isinstance(v, bytes) else v for k, v in r.items()} for r in rows
    ]
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=SYS_LOG_FIELDS)
            writer.writeheader()
            writer.writerows(hexed)
    else:
        with path.open("w", encoding="utf-8") as handle:
            for row in hexed:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_catalog(tables: list[GenTable], catalog_dir: Path) -> None:
    """SYS_TABLES.csv and SYS_COLUMNS.csv as solidDB names their columns (extra ones too)."""
    catalog_dir.mkdir(parents=True, exist_ok=True)
    with (catalog_dir / "SYS_TABLES.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ID", "TABLE_NAME", "TABLE_TYPE", "SCHEMA", "CATALOG", "CREATIME"])
        for t in tables:
            writer.writerow(
                [t.rel_id, t.name, "BASE TABLE", t.schema, "DBA", "2024-01-02 03:04:05"]
            )
    with (catalog_dir / "SYS_COLUMNS.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "ID",
                "REL_ID",
                "COLUMN_NAME",
                "DATA_TYPE",
                "DATA_TYPE_NUMBER",
                "CHAR_MAX_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "NULLABLE",
                "COLUMN_NUMBER",
                "REMARKS",
            ]
        )
        column_id = 10_000
        for t in tables:
            for number, c in enumerate(t.columns, start=1):
                column_id += 1
                writer.writerow(
                    [
                        column_id,
                        t.rel_id,
                        c.name,
                        c.sql_type,
                        "",
                        c.length or "",
                        c.precision or "",
                        "" if c.scale is None else c.scale,
                        "YES" if c.nullable else "NO",
                        number,
                        "",
                    ]
                )


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


MIN_TRANSACTIONS = 40


def generate(
    out_dir: Path,
    transactions: int = 200,
    seed: int = 1,
    *,
    formats: Sequence[str] = ("parquet",),
    capture: str = "capture01",
    split: str | None = None,
) -> dict[str, Any]:
    """Write a solidDB capture and its truth under ``out_dir``; return the summary dict.

    ``transactions`` ≥ 40 (the scripted events need room); same seed, same bytes.
    ``split``: the log is cut in two captures of one log stream (give both the same first
    folder, e.g. ``PROD/c1`` and ``PROD/c2``): the records before a point go to ``capture``,
    the rest to ``split``. The point is inside a committed transaction, before the first DDL
    (so both captures' catalog exports are the same): it is open at the end of the first
    capture and commits in the second; ``summary["split"]`` names it.
    """
    if transactions < MIN_TRANSACTIONS:
        raise ValueError(f"transactions must be at least {MIN_TRANSACTIONS}")
    unknown = set(formats) - {"parquet", "csv", "jsonl"}
    if unknown or not formats:
        raise ValueError(f"formats are parquet, csv, jsonl; got {list(formats)}")
    out_dir = Path(out_dir)
    rng = random.Random(seed)
    workload = _Workload(rng)
    catalog = list(workload.tables.values())
    catalog_copy = [GenTable(t.rel_id, t.schema, t.name, list(t.columns)) for t in catalog]
    plan = _script(workload, transactions)
    log, txns = _lay_out(plan, rng)
    _label_transactions(txns)
    truth = _truth(workload, txns)
    if split is None:
        parts = [(capture, log)]
        split_summary = None
    else:
        cut, spanning = _cut(log, txns)
        parts = [(capture, log[:cut]), (split, log[cut:])]
        split_summary = {"captures": [capture, split], "open_transactions": spanning}
    rows: list[dict[str, Any]] = []
    files = []
    for name, records in parts:
        part_rows = _file_rows(records, rng)
        rows.extend(part_rows)
        for fmt in formats:
            folder = out_dir / "soliddb" / (name if len(formats) == 1 else f"{name}_{fmt}")
            write_sys_log(part_rows, folder / f"sys_log.{fmt}")
            write_catalog(catalog_copy, folder / "catalog")
            files.append((folder / f"sys_log.{fmt}").relative_to(out_dir).as_posix())
    summary = _summary(seed, rows, log, truth, files)
    if split_summary is not None:
        summary["split"] = split_summary
    _write_truth(out_dir / "truth" / "soliddb", truth, summary)
    return summary


def _cut(log: list[GenRecord], txns: list[GenTxn]) -> tuple[int, dict[str, dict]]:
    """Where to cut the log in two: before the last change of a committed transaction with 2+
    changes that ends before the first DDL record (the catalog is the same on both sides).
    Returns the index of the first record of the second part and the transactions open at the
    cut (began before it, commit after it), by transaction_id."""
    first_ddl = next((i for i, r in enumerate(log) if r.recid in (6, 13)), len(log))
    position = {id(r): i for i, r in enumerate(log)}
    candidates = [
        t for t in txns
        if t.fate == "committed" and t.has_start and not t.capture_off
        and sum(r.change is not None for r in t.records) >= 2
        and position[id(t.records[-1])] < first_ddl
    ]  # fmt: skip
    if not candidates:
        raise ValueError("no transaction to cut the log in: generate more transactions")
    chosen = candidates[len(candidates) // 2]
    cut = position[id([r for r in chosen.records if r.change is not None][-1])]
    spanning = {}
    for t in txns:
        places = [position[id(r)] for r in t.records if id(r) in position]
        if places and min(places) < cut <= max(places):
            changes = [position[id(r)] for r in t.records if r.change is not None]
            spanning[t.label] = {
                "changes": len(changes),
                "changes_in_first": sum(p < cut for p in changes),
                "disposition": "committed" if t.fate == "committed" else "in_flight",
            }
    return cut, spanning


def _summary(seed: int, rows: list, log: list[GenRecord], truth: dict, files: list) -> dict:
    by_recid: dict[str, int] = {}
    for record in log:
        by_recid[RECNAMES[record.recid]] = by_recid.get(RECNAMES[record.recid], 0) + 1
    dispositions: dict[str, int] = {}
    for txn in truth["transactions"]:
        dispositions[txn["disposition"]] = dispositions.get(txn["disposition"], 0) + 1
    operations: dict[str, int] = {}
    for change in truth["changes"]:
        if change["disposition"] == "committed":
            operations[change["operation"]] = operations.get(change["operation"], 0) + 1
    return {
        "source_system": "soliddb",
        "seed": seed,
        "files": files,
        "rows": len(rows),
        "nop_rows": len(rows) - len(log),
        "records": len(log),
        "records_by_recname": dict(sorted(by_recid.items())),
        "transactions": len(truth["transactions"]),
        "transactions_by_disposition": dict(sorted(dispositions.items())),
        "capture_off_transactions": sum(t["capture_off"] for t in truth["transactions"]),
        "committed_changes_by_operation": dict(sorted(operations.items())),
        "schema_changes": len(truth["schema_changes"]),
        "tables": {name: len(t["rows"]) for name, t in truth["tables"].items()},
        "decode_errors": 0,
    }


def _write_truth(truth_dir: Path, truth: dict, summary: dict) -> None:
    truth_dir.mkdir(parents=True, exist_ok=True)
    (truth_dir / "tables.json").write_text(
        json.dumps(truth["tables"], indent=1, ensure_ascii=False, sort_keys=True), "utf-8"
    )
    _write_jsonl(truth_dir / "changes.jsonl", truth["changes"])
    _write_jsonl(truth_dir / "transactions.jsonl", truth["transactions"])
    _write_jsonl(truth_dir / "schema_changes.jsonl", truth["schema_changes"])
    (truth_dir / "summary.json").write_text(json.dumps(summary, indent=1), "utf-8")


# --- benchmark input ---------------------------------------------------------------------------

BENCH_REL_ID = 2001
BENCH_TABLE = GenTable(
    BENCH_REL_ID,
    "BENCH",
    "EVENTS",
    [
        _c("ID", "BIGINT", nullable=False, key=1),
        _c("NAME", "VARCHAR", length=32),
        _c("AMOUNT", "NUMERIC", precision=12, scale=2),
        _c("QTY", "INTEGER"),
        _c("TS", "TIMESTAMP"),
    ],
)
_TS = struct.Struct(">HBBBBBI")


def _bench_records(records: int, seed: int) -> Iterator[dict[str, Any]]:
    """TRX_START, 8 row records (inserts; every 4th an update pair), COMMIT, repeated."""
    rng = random.Random(seed)
    offset, trxid, stmt, next_id, emitted = 0x295, 1, 0, 0, 0
    while emitted < records:
        trxid += 1
        body: list[tuple[int, bytes | None]] = [(7, None)]
        for i in range(8):
            next_id += 1
            name = f"event-{next_id}".encode()
            amount = f"{rng.randint(0, 10**8) / 100:.2f}".encode()
            fields = [
                struct.pack(">q", next_id),
                name,
                amount,
                struct.pack(">i", rng.randint(0, 1000)),
                _TS.pack(2024, 1 + next_id % 12, 1 + next_id % 28, 12, 30, next_id % 60, 0),
            ]
            if i % 4 == 3:
                body.append((5, frame(fields)))
                fields[3] = struct.pack(">i", 1)
                body.append((3, frame(fields)))
            else:
                body.append((1, frame(fields)))
        body.append((12, None))
        for recid, data in body[: records - emitted]:
            offset += 64
            stmt += 1
            yield {
                "RECID": recid,
                "RECNAME": RECNAMES[recid],
                "TRXID": trxid,
                "STMTTRXID": stmt,
                "RELID": BENCH_REL_ID if data else None,
                "FLAGS": FLAG_DATA if data else 0,
                "LOGADDR": struct.pack(">QIII", 1, 0xFFFFFFFF, offset, offset),
                "DATA": data,
                "TEXTDATA": None,
            }
            emitted += 1


def generate_benchmark(
    path: Path, records: int, seed: int = 1, row_group_rows: int = 100_000
) -> dict[str, Any]:
    """Stream ``records`` SYS_LOG rows of one simple table into the Parquet file ``path``
    (row groups of ``row_group_rows``; memory flat), and its catalog next to it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_catalog([BENCH_TABLE], path.parent / "catalog")
    written = 0
    chunk: list[dict[str, Any]] = []
    with pq.ParquetWriter(path, _ARROW_SCHEMA) as writer:
        for row in _bench_records(records, seed):
            chunk.append(row)
            if len(chunk) >= row_group_rows:
                writer.write_table(pa.Table.from_pylist(chunk, schema=_ARROW_SCHEMA))
                written += len(chunk)
                chunk = []
        if chunk:
            writer.write_table(pa.Table.from_pylist(chunk, schema=_ARROW_SCHEMA))
            written += len(chunk)
    return {"path": str(path), "records": written, "bytes": path.stat().st_size}

"""solidDB SYS_LOG layouts, as ``004_bfd8062126bdba17.txt`` lays them out.

One place for: the SYS_LOG row (columns and types), the record ids (RECID) and DDL record ids
(LOGRECID) code tables, the FLAGS bits, the SQL type -> DATA value encoding table, and one
construct ``Struct`` per binary value encoding. The DATA *framing* (how the values of one row sit
in DATA) is logmart's interpretation and lives in :mod:`udfs.soliddb.data_format`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

import pyarrow as pa
from construct import Float64b, Int8ub, Int16ub, Int32sb, Int32ub, Int64sb, Struct

# --- the SYS_LOG row -------------------------------------------------------------------------


@dataclass(frozen=True)
class SysLogColumn:
    """One SYS_LOG column: spec name, solidDB SQL type, the Arrow type logmart reads it as."""

    name: str
    sql_type: str
    arrow_type: pa.DataType
    description: str


# TRXID/STMTTRXID/RELID are solidDB INTEGERs (signed 32-bit); read as int64 so an export tool
# that wrote them unsigned cannot overflow the column.
SYS_LOG_COLUMNS: tuple[SysLogColumn, ...] = (
    SysLogColumn("RECID", "INTEGER", pa.int32(), "record identifier (RecId)"),
    SysLogColumn("RECNAME", "VARCHAR", pa.string(), "readable name of RECID"),
    SysLogColumn("TRXID", "INTEGER", pa.int64(), "transaction identifier"),
    SysLogColumn("STMTTRXID", "INTEGER", pa.int64(), "statement identifier in the transaction"),
    SysLogColumn("RELID", "INTEGER", pa.int64(), "table identifier (SYS_TABLES.ID)"),
    SysLogColumn("FLAGS", "INTEGER", pa.int32(), "NOP / DATA / SHUTDOWN / CAPTURE_OFF bits"),
    SysLogColumn("LOGADDR", "VARBINARY", pa.binary(), "20-byte log address, binary order"),
    SysLogColumn("DATA", "VARBINARY", pa.binary(), "row, DDL or SQL payload"),
    SysLogColumn("TEXTDATA", "LONG VARCHAR", pa.string(), "not used by solidDB, always NULL"),
)
SYS_LOG_COLUMN_NAMES: tuple[str, ...] = tuple(column.name for column in SYS_LOG_COLUMNS)
BINARY_COLUMNS = frozenset(("LOGADDR", "DATA"))
INTEGER_COLUMNS = frozenset(("RECID", "TRXID", "STMTTRXID", "RELID", "FLAGS"))
LOGADDR_LENGTH = 20


def sys_log_arrow_schema() -> pa.Schema:
    """The SYS_LOG columns as Arrow fields, names lower-cased (``recid`` … ``textdata``)."""
    return pa.schema([pa.field(c.name.lower(), c.arrow_type) for c in SYS_LOG_COLUMNS])


# --- code tables -------------------------------------------------------------------------------


class RecId(enum.IntEnum):
    """SYS_LOG.RECID: what a log record is."""

    EMPTY = 0
    INSERT = 1
    UPDATE = 3  # after-image; a primary-key change is logged as DELETE_FULL + INSERT
    DELETE_FULL = 4
    UPDATE_BEFOREIMAGE = 5
    SQL = 6  # SQL text of a DDL operation
    TRX_START = 7
    COMMIT = 12
    DDL = 13

    @property
    def recname(self) -> str:
        """The RECNAME solidDB shows for this RECID."""
        return f"DBE_LOGREADER_LOG_REC_{self.name}"


ROW_RECIDS = frozenset((RecId.INSERT, RecId.UPDATE, RecId.DELETE_FULL, RecId.UPDATE_BEFOREIMAGE))


class DdlLogRecId(enum.IntEnum):
    """LOGRECID of a DDL record (RECID 13): which DDL operation; INFO names its object."""

    CREATE_TABLE = 45
    DROP_TABLE = 17
    RENAME_TABLE = 47
    ALTER_TABLE = 22
    TRUNCATE_TABLE = 73
    CREATE_INDEX = 16
    DROP_INDEX = 18
    CREATE_VIEW = 46
    DROP_VIEW = 20
    CREATE_SEQUENCE = 28
    DROP_SEQUENCE = 30
    CREATE_COUNTER = 27
    DROP_COUNTER = 29

    @property
    def operation(self) -> str:
        """Lower-case name used in the marts: ``create_table``, ``truncate_table`` …"""
        return self.name.lower()


# What INFO holds for each LOGRECID, as the spec says it.
DDL_INFO_MEANING: dict[DdlLogRecId, str] = {
    DdlLogRecId.CREATE_TABLE: "fully qualified table name",
    DdlLogRecId.DROP_TABLE: "table name",
    DdlLogRecId.RENAME_TABLE: "fully qualified table name",
    DdlLogRecId.ALTER_TABLE: "table name",
    DdlLogRecId.TRUNCATE_TABLE: "table name",
    DdlLogRecId.CREATE_INDEX: "index name",
    DdlLogRecId.DROP_INDEX: "index name",
    DdlLogRecId.CREATE_VIEW: "fully qualified view name",
    DdlLogRecId.DROP_VIEW: "view name",
    DdlLogRecId.CREATE_SEQUENCE: "sequence name",
    DdlLogRecId.DROP_SEQUENCE: "sequence name",
    DdlLogRecId.CREATE_COUNTER: "counter name",
    DdlLogRecId.DROP_COUNTER: "counter name",
}


class Flags(enum.IntFlag):
    """SYS_LOG.FLAGS bits. FLAGS == 0 is NOP: no data, every other column NULL."""

    NOP = 0
    DATA = 1 << 0  # data is available
    SHUTDOWN = 1 << 1  # server shutdown started
    CAPTURE_OFF = 1 << 6  # on TRX_START: do not propagate this transaction's operations


def flag_names(flags: int) -> list[str]:
    """Names of the bits set in FLAGS, low bit first; unknown bits as ``BIT<n>``; 0 -> NOP."""
    if flags == 0:
        return ["NOP"]
    names = []
    for bit in range(32):
        if flags & (1 << bit):
            try:
                names.append(Flags(1 << bit).name or f"BIT{bit}")
            except ValueError:
                names.append(f"BIT{bit}")
    return names


# --- value encodings in DATA (the spec's type table) ----------------------------------------


class Encoding(enum.StrEnum):
    """How one value's bytes are stored in DATA; names follow the spec's type table.

    The spec's "BINARY / UNICODE / CHAR: raw data bytes" row is one byte format, three
    renderings: CHAR as text, UNICODE (the W types) as wide text, BINARY as hex.
    """

    CHAR = "CHAR"
    UNICODE = "UNICODE"
    BINARY = "BINARY"
    DOUBLE_FLOAT = "DOUBLE FLOAT"
    INTEGER = "INTEGER"
    BIGINT = "BIGINT"
    DATE = "DATE"
    DFLOAT = "DFLOAT"


# solidDB SQL data type -> encoding of its values in DATA.
TYPE_ENCODINGS: dict[str, Encoding] = {
    "CHAR": Encoding.CHAR,
    "VARCHAR": Encoding.CHAR,
    "LONG VARCHAR": Encoding.CHAR,
    "WCHAR": Encoding.UNICODE,
    "WVARCHAR": Encoding.UNICODE,
    "LONG WVARCHAR": Encoding.UNICODE,
    "BINARY": Encoding.BINARY,
    "VARBINARY": Encoding.BINARY,
    "LONG VARBINARY": Encoding.BINARY,
    "FLOAT": Encoding.DOUBLE_FLOAT,
    "REAL": Encoding.DOUBLE_FLOAT,
    "DOUBLE PRECISION": Encoding.DOUBLE_FLOAT,
    # The spec's INTEGER row lists "BIT TINYINT"; SMALLINT and INTEGER are 4-byte too.
    "BIT": Encoding.INTEGER,
    "TINYINT": Encoding.INTEGER,
    "SMALLINT": Encoding.INTEGER,
    "INTEGER": Encoding.INTEGER,
    "BIGINT": Encoding.BIGINT,
    "DATE": Encoding.DATE,
    "TIME": Encoding.DATE,
    "TIMESTAMP": Encoding.DATE,
    "NUMERIC": Encoding.DFLOAT,
    "DECIMAL": Encoding.DFLOAT,
}

# Fixed-width encodings: 8-byte IEEE double, 4- and 8-byte integers, all MSB first.
DOUBLE_FLOAT_VALUE = Struct("value" / Float64b)
INTEGER_VALUE = Struct("value" / Int32sb)
BIGINT_VALUE = Struct("value" / Int64sb)

# DATE/TIME/TIMESTAMP: 11 bytes. logmart reads "fractions of second" as nanoseconds (the unit
# of ODBC's SQL_TIMESTAMP_STRUCT.fraction, which solidDB's own API uses).
DATE_VALUE = Struct(
    "year" / Int16ub,
    "month" / Int8ub,
    "day" / Int8ub,
    "hour" / Int8ub,
    "minute" / Int8ub,
    "second" / Int8ub,
    "fraction" / Int32ub,
)

# Byte widths the decoder checks before reading a fixed-width value.
FIXED_WIDTHS: dict[Encoding, int] = {
    Encoding.DOUBLE_FLOAT: DOUBLE_FLOAT_VALUE.sizeof(),
    Encoding.INTEGER: INTEGER_VALUE.sizeof(),
    Encoding.BIGINT: BIGINT_VALUE.sizeof(),
    Encoding.DATE: DATE_VALUE.sizeof(),
}

# Other spellings of the types above, as SQL text and catalog exports may show them.
TYPE_ALIASES: dict[str, str] = {
    "INT": "INTEGER",
    "DOUBLE": "DOUBLE PRECISION",
    "CHARACTER": "CHAR",
    "CHARACTER VARYING": "VARCHAR",
    "CHAR VARYING": "VARCHAR",
    "DEC": "DECIMAL",
    "NCHAR": "WCHAR",
    "NVARCHAR": "WVARCHAR",
    "NATIONAL CHAR": "WCHAR",
    "NATIONAL CHARACTER": "WCHAR",
    "NATIONAL CHAR VARYING": "WVARCHAR",
    "NATIONAL CHARACTER VARYING": "WVARCHAR",
    "LONG VARWCHAR": "LONG WVARCHAR",
    "CLOB": "LONG VARCHAR",
    "NCLOB": "LONG WVARCHAR",
    "BLOB": "LONG VARBINARY",
}

# ODBC SQL type numbers (SYS_COLUMNS.DATA_TYPE_NUMBER) -> type name, for exports that hold
# numbers only.
ODBC_TYPE_NUMBERS: dict[int, str] = {
    1: "CHAR",
    2: "NUMERIC",
    3: "DECIMAL",
    4: "INTEGER",
    5: "SMALLINT",
    6: "FLOAT",
    7: "REAL",
    8: "DOUBLE PRECISION",
    9: "DATE",
    10: "TIME",
    11: "TIMESTAMP",
    12: "VARCHAR",
    91: "DATE",
    92: "TIME",
    93: "TIMESTAMP",
    -1: "LONG VARCHAR",
    -2: "BINARY",
    -3: "VARBINARY",
    -4: "LONG VARBINARY",
    -5: "BIGINT",
    -6: "TINYINT",
    -7: "BIT",
    -8: "WCHAR",
    -9: "WVARCHAR",
    -10: "LONG WVARCHAR",
}


def canonical_sql_type(name: str | int) -> str:
    """A type as the type table spells it: ``'int'`` -> ``'INTEGER'``, ``-9`` -> ``'WVARCHAR'``.

    A name logmart does not know comes back upper-cased; decoding its values then fails with a
    reason (the layout itself stays usable for the other columns).
    """
    if isinstance(name, int) or re.fullmatch(r"-?[0-9]+", str(name).strip()):
        return ODBC_TYPE_NUMBERS.get(int(name), f"ODBC TYPE {int(name)}")
    spelled = " ".join(str(name).upper().split())
    return TYPE_ALIASES.get(spelled, spelled)

"""A small parser for the DDL text solidDB logs in SQL records (RECID 6).

It understands what changes a table's layout: ``CREATE TABLE``, ``ALTER TABLE … ADD [COLUMN] /
DROP [COLUMN] / RENAME [COLUMN] / MODIFY [COLUMN] / ADD PRIMARY KEY / RENAME TO``,
``RENAME TABLE … TO …``, ``DROP TABLE`` and ``TRUNCATE TABLE``. Any other statement (indexes,
views, sequences, counters, grants …) parses as kind ``other``: kept, not a layout change.

Identifiers: unquoted ones fold to upper case (solidDB does), ``"quoted"`` ones keep their case;
names may be qualified ``schema.table`` or ``catalog.schema.table`` (the catalog is ignored).
A column with PRIMARY KEY (inline or as a table constraint) is NOT NULL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from udfs.errors import DecodeError
from udfs.soliddb.layouts import TYPE_ENCODINGS, Encoding, canonical_sql_type

# --- tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
      (?P<space>\s+|--[^\n]*|/\*.*?\*/)
    | (?P<qident>"(?:[^"]|"")*")
    | (?P<string>'(?:[^']|'')*')
    | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<word>[A-Za-z_][A-Za-z0-9_$#]*)
    | (?P<punct>[^\s])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    """One SQL token: kind (qident, string, number, word, punct) and its text."""

    kind: str
    text: str

    @property
    def upper(self) -> str:
        """Keyword comparison form (words only; other kinds keep their text)."""
        return self.text.upper() if self.kind == "word" else self.text

    def is_(self, *words: str) -> bool:
        """True when this is one of ``words`` (a keyword or a punctuation character)."""
        return self.kind in ("word", "punct") and self.upper in words


def tokenize(sql: str) -> list[Token]:
    """SQL text -> tokens, comments and white space dropped; unterminated quotes are errors."""
    tokens = []
    for match in _TOKEN.finditer(sql):
        kind = match.lastgroup or "punct"
        if kind == "space":
            continue
        if kind == "punct" and match.group() in "\"'":
            raise DecodeError(f"SQL text has an unterminated {match.group()} quote")
        tokens.append(Token(kind, match.group()))
    return tokens


def identifier(token: Token) -> str:
    """An identifier's name: quoted kept as written, unquoted upper-cased."""
    if token.kind == "qident":
        return token.text[1:-1].replace('""', '"')
    if token.kind == "word":
        return token.text.upper()
    raise DecodeError(f"expected a name, found {token.text!r}")


# --- statements --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnDef:
    """A column as a CREATE TABLE / ALTER TABLE statement defines it."""

    name: str
    sql_type: str
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    nullable: bool = True
    primary_key: bool = False


@dataclass(frozen=True)
class DdlStatement:
    """What one DDL statement does to a table layout.

    ``kind``: create_table, drop_table, rename_table, truncate_table, add_column, drop_column,
    rename_column, modify_column, add_primary_key, or other. ``verb`` is the statement's first
    words (``CREATE INDEX``) for every kind.
    """

    kind: str
    verb: str
    schema: str | None = None
    table: str | None = None
    columns: tuple[ColumnDef, ...] = ()
    primary_key: tuple[str, ...] = ()
    column: str | None = None
    new_name: str | None = None
    new_schema: str | None = None

    @property
    def changes_layout(self) -> bool:
        """True when the statement changes which columns a table has (or the table itself)."""
        return self.kind not in ("other", "truncate_table")


class _Cursor:
    """Tokens with a read position; ``expect``/``accept`` read keywords."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.pos = 0

    def peek(self, ahead: int = 0) -> Token | None:
        index = self.pos + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise DecodeError("SQL text ends too early")
        self.pos += 1
        return token

    def accept(self, *words: str) -> bool:
        token = self.peek()
        if token is not None and token.is_(*words):
            self.pos += 1
            return True
        return False

    def expect(self, word: str) -> None:
        token = self.next()
        if not token.is_(word):
            raise DecodeError(f"expected {word}, found {token.text!r}")


def parse_statement(sql: str) -> DdlStatement:
    """Parse one DDL statement (a trailing ``;`` is allowed). Malformed table DDL raises
    DecodeError; statements that do not touch table layouts come back as kind ``other``."""
    tokens = tokenize(sql)
    if not tokens:
        raise DecodeError("SQL text is empty")
    cursor = _Cursor(tokens)
    verb = _verb(tokens)
    first = cursor.next().upper
    if first == "CREATE" and _create_table_ahead(cursor):
        return _create_table(cursor, verb)
    if first == "ALTER" and cursor.accept("TABLE"):
        return _alter_table(cursor, verb)
    if first == "DROP" and cursor.accept("TABLE"):
        schema, table = _qualified_name(cursor)
        return DdlStatement("drop_table", verb, schema, table)
    if first == "TRUNCATE" and cursor.accept("TABLE"):
        schema, table = _qualified_name(cursor)
        return DdlStatement("truncate_table", verb, schema, table)
    if first == "RENAME" and cursor.accept("TABLE"):
        return _rename_table(cursor, verb)
    return DdlStatement("other", verb)


def _verb(tokens: list[Token]) -> str:
    """The statement's leading keywords: 'CREATE TABLE', 'CREATE UNIQUE INDEX', 'DROP VIEW'."""
    words = []
    for token in tokens[:4]:
        if token.kind != "word":
            break
        words.append(token.upper)
        if token.upper in _OBJECT_WORDS:
            break
    return " ".join(words)


_OBJECT_WORDS = frozenset(
    ("TABLE", "INDEX", "VIEW", "SEQUENCE", "COUNTER", "SCHEMA", "USER", "ROLE", "PROCEDURE")
)
_TABLE_PREFIX_WORDS = frozenset(("GLOBAL", "LOCAL", "TEMPORARY", "TRANSIENT"))
_CONSTRAINT_WORDS = ("CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "CHECK")


def _create_table_ahead(cursor: _Cursor) -> bool:
    """After CREATE: skip GLOBAL/TEMPORARY/TRANSIENT and read TABLE, if this creates a table."""
    ahead = 0
    while (token := cursor.peek(ahead)) is not None and token.is_(*_TABLE_PREFIX_WORDS):
        ahead += 1
    if token is None or not token.is_("TABLE"):
        return False
    cursor.pos += ahead + 1
    return True


def _qualified_name(cursor: _Cursor) -> tuple[str | None, str]:
    """``[catalog.][schema.]name`` -> (schema or None, name)."""
    parts = [identifier(cursor.next())]
    while cursor.accept("."):
        parts.append(identifier(cursor.next()))
    if len(parts) > 3:
        raise DecodeError(f"name {'.'.join(parts)!r} has more than three parts")
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


def _create_table(cursor: _Cursor, verb: str) -> DdlStatement:
    if cursor.accept("IF"):
        cursor.expect("NOT")
        cursor.expect("EXISTS")
    schema, table = _qualified_name(cursor)
    cursor.expect("(")
    columns: list[ColumnDef] = []
    primary_key: tuple[str, ...] = ()
    for element in _elements(cursor):
        if element[0].is_(*_CONSTRAINT_WORDS):
            primary_key = _table_primary_key(element) or primary_key
        else:
            columns.append(_column_def(element))
    if not columns:
        raise DecodeError(f"CREATE TABLE {table} defines no columns")
    if primary_key:
        columns = _mark_primary_key(columns, primary_key)
    inline = tuple(c.name for c in columns if c.primary_key)
    return DdlStatement("create_table", verb, schema, table, tuple(columns), primary_key or inline)


def _elements(cursor: _Cursor) -> list[list[Token]]:
    """The comma-separated items up to the ``)`` that closes the list (after its ``(``)."""
    elements: list[list[Token]] = [[]]
    depth = 0
    while True:
        token = cursor.next()
        if token.is_("("):
            depth += 1
        elif token.is_(")"):
            if depth == 0:
                break
            depth -= 1
        elif token.is_(",") and depth == 0:
            elements.append([])
            continue
        elements[-1].append(token)
    if any(not element for element in elements):
        raise DecodeError("empty item in a parenthesised list")
    return elements


def _column_def(tokens: list[Token]) -> ColumnDef:
    """``name type[(p[,s])] [DEFAULT …] [NOT NULL | NULL] [PRIMARY KEY] …``."""
    cursor = _Cursor(tokens)
    name = identifier(cursor.next())
    sql_type, first, second = _data_type(cursor)
    nullable, primary_key = True, False
    previous = None
    depth = 0
    while (token := cursor.peek()) is not None:
        cursor.pos += 1
        depth += token.is_("(") - token.is_(")")
        if depth == 0 and token.is_("NULL") and previous is not None and previous.is_("NOT"):
            nullable = False
        elif depth == 0 and token.is_("KEY") and previous is not None and previous.is_("PRIMARY"):
            primary_key = True
        previous = token
    return _typed_column(name, sql_type, first, second, nullable and not primary_key, primary_key)


def _typed_column(
    name: str, sql_type: str, first: int | None, second: int | None, nullable: bool, key: bool
) -> ColumnDef:
    """Put ``type(first, second)`` where it belongs: length for character/binary types,
    precision and scale for numbers (DECIMAL(p) has scale 0)."""
    encoding = TYPE_ENCODINGS.get(sql_type)
    if encoding in (Encoding.CHAR, Encoding.UNICODE, Encoding.BINARY):
        return ColumnDef(name, sql_type, length=first, nullable=nullable, primary_key=key)
    if encoding is Encoding.DFLOAT:
        scale = second if second is not None else (0 if first is not None else None)
        return ColumnDef(
            name, sql_type, precision=first, scale=scale, nullable=nullable, primary_key=key
        )
    return ColumnDef(name, sql_type, precision=first, nullable=nullable, primary_key=key)


_MULTIWORD_TYPES = (
    ("LONG", "VARCHAR"),
    ("LONG", "WVARCHAR"),
    ("LONG", "VARWCHAR"),
    ("LONG", "VARBINARY"),
    ("DOUBLE", "PRECISION"),
    ("CHARACTER", "VARYING"),
    ("CHAR", "VARYING"),
    ("NATIONAL", "CHARACTER", "VARYING"),
    ("NATIONAL", "CHAR", "VARYING"),
    ("NATIONAL", "CHARACTER"),
    ("NATIONAL", "CHAR"),
)


def _data_type(cursor: _Cursor) -> tuple[str, int | None, int | None]:
    """A type name (one or more words) and its optional ``(n)`` / ``(p, s)``."""
    words = [cursor.next().upper]
    for spelling in _MULTIWORD_TYPES:
        if words[0] == spelling[0] and all(
            (token := cursor.peek(i)) is not None and token.is_(word)
            for i, word in enumerate(spelling[1:])
        ):
            words = list(spelling)
            cursor.pos += len(spelling) - 1
            break
    first = second = None
    if cursor.accept("("):
        first = _integer(cursor.next())
        if cursor.accept(","):
            second = _integer(cursor.next())
        cursor.expect(")")
    return canonical_sql_type(" ".join(words)), first, second


def _integer(token: Token) -> int:
    if token.kind != "number" or not token.text.isdigit():
        raise DecodeError(f"expected a whole number in a type, found {token.text!r}")
    return int(token.text)


def _table_primary_key(tokens: list[Token]) -> tuple[str, ...]:
    """``[CONSTRAINT n] PRIMARY KEY (a, b)`` -> ('A', 'B'); other constraints -> ()."""
    cursor = _Cursor(tokens)
    if cursor.accept("CONSTRAINT"):
        identifier(cursor.next())
    if not (cursor.accept("PRIMARY") and cursor.accept("KEY")):
        return ()
    cursor.expect("(")
    return tuple(identifier(element[0]) for element in _elements(cursor))


def _mark_primary_key(columns: list[ColumnDef], key: tuple[str, ...]) -> list[ColumnDef]:
    names = {c.name for c in columns}
    missing = [name for name in key if name not in names]
    if missing:
        raise DecodeError(f"PRIMARY KEY names unknown columns {missing}")
    return [
        ColumnDef(c.name, c.sql_type, c.length, c.precision, c.scale, False, True)
        if c.name in key
        else c
        for c in columns
    ]


def _alter_table(cursor: _Cursor, verb: str) -> DdlStatement:
    schema, table = _qualified_name(cursor)
    action = cursor.next()
    if action.is_("ADD"):
        return _alter_add(cursor, verb, schema, table)
    if action.is_("DROP"):
        target = cursor.peek()
        if target is not None and target.is_(*_CONSTRAINT_WORDS):
            return DdlStatement("other", verb, schema, table)
        cursor.accept("COLUMN")
        column = identifier(cursor.next())
        return DdlStatement("drop_column", verb, schema, table, column=column)
    if action.is_("RENAME"):
        return _alter_rename(cursor, verb, schema, table)
    if action.is_("MODIFY"):
        cursor.accept("COLUMN")
        column = _column_def(cursor.tokens[cursor.pos :])
        return DdlStatement("modify_column", verb, schema, table, (column,), column=column.name)
    return DdlStatement("other", verb, schema, table)


def _alter_add(cursor: _Cursor, verb: str, schema: str | None, table: str) -> DdlStatement:
    """ADD [COLUMN] coldef | ADD [CONSTRAINT n] PRIMARY KEY (…) | ADD other constraint."""
    rest = [t for t in cursor.tokens[cursor.pos :] if not t.is_(";")]
    if not rest:
        raise DecodeError("ALTER TABLE … ADD names nothing")
    if rest[0].is_(*_CONSTRAINT_WORDS):
        key = _table_primary_key(rest)
        if key:
            return DdlStatement("add_primary_key", verb, schema, table, primary_key=key)
        return DdlStatement("other", verb, schema, table)
    if rest[0].is_("COLUMN"):
        rest = rest[1:]
    column = _column_def(rest)
    return DdlStatement("add_column", verb, schema, table, (column,), column=column.name)


def _alter_rename(cursor: _Cursor, verb: str, schema: str | None, table: str) -> DdlStatement:
    """RENAME [COLUMN] old [TO] new | RENAME TO new_table."""
    if cursor.accept("TO"):
        new_schema, new_name = _qualified_name(cursor)
        return DdlStatement(
            "rename_table", verb, schema, table, new_name=new_name, new_schema=new_schema
        )
    cursor.accept("COLUMN")
    column = identifier(cursor.next())
    cursor.accept("TO")
    new_name = identifier(cursor.next())
    return DdlStatement("rename_column", verb, schema, table, column=column, new_name=new_name)


def _rename_table(cursor: _Cursor, verb: str) -> DdlStatement:
    schema, table = _qualified_name(cursor)
    cursor.expect("TO")
    new_schema, new_name = _qualified_name(cursor)
    return DdlStatement(
        "rename_table", verb, schema, table, new_name=new_name, new_schema=new_schema
    )

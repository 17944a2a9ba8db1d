"""Typed relations: each source table as Spark SQL views with the table's own column types.

Two views and a table function per source table (docs/typed-tables.md):

- ``changes.<name>``: the committed change feed (``marts.fct_changes``), one row per image as
  Delta Lake's change data feed gives it (an update is an ``update_preimage`` and an
  ``update_postimage`` row), the table's columns typed, plus ``_change_type``,
  ``_commit_position``, ``_commit_timestamp``, ``_transaction_id``, ``_change_seq``,
  ``_capture``, ``_row_key`` and ``_warnings``;
- ``current.<name>``: the table's live rows (``marts.fct_row_history`` where ``is_current``);
- ``as_of.<name>(position_or_ts)``: a SQL table function, the table's rows as of a commit
  position or a timestamp (``marts.table_as_of``), typed like ``current.<name>``.

The rules (source SQL type -> Spark type, text -> typed value, relation names, columns over a
table's layout versions) are plain Python here, testable without Spark; :func:`sync_views`
applies them to a session after the dbt build.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

# Schemas of the typed relations.
CHANGES_SCHEMA = "changes"
CURRENT_SCHEMA = "current"
AS_OF_SCHEMA = "as_of"
# The view property holding the hash of the view's SQL: a view whose SQL is unchanged is not
# created again (incremental builds). A function has no properties: its comment ends with
# the hash in FUNCTION_FINGERPRINT brackets.
FINGERPRINT_PROPERTY = "logmart.typed_fingerprint"
FUNCTION_FINGERPRINT = re.compile(r"\[fingerprint ([0-9a-f]{16})\]$")
# The schema property holding the hash of every typed relation's name and SQL together, set
# when a sync finished: a build whose tables and columns did not change (a new capture of the
# same tables) checks that and the names, not every object's own hash (654 objects took 18 s).
LAYER_FINGERPRINT_PROPERTY = "logmart.typed_layer_fingerprint"
# Objects created at once: Spark analyses each view's SQL (most of a creation's cost) on the
# calling thread, so two cores analyse two views at a time; the metastore writes take turns.
CREATE_THREADS = 4
# Derby keeps a view's text only up to 32,700 characters; a view whose SQL is longer is not
# created (see :class:`SyncResult`.too_wide).
MAX_VIEW_TEXT = 32_000

_DECIMAL = re.compile(r"^(DECIMAL|DEC|NUMERIC|NUM)\b\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")
_TIMESTAMP_FRACTION_LOST = r"[.][0-9]{6}[0-9]*[1-9]"


def spark_type(sql_type: str | None) -> str:
    """The Spark SQL type of a source column type (`column_type` of dim_table_versions, any
    source): integers, DECIMAL(p,s) up to 38 digits, REAL/FLOAT/DOUBLE, DATE, TIMESTAMP (also
    WITH TIME ZONE), binary (FOR BIT DATA, BINARY, VARBINARY, BLOB, ROWID), BOOLEAN; STRING for
    everything else, for DECFLOAT (Spark has no decimal floating point: DECIMAL(38) cannot hold
    its exponent range, infinities or NaN, DOUBLE loses digits; the text keeps the value
    exactly), for TIME (Spark 4.3 refuses its TIME type: UNSUPPORTED_TIME_TYPE; the
    text `HH:MM:SS` sorts and compares correctly) and for an unknown type."""
    if not sql_type:
        return "STRING"
    t = " ".join(sql_type.upper().split())
    if re.match(r"(TINYINT|SMALLINT)\b", t):
        return "SMALLINT"
    if re.match(r"(INTEGER|INT)\b", t):
        return "INT"
    if re.match(r"BIGINT\b", t):
        return "BIGINT"
    decimal = _DECIMAL.match(t)
    if decimal:
        precision = int(decimal.group(2) or 5)  # Db2: DECIMAL alone is DECIMAL(5,0)
        scale = int(decimal.group(3) or 0)
        return f"DECIMAL({precision},{scale})" if precision <= 38 else "STRING"
    if t.startswith("DECFLOAT"):
        return "STRING"
    if re.match(r"REAL\b", t):
        return "FLOAT"
    if re.match(r"(FLOAT|DOUBLE)\b", t):
        return "DOUBLE"
    if "FOR BIT DATA" in t or re.match(r"(BINARY|VARBINARY|LONG VARBINARY|BLOB|ROWID)\b", t):
        return "BINARY"
    if t.startswith("TIMESTAMP"):
        return "TIMESTAMP"
    if t in ("DATE", "BOOLEAN"):
        return t
    return "STRING"


def typed_value_sql(text_sql: str, target: str) -> str:
    """Spark SQL turning the rendered text of a value (/work/shared/specs, "Value rendering")
    into `target` (a :func:`spark_type`). ``try_cast`` and ``unhex`` give NULL for a value that
    does not fit, never an error (Spark 4 runs ANSI mode); :func:`warnings_sql` reports it."""
    if target == "STRING":
        return text_sql
    if target == "BINARY":
        return f"unhex({text_sql})"
    if target == "TIMESTAMP":
        # a fraction beyond microseconds (TIMESTAMP(7..12)) is cut to microseconds
        return f"try_cast(regexp_replace({text_sql},'([.][0-9]{{6}})[0-9]+','$1') as timestamp)"
    return f"try_cast({text_sql} as {target.lower()})"


def sql_string(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_identifier(name: str) -> str:
    """A Spark SQL identifier in backquotes."""
    return "`" + name.replace("`", "``") + "`"


# ---------------------------------------------------------------------------------------------
# Relation names


@dataclass(frozen=True)
class SourceTable:
    """One table of one log stream."""

    source_system: str
    log_stream: str
    table_schema: str | None
    table_name: str

    @property
    def label(self) -> str:
        return "/".join(
            [self.source_system, self.log_stream, self.table_schema or "", self.table_name]
        )


def base_name(table: SourceTable) -> str:
    """`<source_system>__<log_stream>__<table_schema>__<table_name>`, lower-cased, every
    character outside [a-z0-9_] replaced by `_`."""
    parts = [table.source_system, table.log_stream, table.table_schema or "", table.table_name]
    return re.sub(r"[^a-z0-9_]", "_", "__".join(parts).lower())


def relation_names(tables: Iterable[SourceTable]) -> dict[SourceTable, str]:
    """Each table's relation name (:func:`base_name`); tables whose base names clash (case,
    punctuation) each get `__` and the first 8 hex digits of the SHA-1 of
    `source_system/log_stream/table_schema/table_name` (exact text) appended."""
    tables = sorted(set(tables), key=lambda t: t.label)
    by_base: dict[str, list[SourceTable]] = {}
    for table in tables:
        by_base.setdefault(base_name(table), []).append(table)
    names = {}
    for base, same in by_base.items():
        for table in same:
            if len(same) == 1:
                names[table] = base
            else:
                digest = hashlib.sha1(table.label.encode("utf-8")).hexdigest()[:8]
                names[table] = f"{base}__{digest}"
    return names


# ---------------------------------------------------------------------------------------------
# Columns over a table's layout versions


@dataclass(frozen=True)
class TypedColumn:
    """One column of a typed relation: `name` in the relation, `source_name` in the images."""

    name: str
    source_name: str
    source_type: str | None
    spark_type: str


def evolved_columns(versions: Sequence[Sequence[tuple[str, str | None]]]) -> list[TypedColumn]:
    """The columns of a relation from the table's layout versions, oldest first (each a list
    of (column name, source type)): the union in order of first appearance; a column keeps
    the type of the latest version that has it (a dropped column stays, its last type). Spark
    column names are case-insensitive: a name that differs from an earlier one only in case
    gets `__2`, `__3`, ... appended."""
    order: list[str] = []
    latest: dict[str, str | None] = {}
    for version in versions:
        for name, sql_type in version:
            if name not in latest:
                order.append(name)
            latest[name] = sql_type
    taken: set[str] = set(_RESERVED)
    columns = []
    for source_name in order:
        name, n = source_name, 1
        while name.lower() in taken:
            n += 1
            name = f"{source_name}__{n}"
        taken.add(name.lower())
        sql_type = latest[source_name]
        columns.append(TypedColumn(name, source_name, sql_type, spark_type(sql_type)))
    return columns


# ---------------------------------------------------------------------------------------------
# The views' SQL

CHANGE_COLUMNS = (
    "_change_type",
    "_commit_position",
    "_commit_timestamp",
    "_transaction_id",
    "_change_seq",
    "_capture",
    "_row_key",
)
CURRENT_COLUMNS = ("_row_key", "_valid_from_position", "_valid_from_ts", "_capture", "_unavailable")
_RESERVED = {c.lower() for c in (*CHANGE_COLUMNS, *CURRENT_COLUMNS, "_warnings", "_i")}


def warnings_sql(columns: Sequence[TypedColumn], image: str = "_i", typed_map: str = "_j") -> str:
    """`_warnings`, an array of 'COLUMN: reason' (empty when none) of a row: a value not null
    in the text `image` whose typed value is null ("cannot be read as TYPE"; `typed_map` is
    :func:`typed_map_sql` of the row), and a timestamp whose fraction beyond microseconds was
    cut (only when the cut digits are not all zero)."""
    typed = [c for c in columns if c.spark_type != "STRING"]
    if not typed:
        return "cast(array() as array<string>)"
    types = ", ".join(f"{sql_string(c.source_name)}, '{c.spark_type}'" for c in typed)
    not_read = (
        f"transform(filter(map_entries(map({types})), e -> {image}[e.key] is not null "
        f"and not map_contains_key({typed_map}, e.key)), e -> concat(e.key, ': ', "
        f"left({image}[e.key], 60), ' cannot be read as ', e.value))"
    )
    stamps = [c for c in typed if c.spark_type == "TIMESTAMP"]
    if not stamps:
        return not_read
    names = ", ".join(sql_string(c.source_name) for c in stamps)
    cut = (
        f"transform(filter(array({names}), k -> {image}[k] rlike '{_TIMESTAMP_FRACTION_LOST}'), "
        "k -> concat(k, ': fraction beyond microseconds cut'))"
    )
    return f"concat({not_read}, {cut})"


def typed_map_sql(columns: Sequence[TypedColumn]) -> str:
    """The row's non-null typed values as a map from source column name to text (to_json
    leaves nulls out): which values did cast. Null when no column has a type to cast to."""
    typed = [c for c in columns if c.spark_type != "STRING"]
    if not typed:
        return "cast(null as map<string,string>)"
    fields = ", ".join(
        sql_identifier(c.name)
        + ("" if c.name == c.source_name else " as " + sql_identifier(c.source_name))
        for c in typed
    )
    return f"from_json(to_json(struct({fields})), 'map<string,string>')"


def _table_filter(table: SourceTable) -> str:
    schema = (
        "table_schema is null"
        if table.table_schema is None
        else (f"table_schema = {sql_string(table.table_schema)}")
    )
    return (
        f"source_system = {sql_string(table.source_system)} "
        f"and log_stream = {sql_string(table.log_stream)} and {schema} "
        f"and table_name = {sql_string(table.table_name)}"
    )


def row_key_sql(key_columns: Sequence[str], image: str = "_i") -> str:
    """fct_row_history's row_key over an image: the key values as JSON, else a hash of the
    whole image."""
    if key_columns:
        keys = ", ".join(f"{image}[{sql_string(k)}]" for k in key_columns)
        return f"to_json(array({keys}))"
    return f"sha2(to_json(array_sort(map_entries({image}))), 256)"


def _typed_view_sql(columns: Sequence[TypedColumn], meta: Sequence[str], rows: str) -> str:
    """The typed columns, `meta` and `_warnings` over `rows`, a query giving `meta` and the
    text image `_i`."""
    names = "".join(f"{sql_identifier(c.name)}, " for c in columns)
    metas = ", ".join(meta)
    typed = "".join(
        f"{typed_value_sql(f'_i[{sql_string(c.source_name)}]', c.spark_type)} "
        f"as {sql_identifier(c.name)}, "
        for c in columns
    )
    return (
        f"select {names}{metas}, {warnings_sql(columns)} as _warnings "
        f"from (select *, {typed_map_sql(columns)} as _j "
        f"from (select {typed}{metas}, _i from ({rows})))"
    )


def changes_view_sql(
    table: SourceTable, columns: Sequence[TypedColumn], key_columns: Sequence[str]
) -> str:
    """The SELECT of `changes.<name>`: committed changes of the table, an update as an
    update_preimage and an update_postimage row (a truncate: every column NULL)."""
    rows = (
        "select _x.t as _change_type, commit_position as _commit_position, "
        "commit_ts as _commit_timestamp, transaction_id as _transaction_id, "
        "change_seq as _change_seq, capture as _capture, "
        f"{row_key_sql(key_columns, '_x.i')} as _row_key, _x.i as _i "
        "from marts.fct_changes lateral view inline(if(operation = 'update' and "
        "before_image is not null and after_image is not null, "
        "array(struct('update_preimage' as t, before_image as i), "
        "struct('update_postimage' as t, after_image as i)), "
        "array(struct(_change_type as t, coalesce(after_image, before_image) as i)))) _x "
        f"where disposition = 'committed' and {_table_filter(table)}"
    )
    return _typed_view_sql(columns, CHANGE_COLUMNS, rows)


# fct_row_history's columns (and marts.table_as_of's) as CURRENT_COLUMNS and the image `_i`
_ROW_VERSION_COLUMNS = (
    "select row_key as _row_key, valid_from_position as _valid_from_position, "
    "valid_from_ts as _valid_from_ts, capture as _capture, unavailable as _unavailable, "
    "row_image as _i from "
)


def current_view_sql(table: SourceTable, columns: Sequence[TypedColumn]) -> str:
    """The SELECT of `current.<name>`: the table's live rows (fct_row_history.is_current)."""
    rows = (
        f"{_ROW_VERSION_COLUMNS}marts.fct_row_history where is_current and {_table_filter(table)}"
    )
    return _typed_view_sql(columns, CURRENT_COLUMNS, rows)


def as_of_function_sql(table: SourceTable, columns: Sequence[TypedColumn]) -> str:
    """The body of `as_of.<name>(position_or_ts)`: the table's rows as of a commit position or
    a timestamp (marts.table_as_of, the rule of the macro as_of_condition), typed."""
    schema = "null" if table.table_schema is None else sql_string(table.table_schema)
    rows = (
        f"{_ROW_VERSION_COLUMNS}marts.table_as_of("
        f"{schema}, {sql_string(table.table_name)}, position_or_ts) "
        f"where source_system = {sql_string(table.source_system)} "
        f"and log_stream = {sql_string(table.log_stream)}"
    )
    return _typed_view_sql(columns, CURRENT_COLUMNS, rows)


def fingerprint(sql: str) -> str:
    return hashlib.sha256(sql.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Applying the rules to a session


@dataclass
class TypedTable:
    """A source table with its relation name, columns and key."""

    table: SourceTable
    name: str
    columns: list[TypedColumn]
    key_columns: list[str]


@dataclass
class SyncResult:
    """What :func:`sync_views` did: views created (new or changed definition), kept
    (unchanged), dropped (their table is in no capture any more), too_wide (SQL beyond
    Derby's limit on a view's text: not created, the table named) and missing_model
    (marts.dim_typed_relations not built: the views were left as they were)."""

    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    too_wide: list[str] = field(default_factory=list)
    missing_model: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": len(self.created),
            "kept": len(self.kept),
            "dropped": sorted(self.dropped),
            "too_wide": sorted(self.too_wide),
            "missing_model": self.missing_model,
        }


def typed_tables(spark: Any) -> list[TypedTable]:
    """Every typed relation of marts.dim_typed_relations (the dbt model applies these rules
    through the SQL function logmart_typed_columns and the naming rule in SQL)."""
    rows = spark.sql(
        "select source_system, log_stream, table_schema, table_name, relation_name, "
        "key_columns, columns from marts.dim_typed_relations "
        "order by source_system, log_stream, table_schema, table_name"
    ).collect()
    return [
        TypedTable(
            SourceTable(row.source_system, row.log_stream, row.table_schema, row.table_name),
            row.relation_name,
            [
                TypedColumn(c.column_name, c.source_column_name, c.source_type, c.spark_type)
                for c in row.columns or []
            ],
            list(row.key_columns or []),
        )
        for row in rows
    ]


def _existing_views(spark: Any, schema: str) -> set[str]:
    return {row.viewName for row in spark.sql(f"show views in {schema}").collect()}


def _fingerprint_of(spark: Any, view: str) -> str | None:
    rows = spark.sql(f"show tblproperties {view} ('{FINGERPRINT_PROPERTY}')").collect()
    value = rows[0].value if rows else None
    return value if value and len(value) == 16 else None


def _existing_functions(spark: Any, schema: str) -> set[str]:
    # `show user functions in s` gives the schema's functions qualified (spark_catalog.s.f) and
    # the session's temporary ones (logmart's Python UDFs) unqualified: only the former count
    return {
        parts[-1]
        for row in spark.sql(f"show user functions in {schema}").collect()
        if len(parts := row.function.split(".")) >= 2 and parts[-2] == schema
    }


def _function_fingerprint_of(spark: Any, function: str) -> str | None:
    for row in spark.sql(f"describe function extended {function}").collect():
        text = row[0].strip()
        if text.startswith("Comment:"):
            found = FUNCTION_FINGERPRINT.search(text)
            return found.group(1) if found else None
    return None


def _create_view(spark: Any, view: str, sql: str, mark: str) -> None:
    spark.sql(
        f"create or replace view {view} "
        f"tblproperties ('{FINGERPRINT_PROPERTY}' = '{mark}') as {sql}"
    )


def _create_function(spark: Any, function: str, sql: str, mark: str) -> None:
    comment = sql_string(f"Rows of one table as of a position or time [fingerprint {mark}]")
    spark.sql(
        f"create or replace function {function}(position_or_ts string) returns table "
        f"comment {comment} return {sql}"
    )


def _sync(
    result: SyncResult,
    wanted: dict[str, str],
    existing: set[str],
    fingerprint_of: Callable[[str], str | None],
    create: Callable[[str, str, str], None],
    drop: Callable[[str], None],
) -> None:
    """Create each wanted object (name -> SQL) that is missing or whose SQL changed, keep the
    others, drop the existing ones no longer wanted."""
    to_create = []
    for name, sql in sorted(wanted.items()):
        if len(sql) > MAX_VIEW_TEXT:
            result.too_wide.append(name)
            continue
        mark = fingerprint(sql)
        if name in existing and fingerprint_of(name) == mark:
            result.kept.append(name)
            continue
        to_create.append((name, sql, mark))
    with ThreadPoolExecutor(CREATE_THREADS) as pool:
        for _ in pool.map(lambda item: create(*item), to_create):  # raises the first error
            pass
    result.created.extend(name for name, _, _ in to_create)
    for name in sorted(existing - set(wanted)):
        drop(name)
        result.dropped.append(name)


def layer_fingerprint(wanted: dict[str, str]) -> str:
    """The hash of every wanted object's name and SQL (those too wide to create included: a
    change to one is a change of the layer)."""
    return fingerprint(
        "\n".join(f"{name}\t{fingerprint(sql)}" for name, sql in sorted(wanted.items()))
    )


def _layer_fingerprint_of(spark: Any) -> str | None:
    for row in spark.sql(f"describe schema extended {CHANGES_SCHEMA}").collect():
        if row[0] == "Properties":
            found = re.search(re.escape(LAYER_FINGERPRINT_PROPERTY) + r",([0-9a-f]{16})", row[1])
            return found.group(1) if found else None
    return None


def sync_views(spark: Any) -> SyncResult:
    """Create or replace the typed views and as-of functions whose SQL changed, keep the
    others, drop those of tables in no capture any more."""
    result = SyncResult()
    if not spark.catalog.tableExists("marts.dim_typed_relations"):
        # a build whose dbt arguments left the model out: nothing to go by, nothing dropped
        result.missing_model = True
        return result
    views: dict[str, str] = {}
    functions: dict[str, str] = {}
    for typed in typed_tables(spark):
        views[f"{CHANGES_SCHEMA}.{typed.name}"] = changes_view_sql(
            typed.table, typed.columns, typed.key_columns
        )
        views[f"{CURRENT_SCHEMA}.{typed.name}"] = current_view_sql(typed.table, typed.columns)
        functions[f"{AS_OF_SCHEMA}.{typed.name}"] = as_of_function_sql(typed.table, typed.columns)
    for schema in (CHANGES_SCHEMA, CURRENT_SCHEMA, AS_OF_SCHEMA):
        if not spark.catalog.databaseExists(schema):  # (Hive logs an error for an existing one)
            spark.sql(f"create schema if not exists {schema}")
    existing_views = {
        f"{schema}.{view}"
        for schema in (CHANGES_SCHEMA, CURRENT_SCHEMA)
        for view in _existing_views(spark, schema)
    }
    existing_functions = {f"{AS_OF_SCHEMA}.{f}" for f in _existing_functions(spark, AS_OF_SCHEMA)}
    wanted = {**views, **functions}
    too_wide = {name for name, sql in wanted.items() if len(sql) > MAX_VIEW_TEXT}
    creatable = set(wanted) - too_wide
    if (
        _layer_fingerprint_of(spark) == layer_fingerprint(wanted)
        and existing_views | existing_functions == creatable
    ):
        # the same relations as the last sync left them: nothing to look at one by one
        result.kept = sorted(creatable)
        result.too_wide = sorted(too_wide)
        return result
    _sync(
        result,
        views,
        existing_views,
        lambda view: _fingerprint_of(spark, view),
        lambda view, sql, mark: _create_view(spark, view, sql, mark),
        lambda view: spark.sql(f"drop view if exists {view}"),
    )
    _sync(
        result,
        functions,
        existing_functions,
        lambda function: _function_fingerprint_of(spark, function),
        lambda function, sql, mark: _create_function(spark, function, sql, mark),
        lambda function: spark.sql(f"drop function if exists {function}"),
    )
    spark.sql(
        f"alter schema {CHANGES_SCHEMA} set dbproperties "
        f"('{LAYER_FINGERPRINT_PROPERTY}' = '{layer_fingerprint(wanted)}')"
    )
    return result


# ---------------------------------------------------------------------------------------------
# Reading the typed relations (logmart changes)


def net_changes_sql(
    relation: str, from_position: str, to_position: str, columns: Sequence[str]
) -> str:
    """The query of the dbt macro `net_changes` (macros/typed.sql), rendered here with plain
    Jinja so that `logmart changes --net` and the macro are one definition."""
    import jinja2

    from udfs.dbt_runner import project_dir

    text = (project_dir() / "macros" / "typed.sql").read_text(encoding="utf-8")
    template = jinja2.Environment(autoescape=False).from_string(
        text + "{{ net_changes(relation, from_position, to_position, columns) }}"
    )
    return template.render(
        relation=relation,
        from_position=from_position,
        to_position=to_position,
        columns=list(columns),
    )


def relation_of(
    spark: Any, table: str, source_system: str | None = None, log_stream: str | None = None
) -> TypedTable:
    """The one typed table 'SCHEMA.TABLE' names (with --source / --stream when it is in more
    than one log stream)."""
    from udfs.errors import LogmartError

    schema, _, name = table.rpartition(".")
    if not schema or not name:
        raise LogmartError(f"--table {table!r}: give the table as SCHEMA.TABLE")
    found = [
        typed
        for typed in typed_tables(spark)
        if typed.table.table_schema == schema
        and typed.table.table_name == name
        and source_system in (None, typed.table.source_system)
        and log_stream in (None, typed.table.log_stream)
    ]
    if not found:
        raise LogmartError(
            f"no table {schema}.{name} in marts.dim_typed_relations"
            + (" with that --source/--stream" if source_system or log_stream else "")
            + '; `logmart query "show views in changes"` lists the typed tables'
        )
    if len(found) > 1:
        logs = ", ".join(
            f"--source {t.table.source_system} --stream {t.table.log_stream}" for t in found
        )
        raise LogmartError(
            f"{schema}.{name} is in more than one log stream; choose one with {logs}"
        )
    return found[0]


def changes(
    spark: Any,
    table: str,
    from_position: str,
    to_position: str,
    net: bool = False,
    source_system: str | None = None,
    log_stream: str | None = None,
) -> tuple[list[str], Any]:
    """Column names and rows of a table's typed change feed between two commit positions
    (both included), in commit order; with `net`, its net changes (:func:`net_changes_sql`)."""
    from udfs.errors import LogmartError

    if from_position > to_position:
        raise LogmartError(
            f"--from-position {from_position} is after --to-position {to_position}; "
            "give the earlier position first"
        )
    typed = relation_of(spark, table, source_system, log_stream)
    relation = f"{CHANGES_SCHEMA}.{typed.name}"
    if relation.split(".", 1)[1] not in _existing_views(spark, CHANGES_SCHEMA):
        raise LogmartError(
            f"{relation} does not exist; run `logmart build` (its SQL may be too wide for "
            "the metastore: see the build's output)"
        )
    columns = spark.table(relation).columns
    if net:
        query = net_changes_sql(relation, from_position, to_position, columns)
    else:
        query = (
            f"select * from {relation} where _commit_position >= {sql_string(from_position)} "
            f"and _commit_position <= {sql_string(to_position)}"
        )
    rows = spark.sql(
        f"select * from ({query}) "
        "order by _commit_position, _change_seq, _change_type = 'update_postimage'"
    ).toLocalIterator()
    return columns, (list(row) for row in rows)


# ---------------------------------------------------------------------------------------------
# The SQL function of marts.dim_typed_relations

TYPED_COLUMNS_TYPE = (
    "array<struct<column_name:string,source_column_name:string,"
    "source_type:string,spark_type:string>>"
)


def typed_columns(layouts: Sequence[Sequence[Any]] | None) -> list[dict[str, str | None]]:
    """:func:`evolved_columns` of layouts given as the SQL function receives them (each a list
    of structs with column_name and column_type), as rows of :data:`TYPED_COLUMNS_TYPE`
    (dicts: both the Arrow and the pickled UDF paths take them for structs)."""
    # `is None` tests, not truthiness: an Arrow batch may hand arrays over as numpy arrays
    versions = [
        [(c["column_name"], c["column_type"]) for c in (layout if layout is not None else [])]
        for layout in (layouts if layouts is not None else [])
    ]
    return [
        {
            "column_name": c.name,
            "source_column_name": c.source_name,
            "source_type": c.source_type,
            "spark_type": c.spark_type,
        }
        for c in evolved_columns(versions)
    ]

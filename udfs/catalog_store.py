"""A local warehouse's catalog in a file: Spark's in-memory catalog, saved and restored.

Hive's metastore (Derby through DataNucleus) is a slow part of a small build: every statement
resolves its tables there, one call at a time (Spark serialises them), and the JVM loads and
compiles DataNucleus and Derby first. On Spark's in-memory catalog the demo's build took
45.7-48.7 s against 54.2-55.8 s (docs/performance.md, 2026-11-28). So a local session on a new
warehouse keeps its catalog in memory, and logmart writes it to
`<warehouse>/catalog/spark-catalog.ser`: Java serialization of the catalog's own objects
(databases, tables with their schemas and properties, partitions; a function as its strings).
It is written at the raw load's points of consistency (udfs/pipeline.py), after every dbt run
and build and when the session stops (or the process ends without stopping it), and read back
when a session opens the warehouse. A warehouse that has a Derby metastore (`metastore_db`,
made before) keeps it; so does a cluster's session, whose metastore is the cluster's.

One process at a time: the session's process holds a lock on `<warehouse>/catalog/lock`
(udfs/session.py), as Derby did on its own files.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from udfs.errors import LogmartError

CATALOG_FOLDER = "catalog"
CATALOG_FILE = "spark-catalog.ser"
LOCK_FILE = "lock"
# LOGMART_CATALOG=derby: a new local warehouse gets a Derby metastore, as before 2026-11-28
CATALOG_VARIABLE = "LOGMART_CATALOG"
CATALOGS = ("auto", "derby")


def catalog_file(warehouse: Path) -> Path:
    return Path(warehouse) / CATALOG_FOLDER / CATALOG_FILE


def lock_file(warehouse: Path) -> Path:
    return Path(warehouse) / CATALOG_FOLDER / LOCK_FILE


def uses_catalog_file(
    warehouse: Path, local: bool, environ: Mapping[str, str] = os.environ
) -> bool:
    """Whether a session on `warehouse` keeps its catalog in a file: a local session, on a
    warehouse that has its catalog file, or a new one (no Derby metastore) unless
    LOGMART_CATALOG=derby."""
    given = environ.get(CATALOG_VARIABLE, "").strip().lower() or "auto"
    if given not in CATALOGS:
        raise LogmartError(
            f"{CATALOG_VARIABLE}={given} is not a catalog; use one of {', '.join(CATALOGS)}"
        )
    if not local:
        return False
    if catalog_file(warehouse).is_file():
        return True
    return given == "auto" and not (Path(warehouse) / "metastore_db").exists()


def _external_catalog(spark: Any) -> Any:
    return spark._jsparkSession.sharedState().externalCatalog()


def _names(seq: Any) -> list[str]:
    found, items = [], seq.iterator()
    while items.hasNext():
        found.append(items.next())
    return found


def save(spark: Any, warehouse: Path) -> int:
    """Write the session's catalog to the warehouse's catalog file (a new file, then renamed
    over the old one: a reader never sees half of it); returns how many objects it holds."""
    jvm = spark._jvm
    catalog = _external_catalog(spark)
    objects = jvm.java.util.ArrayList()
    databases = _names(catalog.listDatabases())
    for database in databases:
        objects.add(catalog.getDatabase(database))
    for database in databases:
        for name in _names(catalog.listTables(database)):
            table = catalog.getTable(database, name)
            objects.add(table)
            if table.partitionColumnNames().nonEmpty():
                partitions = catalog.listPartitions(database, name, jvm.scala.Option.empty())
                objects.add(jvm.scala.Tuple3(database, name, partitions))
        for name in _names(catalog.listFunctions(database, "*")):
            objects.add(_function_as_strings(jvm, catalog.getFunction(database, name)))
    target = catalog_file(warehouse)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{CATALOG_FILE}.{os.getpid()}")
    stream = jvm.java.io.ObjectOutputStream(
        jvm.java.io.BufferedOutputStream(jvm.java.io.FileOutputStream(str(partial)))
    )
    try:
        try:
            stream.writeObject(objects)
        finally:
            stream.close()
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)  # left only when the write failed
    return objects.size()


def restore(spark: Any, warehouse: Path) -> int:
    """Put the warehouse's saved catalog into the session's (new, empty) catalog; returns how
    many objects it held (0 when there is no file yet). Table folders the catalog does not know
    (left by a command that was killed before it saved) are removed, so that the table can be
    made again."""
    path = catalog_file(warehouse)
    if not path.is_file():  # a new warehouse, or one whose first command was killed
        _remove_unknown_table_folders(warehouse, [])
        return 0
    jvm = spark._jvm
    catalog = _external_catalog(spark)
    try:
        stream = jvm.java.io.ObjectInputStream(
            jvm.java.io.BufferedInputStream(jvm.java.io.FileInputStream(str(path)))
        )
        try:
            objects = stream.readObject()
        finally:
            stream.close()
    except Exception as failed:  # py4j's error: the JVM's message says which class
        raise LogmartError(
            f"cannot read the catalog of warehouse {warehouse} ({path}): "
            f"{str(failed).splitlines()[0][:300]}. It was written by another version of Spark "
            "or is damaged; build your raw folder into a new --warehouse"
        ) from None
    tables = []
    for index in range(objects.size()):
        item = objects.get(index)
        kind = item.getClass().getSimpleName()
        if kind == "CatalogDatabase":
            if not catalog.databaseExists(item.name()):
                catalog.createDatabase(item, True)
        elif kind == "CatalogTable":
            catalog.createTable(item, True)
            tables.append(item)
        elif kind == "ArrayList":  # a function (_function_as_strings)
            database, function = _function_from_strings(jvm, item)
            catalog.createFunction(database, function)
        else:  # (database, table, partitions)
            catalog.createPartitions(item._1(), item._2(), item._3(), True)
    _remove_unknown_table_folders(warehouse, tables)
    return objects.size()


def _function_as_strings(jvm: Any, function: Any) -> Any:
    """A catalog function as [database, name, class, (resource type, uri)...]: a function's
    resource types are Scala objects Java cannot serialize (a SQL function keeps its
    definition in its resources)."""
    parts = jvm.java.util.ArrayList()
    parts.add(function.identifier().database().get())
    parts.add(function.identifier().funcName())
    parts.add(function.className())
    resources = function.resources().iterator()
    while resources.hasNext():
        resource = resources.next()
        parts.add(resource.resourceType().resourceType())
        parts.add(resource.uri())
    return parts


def _function_from_strings(jvm: Any, parts: Any) -> tuple[str, Any]:
    catalog = jvm.org.apache.spark.sql.catalyst.catalog
    database, name, class_name = parts.get(0), parts.get(1), parts.get(2)
    resources = jvm.java.util.ArrayList()
    for index in range(3, parts.size(), 2):
        kind = catalog.FunctionResourceType.fromString(parts.get(index))
        resources.add(catalog.FunctionResource(kind, parts.get(index + 1)))
    identifier = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier(
        name, jvm.scala.Option.apply(database), jvm.scala.Option.empty()
    )
    seq = jvm.scala.jdk.javaapi.CollectionConverters.asScala(resources).toSeq()
    return database, catalog.CatalogFunction(identifier, class_name, seq)


def _remove_unknown_table_folders(warehouse: Path, tables: list[Any]) -> None:
    """Remove the folders under `<warehouse>/tables/<database>.db` that are no table's: what
    a command killed before it saved the catalog wrote (a table made again there would find
    its folder taken). The default database's folder is the tables folder itself, left alone."""
    known = {
        _local_path(table.storage().locationUri().get())
        for table in tables
        if table.storage().locationUri().isDefined()
    }
    root = Path(warehouse) / "tables"
    removed = []
    for database in sorted(root.glob("*.db")) if root.is_dir() else ():
        for entry in sorted(database.iterdir()) if database.is_dir() else ():
            if entry.is_dir() and entry.resolve() not in known and entry.name[:1] not in "._":
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry.relative_to(root).as_posix())
    if removed:
        shown = ", ".join(removed[:5]) + (f" and {len(removed) - 5} more" if removed[5:] else "")
        print(
            f"logmart: removed {len(removed)} table folder(s) under {root} that the warehouse's "
            f"catalog does not know ({shown}): left by a command stopped before it saved the "
            "catalog; the build makes those tables again",
            file=sys.stderr,
        )


def _local_path(uri: Any) -> Path:
    return Path(str(uri.getPath())).resolve()

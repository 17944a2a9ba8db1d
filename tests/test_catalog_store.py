"""A local warehouse's catalog in a file (udfs/catalog_store.py): what a session makes is there
in the next session, a table folder the catalog lost is removed, a damaged file is one clear
error, and which warehouses keep a Derby metastore instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from udfs.catalog_store import catalog_file, restore, uses_catalog_file
from udfs.errors import LogmartError
from udfs.session import spark_session, warehouse_lock_holder


def test_a_new_local_warehouse_keeps_its_catalog_in_a_file(tmp_path: Path) -> None:
    assert uses_catalog_file(tmp_path, local=True, environ={})
    assert not uses_catalog_file(tmp_path, local=False, environ={})  # the cluster's metastore
    assert not uses_catalog_file(tmp_path, local=True, environ={"LOGMART_CATALOG": "derby"})
    (tmp_path / "metastore_db").mkdir()  # a warehouse made with Derby keeps it
    assert not uses_catalog_file(tmp_path, local=True, environ={})
    catalog_file(tmp_path).parent.mkdir()  # one with its catalog in a file keeps that
    catalog_file(tmp_path).write_bytes(b"")
    assert uses_catalog_file(tmp_path, local=True, environ={"LOGMART_CATALOG": "derby"})
    assert not uses_catalog_file(tmp_path, local=False, environ={})
    with pytest.raises(LogmartError, match="LOGMART_CATALOG=hive is not a catalog; use one of"):
        uses_catalog_file(tmp_path, local=True, environ={"LOGMART_CATALOG": "hive"})


def test_the_tables_of_a_first_command_killed_before_it_saved_are_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = tmp_path / "tables" / "raw.db" / "files"
    written.mkdir(parents=True)
    (written / "part-00000.parquet").write_bytes(b"PAR1")
    (tmp_path / "tables" / "raw.db" / "_temporary").mkdir()  # a writer's, not a table
    assert restore(None, tmp_path) == 0  # no catalog file: nothing to read (no JVM asked)
    assert not written.exists() and (tmp_path / "tables" / "raw.db" / "_temporary").is_dir()
    assert "logmart: removed 1 table folder(s)" in capsys.readouterr().err


@pytest.mark.spark
def test_what_a_session_made_is_in_the_next_session(own_warehouse: None, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    with spark_session(warehouse, profile="small") as spark:
        assert spark.conf.get("spark.sql.catalogImplementation") == "in-memory"
        spark.sql("create database marts")
        spark.sql("create table marts.t using parquet as select 1 as a union all select 2")
        spark.sql("create table marts.p (a int, c string) using parquet partitioned by (c)")
        spark.sql("insert into marts.p values (1, 'x'), (2, 'y')")
        spark.sql("create view marts.v as select a * 10 as b from marts.t")
        spark.sql("create function marts.twice(x int) returns int return x * 2")
        spark.sql(
            "create function marts.at_least(n int) returns table "
            "return select a from marts.t where a >= n"
        )
    assert catalog_file(warehouse).is_file()
    assert not (warehouse / "metastore_db").exists()
    assert warehouse_lock_holder(warehouse) is None  # released with the session
    with spark_session(warehouse, profile="small") as spark:
        assert sorted(r.b for r in spark.sql("select b from marts.v").collect()) == [10, 20]
        assert spark.sql("select marts.twice(21)").first()[0] == 42
        assert [r.a for r in spark.sql("select * from marts.at_least(2)").collect()] == [2]
        assert [r.partition for r in spark.sql("show partitions marts.p").collect()] == [
            "c=x",
            "c=y",
        ]
        spark.sql("insert overwrite marts.p partition (c = 'y') values (3)")
        spark.sql("drop view marts.v")
    with spark_session(warehouse, profile="small") as spark:
        rows = spark.sql("select a, c from marts.p order by c").collect()
        assert [(r.a, r.c) for r in rows] == [(1, "x"), (3, "y")]
        assert [t.name for t in spark.catalog.listTables("marts")] == ["p", "t"]


@pytest.mark.spark
def test_a_table_folder_the_catalog_lost_is_removed_so_the_table_can_be_made_again(
    own_warehouse: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warehouse = tmp_path / "warehouse"
    with spark_session(warehouse, profile="small") as spark:
        spark.sql("create database marts")
        spark.sql("create table marts.kept using parquet as select 1 as a")
    # a command killed after it wrote a table and before it saved the catalog
    lost = warehouse / "tables" / "marts.db" / "lost"
    lost.mkdir()
    (lost / "part-00000.parquet").write_bytes(b"PAR1")
    with spark_session(warehouse, profile="small") as spark:
        assert not lost.exists()
        spark.sql("create table marts.lost using parquet as select 2 as a")
        assert spark.table("marts.lost").first()[0] == 2
        assert spark.table("marts.kept").first()[0] == 1
    assert (
        f"logmart: removed 1 table folder(s) under {warehouse / 'tables'} that the warehouse's "
        "catalog does not know (marts.db/lost): left by a command stopped before it saved"
    ) in capsys.readouterr().err


@pytest.mark.spark
def test_a_damaged_catalog_file_is_one_clear_error(own_warehouse: None, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    catalog_file(warehouse).parent.mkdir(parents=True)
    catalog_file(warehouse).write_bytes(b"not a catalog")
    with pytest.raises(LogmartError, match=r"cannot read the catalog of warehouse .* a new --w"):
        with spark_session(warehouse, profile="small"):
            pass
    assert warehouse_lock_holder(warehouse) is None
    catalog_file(warehouse).unlink()
    with spark_session(warehouse, profile="small") as spark:
        assert spark.sql("select 1").first()[0] == 1


@pytest.mark.spark
def test_what_a_failed_command_made_is_kept(own_warehouse: None, tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    with pytest.raises(RuntimeError, match="the command failed"):
        with spark_session(warehouse, profile="small") as spark:
            spark.sql("create table made using parquet as select 7 as a")
            raise RuntimeError("the command failed")
    with spark_session(warehouse, profile="small") as spark:
        assert spark.table("made").first()[0] == 7

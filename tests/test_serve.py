"""BI access: the Spark Thrift server on logmart's session (`logmart serve`), queried over a
real HiveServer2 connection with beeline, the JDBC client shipped in the PySpark wheel."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from udfs import serve

PROMPT = re.compile(r"^\d+: jdbc:hive2://\S+> ")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def beeline(url: str, sql: str) -> list[list[str]]:
    """Rows (header first) of one statement run by beeline over JDBC."""
    result = subprocess.run(
        [str(serve.beeline()), "-u", url, "-n", "logmart", "--silent=true",
         "--outputformat=csv2", "-e", sql],
        capture_output=True, text=True, timeout=180, env=os.environ.copy(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [PROMPT.sub("", line) for line in result.stdout.splitlines()]
    return [line.split(",") for line in lines if line.strip()]


def test_marts_over_a_jdbc_connection(spark, demo):
    server = serve.start(spark, "127.0.0.1", free_port())
    try:
        assert server.url.startswith("jdbc:hive2://127.0.0.1:")
        rows = beeline(
            server.url,
            "select source_system, count(*) as changes from marts.fct_changes "
            "group by source_system order by source_system",
        )
        expected = spark.sql(
            "select source_system, count(*) as changes from marts.fct_changes "
            "group by source_system order by source_system"
        ).collect()
        assert rows == [["source_system", "changes"]] + [
            [r.source_system, str(r.changes)] for r in expected
        ]
        # the SQL table function of fct_row_history is there for BI tools too
        rows = beeline(
            server.url,
            "select count(*) as n from marts.table_as_of('SALES', 'CUSTOMER', '9999-12-31')",
        )
        current = spark.sql(
            "select count(*) as n from marts.fct_row_history "
            "where table_schema = 'SALES' and table_name = 'CUSTOMER' and is_current"
        ).first()
        assert rows == [["n"], [str(current.n)]]
    finally:
        server.stop()
    assert not serve._listening("127.0.0.1", server.port)
    assert spark.sql("select 1 as one").first().one == 1  # the session goes on
    # the server's Hive sessions boot a metastore of their own, in memory: none in the
    # warehouse, whose catalog stays its file (udfs/catalog_store.py)
    assert not (demo.warehouse / "metastore_db").exists()


@pytest.mark.spark
def test_serve_command_listens_until_interrupted(tmp_path: Path):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "udfs.cli", "serve", "--port", str(port),
         "--warehouse", str(tmp_path / "warehouse")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not serve._listening("127.0.0.1", port):
            assert process.poll() is None, process.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "logmart serve did not start listening"
            time.sleep(0.5)
        rows = beeline(f"jdbc:hive2://127.0.0.1:{port}/default", "show databases")
        assert ["default"] in rows
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-2000:]
    assert f"jdbc:hive2://127.0.0.1:{port}/default" in err

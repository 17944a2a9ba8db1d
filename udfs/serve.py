"""BI access: the Spark Thrift server (HiveServer2 protocol, JDBC/ODBC) on logmart's session.

`logmart serve` starts it inside the logmart process, on the session that already holds the
warehouse (one process at a time uses a warehouse, so a separate `start-thriftserver.sh` could
not open it while logmart runs, and vice versa), with logmart's SQL functions registered. BI
tools connect with a Hive JDBC driver (`jdbc:hive2://HOST:PORT/default`) or a Spark ODBC
driver; `beeline` from the PySpark wheel is one such client.

The server is built here rather than with `HiveThriftServer2.startWithSparkSession`, whose
HiveConf is the one the session made at start-up: it would listen on every interface on port
10000 whatever is set later. This one listens on the host and port asked for (loopback by
default).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from udfs.errors import LogmartError

THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


@dataclass
class ThriftServer:
    """A running Thrift server; `url` is what a JDBC client connects to."""

    server: Any
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"jdbc:hive2://{self.host}:{self.port}/default"

    def stop(self) -> None:
        self.server.stop()


def start(
    spark: Any, host: str = "127.0.0.1", port: int = 10000, wait: float = 30.0
) -> ThriftServer:
    """Start the Thrift server on `spark`'s session, listening on host:port; returns once it
    accepts connections."""
    if _listening(host, port):
        raise LogmartError(f"port {port} on {host} is already in use; choose another --port")
    jvm = spark._jvm
    conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    conf.set("hive.server2.thrift.port", str(port))
    conf.set("hive.server2.thrift.bind.host", host)
    conf.set("hive.server2.transport.mode", "binary")
    # the server's Hive sessions boot a metastore: the session's (udfs.session.session_conf:
    # the warehouse's Derby, or one in memory when the catalog is a file), not Derby's default
    # (a metastore_db relative to derby.system.home, the warehouse)
    url = spark.sparkContext._jsc.hadoopConfiguration().get("javax.jdo.option.ConnectionURL")
    if url:
        conf.set("javax.jdo.option.ConnectionURL", url)
    server = getattr(jvm, THRIFT_SERVER)(spark._jsparkSession)
    server.init(conf)
    server.start()
    # What startWithSparkSession does after start: the listener that statements report to.
    module = jvm.java.lang.Class.forName(THRIFT_SERVER + "$")
    (create,) = [m for m in module.getDeclaredMethods() if m.getName() == "createListenerAndUI"]
    create.setAccessible(True)
    arguments = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 2)
    arguments[0] = server
    arguments[1] = spark.sparkContext._jsc.sc()
    create.invoke(module.getField("MODULE$").get(None), arguments)
    deadline = time.monotonic() + wait
    while not _listening(host, port):
        if time.monotonic() > deadline:
            server.stop()
            raise LogmartError(f"the Thrift server did not start listening on {host}:{port}")
        time.sleep(0.2)
    return ThriftServer(server, host, port)


def _listening(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def beeline() -> Path:
    """The beeline client shipped in the PySpark wheel."""
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "beeline"

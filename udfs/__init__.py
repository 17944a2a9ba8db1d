"""logmart: an SQL-first lakehouse for database change logs.

Python here does what SQL cannot: framing and decoding binary log records (registered as Spark
UDFs and data sources), the embedded Spark session, running dbt in-process, and the CLI.
"""

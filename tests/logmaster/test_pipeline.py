"""The Log Master pipeline end to end on generated extracts: real Spark, real dbt build."""

import json

import pytest

from logmart_generators.logmaster import EXTRACT
from tests.dbt_sql import compiled
from tests.replay import as_multiset, replay, truth_tables

pytestmark = pytest.mark.spark

# The demo's extract, a log stream of its own (the test run's warehouse may hold other
# streams of Log Master: tests/conftest.py `demo`).
DEMO = f"capture = '{EXTRACT}'"


def rows(spark, sql):
    return [row.asDict(recursive=True) for row in spark.sql(sql).collect()]


@pytest.fixture(scope="module")
def row_images(spark, demo):
    """int_logmaster_row_images_decoded's query: an ephemeral model, with no table to read."""
    from udfs.spark_udfs import register_functions

    register_functions(spark)  # the query's UDF (the build may have run in another session)
    return compiled(demo.warehouse, "select * from {{ ref('int_logmaster_row_images_decoded') }}")


def test_replaying_committed_changes_reproduces_the_generated_tables(spark, demo):
    expected = truth_tables(demo.raw, "db2zos")
    replayed = replay(spark, "db2zos", log_stream=EXTRACT)
    for name, table_rows in expected.items():
        assert as_multiset(replayed.get(name, [])) == as_multiset(table_rows), name
    assert set(replayed) <= set(expected)


def test_every_record_is_decoded_or_quarantined_and_clean_input_quarantines_nothing(spark, demo):
    files = rows(
        spark,
        "select * from marts.reconciliation "
        f"where source_system = 'db2zos' and {DEMO} order by source_file",
    )
    assert len(files) == 4 and all(f["is_reconciled"] for f in files)
    assert sum(f["records_read"] for f in files) == sum(f["records_decoded"] for f in files)
    assert (
        rows(spark, f"select * from marts.quarantine where source_system = 'db2zos' and {DEMO}")
        == []
    )


def test_dispositions_and_transactions(spark, demo):
    dispositions = {
        r["disposition"]
        for r in rows(
            spark,
            "select distinct disposition from marts.fct_changes where source_system = 'db2zos'",
        )
    }
    assert {"committed", "aborted", "savepoint_rollback", "reversed", "in_flight"} <= dispositions
    transactions = rows(
        spark,
        "select disposition, count(*) as n, min(commit_position) as first_commit "
        "from marts.fct_transactions where source_system = 'db2zos' group by disposition",
    )
    by_disposition = {t["disposition"]: t for t in transactions}
    assert by_disposition["in_flight"]["first_commit"] is None
    assert by_disposition["committed"]["first_commit"] is not None
    assert set(by_disposition) == {"committed", "aborted", "in_flight"}


def test_commit_order_and_change_sequence(spark, demo):
    changes = rows(
        spark,
        "select transaction_id, disposition, commit_position, change_seq, log_position "
        f"from marts.fct_changes where source_system = 'db2zos' and {DEMO} "
        "order by commit_position, change_seq",
    )
    committed = [c["commit_position"] for c in changes if c["disposition"] == "committed"]
    assert committed == sorted(committed) and all(len(p) == 20 for p in committed)
    by_transaction: dict = {}
    for change in changes:
        by_transaction.setdefault(change["transaction_id"], []).append(change)
    for group in by_transaction.values():
        # change_seq numbers every change of the transaction, rolled back ones included
        assert [c["change_seq"] for c in group] == list(range(1, len(group) + 1))
        assert [c["log_position"] for c in group] == sorted(c["log_position"] for c in group)


def test_long_names_are_resolved_through_dtbi(spark, demo):
    names = {
        (r["table_schema"], r["table_name"])
        for r in rows(
            spark,
            "select distinct table_schema, table_name from marts.fct_changes "
            f"where source_system = 'db2zos' and {DEMO}",
        )
    }
    assert ("INVENTORY_CONTROL", "WAREHOUSE_STOCK_LEVEL_HISTORY") in names
    assert not any(len(schema) == 8 and schema.startswith("INVENTOR") for schema, _ in names)


def test_segmented_changes_are_reassembled(spark, demo):
    segmented = rows(
        spark,
        "select size(raw_records) as segments, data is not null as has_data "
        f"from intermediate.int_logmaster_changes_reassembled where totalsegs > 1 and {DEMO}",
    )
    assert segmented and all(s["segments"] > 1 and s["has_data"] for s in segmented)


def test_staging_has_every_control_record_type_and_counts_unknown_ones(spark, demo):
    counts = {
        r["record_type"]: r["n"]
        for r in rows(
            spark,
            "select record_type, count(*) as n from staging.stg_logmaster__control_records "
            f"where {DEMO} group by record_type",
        )
    }
    assert {"XTYP", "XHDF", "DLDS", "DLGE", "DTBI", "DLCI", "DICL"} <= set(counts)
    assert counts["XHDF"] == 50
    unknown = rows(
        spark,
        "select count(*) as n from staging.stg_logmaster__control_records "
        f"where {DEMO} and not is_known_type",
    )
    assert unknown[0]["n"] == counts["DICL"]


def test_catalog_events_are_kept_for_the_ddl_mart(spark, demo):
    kinds = {
        r["event_kind"]
        for r in rows(
            spark,
            "select distinct event_kind from intermediate.int_logmaster_catalog_events_extracted",
        )
    }
    assert kinds == {"catalog_object", "exchange", "db2_command", "status_change"}


def test_values_are_rendered_as_the_specs_readme_says(spark, demo):
    images = rows(
        spark,
        "select after_image from marts.fct_changes "
        "where source_system = 'db2zos' and after_image is not null",
    )
    values = [v for image in images for v in image["after_image"].values() if v is not None]
    assert any(v.count("-") == 2 and len(v) == 10 for v in values)  # dates
    assert not any(v.startswith(("X'", "x'")) for v in values)


def test_unit_test_inputs_without_a_table_have_the_model_s_columns(spark, demo, row_images):
    # The row images are ephemeral, and the settlement's own rows (`this`) have no table yet
    # when its unit tests run in a new warehouse: their rows are typed by the project's list
    # (macros/unit_test_fixtures.sql), which must be each model's output, in order.
    listed = json.loads(compiled(demo.warehouse, "{{ tojson(fixture_columns()) }}"))
    outputs = {
        "int_logmaster_row_images_decoded": spark.sql(
            f"select * from (\n{row_images}\n) as row_images"
        ),
        "int_logmaster_changes_standardized": spark.table(
            "intermediate.int_logmaster_changes_standardized"
        ),
    }
    assert set(listed) == set(outputs)
    for model, frame in outputs.items():
        columns = [(field.name, field.dataType.simpleString()) for field in frame.schema.fields]
        assert list(listed[model].items()) == columns, model


def test_one_segment_records_take_the_images_the_data_source_decoded(spark, demo, row_images):
    # The data source's version choice and layout digest agree with the SQL model's for every
    # one-segment row change of a table with a layout: none of them needs the UDF (a mismatch
    # would only cost time, so this is the test that the fast path is taken).
    counts = {
        (row.segmented, row.images_decoded_by): row.n
        for row in spark.sql(
            f"""
            select
                coalesce(totalsegs, 0) > 1 as segmented, images_decoded_by, count(*) as n
            from (
                {row_images}
            ) as row_images
            where layout_text is not null and split(layout_text, '[|]')[4] not like 'N%'
                -- XMLINCLUDED N with an XML column: left to the UDF too (logmaster/batch_rows.py)
                and not (split(layout_text, '[|]')[4] like '_N'
                         and split(layout_text, '[|]')[5] rlike '(^|;)[0-9]+,XML,')
            group by all
            """
        ).collect()
    }
    assert counts.get((False, "data_source"), 0) > 100
    assert counts.get((False, "udf"), 0) == 0, counts
    assert counts.get((True, "udf"), 0) > 0 and counts.get((True, "data_source"), 0) == 0
    # a table whose LOBs are not in the log (layout text LOBs field N): only the UDF says
    # which values are missing, so the data source leaves all its changes to it
    excluded = {
        row.images_decoded_by: row.n
        for row in spark.sql(
            "select images_decoded_by, count(*) as n "
            f"from (\n{row_images}\n) as row_images "
            "where split(layout_text, '[|]')[4] like 'N%' group by all"
        ).collect()
    }
    assert excluded.get("udf", 0) > 0 and excluded.get("data_source", 0) == 0, excluded

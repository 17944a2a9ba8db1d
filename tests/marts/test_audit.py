"""Audit and summary marts (models/marts/audit) and `logmart report` in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter

import pytest

from udfs import cli
from udfs.backout import latest_transactions_sql

pytestmark = pytest.mark.spark

# The generators' summaries name their transaction outcomes their own way.
TRUTH_OUTCOMES = {
    "db2zos": ("transactions", {"aborted": "A", "in_flight": "in_flight"}),
    "db2luw": ("transactions", {"aborted": "aborted", "in_flight": "in_flight"}),
    "soliddb": ("transactions_by_disposition", {"aborted": "aborted", "in_flight": "in_flight"}),
}


def one(spark, sql):
    return spark.sql(sql).first()


def count(spark, sql: str) -> int:
    return spark.sql(sql).first()[0]


def test_summary_marts_add_up_to_the_facts(spark, demo):
    for source in ("db2zos", "db2luw", "soliddb"):
        where = f"where source_system = '{source}'"
        changes = count(spark, f"select count(*) from marts.fct_changes {where}")
        hourly = count(
            spark, f"select coalesce(sum(change_count), 0) from marts.agg_changes_by_hour {where}"
        )
        assert hourly == changes, source
        transactions = count(spark, f"select count(*) from marts.fct_transactions {where}")
        for mart in ("agg_transaction_profile", "agg_transaction_outcomes"):
            total = count(
                spark, f"select coalesce(sum(transaction_count), 0) from marts.{mart} {where}"
            )
            assert total == transactions, (source, mart)


@pytest.mark.parametrize("source_system", ["db2zos", "db2luw", "soliddb"])
def test_open_and_aborted_transactions_are_the_generators(spark, demo, source_system):
    from tests.marts.oracle import generator_capture

    summary_path = demo.raw / "truth" / source_system / "summary.json"
    if not summary_path.exists():
        pytest.skip(f"no {source_system} generator")
    key, names = TRUTH_OUTCOMES[source_system]
    truth = json.loads(summary_path.read_text())[key]
    capture = generator_capture(demo.raw, source_system)
    where = f"source_system = '{source_system}' and capture = '{capture}'"
    outcomes = one(
        spark,
        "select sum(aborted_count) as aborted, sum(in_flight_count) as in_flight "
        f"from marts.agg_transaction_outcomes where {where}",
    )
    assert outcomes.aborted == truth.get(names["aborted"], 0)
    assert outcomes.in_flight == truth.get(names["in_flight"], 0)
    open_now = one(spark, f"select count(*) as n from marts.rpt_open_transactions where {where}")
    assert open_now.n == outcomes.in_flight


def test_top_changed_rows_rank_by_versions(spark, demo):
    rows = spark.sql(
        "select source_system, log_stream, table_schema, table_name, row_key, version_count, "
        "rank_in_table from marts.rpt_top_changed_rows"
    ).collect()
    assert rows
    # every row's versions counted in one query (a query per row took 16-30 s)
    versions = {
        (r.source_system, r.log_stream, r.table_name, r.row_key): r.n
        for r in spark.sql(
            "select source_system, log_stream, table_name, row_key, count(*) as n "
            "from marts.fct_row_history where valid_from_change_id is not null "
            "group by source_system, log_stream, table_name, row_key"
        ).collect()
    }
    most: dict[tuple, int] = {}
    for (system, stream, table, _), n in versions.items():
        most[(system, stream, table)] = max(n, most.get((system, stream, table), 0))
    for row in rows:
        assert row.row_key is not None
        table = (row.source_system, row.log_stream, row.table_name)
        assert versions.get((*table, row.row_key), 0) == row.version_count
        if row.rank_in_table == 1:
            assert row.version_count == most[table]


def test_ddl_timeline_lists_every_schema_change_in_log_order(spark, demo):
    changes = count(spark, "select count(*) from marts.fct_schema_changes")
    assert changes > 0
    assert count(spark, "select count(*) from marts.rpt_ddl_timeline") == changes
    rows = spark.sql(
        "select source_system, log_stream, timeline_seq, log_position, happened_ts "
        "from marts.rpt_ddl_timeline order by source_system, log_stream, timeline_seq"
    ).collect()
    last: dict[tuple, tuple] = {}
    for r in rows:
        seq, position = last.get((r.source_system, r.log_stream), (0, ""))
        assert r.timeline_seq == seq + 1 and r.log_position >= position
        last[(r.source_system, r.log_stream)] = (r.timeline_seq, r.log_position)
    timed = {r.source_system for r in rows if r.happened_ts is not None}
    assert timed == {"db2zos", "db2luw"}  # solidDB logs no times


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def test_report_is_one_offline_page_whose_charts_draw(spark, demo, tmp_path, capsys):
    out = tmp_path / "report.html"
    code = cli.main(["report", "--out", str(out), "--warehouse", str(demo.warehouse)])
    assert code == 0 and str(out) in capsys.readouterr().out
    page = out.read_text("utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched
    charts = page.count('<svg class="chart"')
    assert charts == 7
    assert "Schema changes (DDL) per hour, by kind" in page
    timeline = page.split("DDL timeline", 1)[1].split("</table>", 1)[0]
    listed = count(spark, "select least(count(*), 100) from marts.rpt_ddl_timeline")
    assert listed > 0 and timeline.count("<tr>") == listed + 1  # + the header row
    backout = page.split("Backing out the latest transactions", 1)[1].split("</table>", 1)[0]
    latest = count(spark, f"select count(*) from ({latest_transactions_sql()})")
    assert latest > 0 and backout.count("<tr>") == latest + 1
    assert "refused: later work in" in backout and "no later work on its rows" in backout
    browser = chromium()
    if browser is None:
        pytest.skip("no Chromium here (apt-get install chromium) to render the report")
    dom = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", out.as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    assert f'data-charts-drawn="{charts}"' in dom
    drawn = [int(n) for n in re.findall(r'<svg class="chart"[^>]*data-drawn="(\d+)"', dom)]
    assert len(drawn) == charts and all(n > 0 for n in drawn)


def test_report_says_which_latest_transactions_undo_would_refuse(spark, demo):
    """The report's backout table agrees with `logmart sql undo --transaction T`'s own check."""
    from udfs.backout import LATEST_TRANSACTIONS, conflicts
    from udfs.change_sql import Selection

    listed = spark.sql(latest_transactions_sql()).collect()
    per_stream = Counter((r.source_system, r.log_stream) for r in listed)
    assert per_stream and max(per_stream.values()) <= LATEST_TRANSACTIONS
    refused = [r for r in listed if r.later_transactions]
    alone = [r for r in listed if not r.later_transactions]
    assert refused and alone  # the demo's logs have both
    for r in refused[:3] + alone[:2]:
        selection = Selection(
            transaction=r.transaction_id, source_system=r.source_system, log_stream=r.log_stream
        )
        found = {c.later_transaction_id for c in conflicts(spark, selection)}
        assert found == set(r.later_transactions), r.transaction_id

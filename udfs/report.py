"""`logmart report`: one self-contained HTML page of charts from the audit marts.

Everything is inline (SVG charts drawn here, CSS, one small script), so the file opens
offline and can be mailed. The script only checks, in the browser, that every chart drew
marks (`data-drawn` on each chart, `data-charts-drawn` on the body), which the tests read
from headless Chromium.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OPERATION_COLORS = {
    "insert": "#2e8b57",
    "update": "#1f77b4",
    "delete": "#d62728",
    "truncate": "#7f7f7f",
}
DISPOSITION_COLORS = {"committed": "#2e8b57", "aborted": "#d62728", "in_flight": "#ff9f1c"}
MAX_HOURS = 72
MAX_BARS = 20
MAX_TIMELINE_ROWS = 100
# Schema change kinds get colours in a fixed order (kinds not listed share the last one).
KIND_PALETTE = (
    ("create_table", "#2e8b57"), ("initialize_table", "#8fd19e"), ("drop_table", "#d62728"),
    ("add_column", "#1f77b4"), ("drop_column", "#ff7f0e"), ("alter_column", "#17becf"),
    ("rename_table", "#9467bd"), ("rename_column", "#c5b0d5"), ("alter_table", "#aec7e8"),
    ("truncate", "#7f7f7f"), ("create_index", "#bcbd22"), ("drop_index", "#8c564b"),
    ("exchange", "#e377c2"), ("db2_command", "#393b79"), ("status_change", "#637939"),
)  # fmt: skip
OTHER_KIND_COLOR = "#ff9f1c"


@dataclass
class Chart:
    """A stacked bar chart: one bar per category, one stack segment per series."""

    title: str
    categories: list[str]
    series: dict[str, list[float]]
    colors: dict[str, str]
    note: str = ""
    horizontal: bool = False


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def svg(chart: Chart, width: int = 760) -> str:
    """The chart as inline SVG; every bar segment is a `rect.mark` with a title tooltip."""
    n = max(len(chart.categories), 1)
    totals = [sum(values[i] for values in chart.series.values()) for i in range(n)] or [0]
    top = max(max(totals), 1)
    legend = "".join(
        f'<span class="key"><i style="background:{chart.colors.get(name, "#999")}"></i>'
        f"{_esc(name)}</span>"
        for name in chart.series
    )
    parts = []
    if chart.horizontal:
        label_width, bar_height = 220, 18
        height = 20 + n * (bar_height + 6)
        scale = (width - label_width - 60) / top
        for i, category in enumerate(chart.categories):
            y = 10 + i * (bar_height + 6)
            label = category if len(category) <= 34 else f"{category[:12]}…{category[-21:]}"
            parts.append(
                f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">'
                f"<title>{_esc(category)}</title>{_esc(label)}</text>"
            )
            x = label_width
            for name, values in chart.series.items():
                w = values[i] * scale
                if values[i]:
                    parts.append(
                        f'<rect class="mark" x="{x:.1f}" y="{y}" width="{max(w, 1):.1f}" '
                        f'height="{bar_height}" fill="{chart.colors.get(name, "#999")}">'
                        f"<title>{_esc(category)} {_esc(name)}: {values[i]:g}</title></rect>"
                    )
                x += w
            parts.append(f'<text x="{x + 6:.1f}" y="{y + 13}">{totals[i]:g}</text>')
    else:
        height, plot_height, left = 260, 200, 50
        step = (width - left - 10) / n
        bar_width = max(step * 0.8, 1)
        parts.append(f'<text x="{left - 6}" y="16" text-anchor="end">{top:g}</text>')
        parts.append(
            f'<line x1="{left}" y1="{10 + plot_height}" x2="{width - 10}" '
            f'y2="{10 + plot_height}" stroke="#888"/>'
        )
        for i, category in enumerate(chart.categories):
            x = left + i * step + (step - bar_width) / 2
            y = 10 + plot_height
            for name, values in chart.series.items():
                h = values[i] / top * plot_height
                if values[i]:
                    y -= h
                    parts.append(
                        f'<rect class="mark" x="{x:.1f}" y="{y:.1f}" width="{bar_width:.1f}" '
                        f'height="{max(h, 1):.1f}" fill="{chart.colors.get(name, "#999")}">'
                        f"<title>{_esc(category)} {_esc(name)}: {values[i]:g}</title></rect>"
                    )
            if n <= 24 or i % max(n // 12, 1) == 0:
                parts.append(
                    f'<text x="{x + bar_width / 2:.1f}" y="{plot_height + 26}" '
                    f'text-anchor="middle" class="tick">{_esc(category)}</text>'
                )
    return (
        f'<figure><figcaption>{_esc(chart.title)}</figcaption><div class="legend">{legend}'
        f'</div><svg class="chart" role="img" aria-label="{_esc(chart.title)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        + "".join(parts)
        + f"</svg>{f'<p class=note>{_esc(chart.note)}</p>' if chart.note else ''}</figure>"
    )


def table(title: str, columns: Sequence[str], rows: list[Sequence[Any]], empty: str) -> str:
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_esc(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    content = (
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        if rows
        else f"<p class=note>{_esc(empty)}</p>"
    )
    return f"<section><h2>{_esc(title)}</h2>{content}</section>"


def _stack(
    rows: list[Any], category: str, series: str, value: str, order: Sequence[str] = ()
) -> tuple[list[str], dict[str, list[float]]]:
    """Rows (category, series, value) as categories in first-seen order and one value list
    per series (series in `order`, then any others)."""
    categories: list[str] = []
    cells: dict[tuple[str, str], float] = defaultdict(float)
    names = list(order)
    for row in rows:
        c, s = str(row[category]), str(row[series])
        if c not in categories:
            categories.append(c)
        if s not in names:
            names.append(s)
        cells[(c, s)] += float(row[value] or 0)
    present = [s for s in names if any(cells[(c, s)] for c in categories)]
    return categories, {s: [cells[(c, s)] for c in categories] for s in present}


def charts(spark: Any) -> list[Chart]:
    """The report's charts, from the audit marts."""

    def q(sql: str) -> list[Any]:
        return [r.asDict() for r in spark.sql(sql).collect()]

    out = []
    hours = q(
        "select date_format(change_hour, 'yyyy-MM-dd HH:00') as hour, operation, "
        "sum(change_count) as n from marts.agg_changes_by_hour where change_hour is not null "
        "group by 1, 2 order by 1"
    )
    kept = sorted({r["hour"] for r in hours})[-MAX_HOURS:]
    categories, series = _stack(
        [r for r in hours if r["hour"] in kept], "hour", "operation", "n", OPERATION_COLORS
    )
    untimed = q(
        "select coalesce(sum(change_count), 0) as n from marts.agg_changes_by_hour "
        "where change_hour is null"
    )[0]["n"]
    out.append(
        Chart(
            "Changes per hour, by operation",
            categories,
            series,
            OPERATION_COLORS,
            f"{untimed} changes have no time in their log (solidDB) and are not shown here."
            if untimed
            else "",
        )
    )
    tables = q(
        "select concat(source_system, ' ', concat_ws('.', table_schema, table_name)) as t, "
        "operation, sum(change_count) as n, sum(sum(change_count)) over "
        "(partition by source_system, table_schema, table_name) as total "
        "from marts.agg_changes_by_hour group by source_system, table_schema, table_name, "
        "operation order by total desc, t"
    )
    top_tables = list(dict.fromkeys(r["t"] for r in tables))[:MAX_BARS]
    categories, series = _stack(
        [r for r in tables if r["t"] in top_tables], "t", "operation", "n", OPERATION_COLORS
    )
    out.append(
        Chart("Changes per table, by operation", categories, series, OPERATION_COLORS, "", True)
    )
    users = q(
        "select coalesce(authid, '(not logged)') as u, operation, sum(change_count) as n, "
        "sum(sum(change_count)) over (partition by coalesce(authid, '(not logged)')) as total "
        "from marts.agg_changes_by_hour group by 1, 2 order by total desc, u"
    )
    top_users = list(dict.fromkeys(r["u"] for r in users))[:MAX_BARS]
    categories, series = _stack(
        [r for r in users if r["u"] in top_users], "u", "operation", "n", OPERATION_COLORS
    )
    out.append(
        Chart(
            "Changes per user (AUTHID), by operation",
            categories,
            series,
            OPERATION_COLORS,
            "",
            True,
        )
    )
    sizes = q(
        "select size_bucket, size_bucket_order, disposition, sum(transaction_count) as n "
        "from marts.agg_transaction_profile group by 1, 2, 3 order by size_bucket_order"
    )
    categories, series = _stack(sizes, "size_bucket", "disposition", "n", DISPOSITION_COLORS)
    out.append(
        Chart("Transactions by size (changes), by outcome", categories, series, DISPOSITION_COLORS)
    )
    durations = q(
        "select duration_bucket, duration_bucket_order, disposition, "
        "sum(transaction_count) as n from marts.agg_transaction_profile "
        "group by 1, 2, 3 order by duration_bucket_order"
    )
    categories, series = _stack(
        durations, "duration_bucket", "disposition", "n", DISPOSITION_COLORS
    )
    out.append(
        Chart(
            "Transactions by duration (begin to commit), by outcome",
            categories,
            series,
            DISPOSITION_COLORS,
        )
    )
    outcomes = q(
        "select source_system, sum(committed_count) as committed, "
        "sum(aborted_count) as aborted, sum(in_flight_count) as in_flight "
        "from marts.agg_transaction_outcomes group by source_system order by source_system"
    )
    rows = []
    for r in outcomes:
        decided = r["committed"] + r["aborted"]
        rate = f"{r['aborted'] / decided:.1%}" if decided else "n/a"
        for name in DISPOSITION_COLORS:
            rows.append({"s": f"{r['source_system']} (rollback {rate})", "d": name, "n": r[name]})
    categories, series = _stack(rows, "s", "d", "n", DISPOSITION_COLORS)
    out.append(
        Chart(
            "Transaction outcomes and rollback rate, by source",
            categories,
            series,
            DISPOSITION_COLORS,
            "rollback rate = aborted / (committed + aborted)",
            True,
        )
    )
    out.append(ddl_chart(q))
    return out


def ddl_chart(q: Callable[[str], list[dict]]) -> Chart:
    """Schema changes per hour, one stack segment per change kind (marts.rpt_ddl_timeline)."""
    rows = q(
        "select date_format(happened_hour, 'yyyy-MM-dd HH:00') as hour, change_kind, "
        "count(*) as n from marts.rpt_ddl_timeline where happened_hour is not null "
        "group by 1, 2 order by 1"
    )
    kept = sorted({r["hour"] for r in rows})[-MAX_HOURS:]
    palette = dict(KIND_PALETTE)
    categories, series = _stack(
        [r for r in rows if r["hour"] in kept], "hour", "change_kind", "n", list(palette)
    )
    timeless = "select count(*) as n from marts.rpt_ddl_timeline where happened_hour is null"
    untimed = q(timeless)[0]["n"]
    return Chart(
        "Schema changes (DDL) per hour, by kind",
        categories,
        series,
        {kind: palette.get(kind, OTHER_KIND_COLOR) for kind in series},
        f"{untimed} schema changes have no time in their log (solidDB); the timeline below "
        "lists them in log order."
        if untimed
        else "",
    )


def ddl_rows(spark: Any) -> list[list[Any]]:
    """The first rows of every log stream's DDL timeline (marts.rpt_ddl_timeline)."""
    return [
        [
            r.source_system,
            r.log_stream,
            r.capture,
            r.timeline_seq,
            r.happened_ts,
            r.table_full_name or r.object_name,
            r.change_kind,
            "committed" if r.took_effect else r.disposition,
            r.statement_text if len(r.statement_text) <= 120 else r.statement_text[:119] + "…",
        ]
        for r in spark.sql(
            "select * from marts.rpt_ddl_timeline "
            "order by source_system, log_stream, timeline_seq "
            f"limit {MAX_TIMELINE_ROWS}"
        ).collect()
    ]


def backout_rows(spark: Any) -> list[list[Any]]:
    """Each log stream's latest committed transactions, and whether `logmart sql undo` would
    back one out on its own (udfs/backout.py: later work on the same rows or tables)."""
    from udfs.backout import latest_transactions_sql

    listed = []
    for r in spark.sql(latest_transactions_sql()).collect():
        later = list(r.later_transactions)
        named = ", ".join(later[:3]) + (f" and {len(later) - 3} more" if len(later) > 3 else "")
        listed.append(
            [
                r.source_system,
                r.log_stream,
                r.transaction_id,
                r.commit_ts,
                r.change_count,
                ", ".join(r.tables_touched or []),
                f"refused: later work in {named}" if later else "no later work on its rows",
            ]
        )
    return listed


def build(spark: Any) -> str:
    """The report page."""
    summary = spark.sql(
        "select count(distinct source_system) as sources, count(distinct source_system, "
        "capture) as captures, count(*) as changes, "
        "count(distinct source_system, log_stream, transaction_id) as transactions "
        "from marts.fct_changes"
    ).first()
    quarantined = spark.sql("select count(*) as n from marts.quarantine").first().n
    open_rows = [
        [
            r.source_system,
            r.log_stream,
            r.transaction_id,
            r.begin_ts,
            r.open_seconds,
            r.change_count,
            ", ".join(r.tables_touched or []),
            r.authid,
        ]
        for r in spark.sql(
            "select * from marts.rpt_open_transactions "
            "order by open_seconds desc nulls last, source_system, log_stream, transaction_id "
            "limit 50"
        ).collect()
    ]
    top_rows = [
        [
            r.source_system,
            r.log_stream,
            f"{r.table_schema}.{r.table_name}",
            r.row_key,
            r.version_count,
            r.last_ts,
        ]
        for r in spark.sql(
            "select * from marts.rpt_top_changed_rows where rank_in_table <= 3 "
            "order by version_count desc, source_system, table_schema, table_name, row_key "
            "limit 50"
        ).collect()
    ]
    figures = "".join(svg(chart) for chart in charts(spark))
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return PAGE.format(
        generated=_esc(generated),
        sources=summary.sources,
        captures=summary.captures,
        changes=summary.changes,
        transactions=summary.transactions,
        quarantined=quarantined,
        figures=figures,
        open_table=table(
            "Transactions open at the end of each log stream",
            [
                "source",
                "stream",
                "transaction",
                "began",
                "open (s)",
                "changes",
                "tables",
                "authid",
            ],
            open_rows,
            "No transaction was open at the end of a log stream.",
        ),
        ddl_table=table(
            "DDL timeline (schema changes in log order, per log stream)",
            [
                "source",
                "stream",
                "capture",
                "#",
                "when",
                "table or object",
                "kind",
                "outcome",
                "statement",
            ],
            ddl_rows(spark),
            "No schema changes in the logs.",
        ),
        backout_table=table(
            "Backing out the latest transactions (UNDO of one transaction alone: "
            "logmart sql undo --transaction T)",
            ["source", "stream", "transaction", "committed", "changes", "tables", "undo"],
            backout_rows(spark),
            "No committed row changes.",
        ),
        top_table=table(
            "Most changed rows (top 3 per table)",
            ["source", "stream", "table", "row key", "versions", "last change"],
            top_rows,
            "No committed row changes.",
        ),
    )


def write(spark: Any, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(build(spark), encoding="utf-8")
    return out


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>logmart report</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }}
h1 {{ margin: 0 0 4px; }} h2 {{ font-size: 16px; margin: 28px 0 8px; }}
.summary span {{ display: inline-block; margin-right: 18px; }}
.summary b {{ font-size: 20px; }}
figure {{ margin: 24px 0; }} figcaption {{ font-weight: 600; margin-bottom: 4px; }}
svg text {{ font-size: 11px; fill: #333; }} svg .tick {{ font-size: 9px; }}
.legend .key {{ margin-right: 12px; font-size: 12px; }}
.legend i {{ display: inline-block; width: 10px; height: 10px; margin-right: 4px; }}
.note {{ color: #666; font-size: 12px; }}
table {{ border-collapse: collapse; font-size: 12px; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; }}
</style></head>
<body data-charts-drawn="0">
<h1>logmart report</h1>
<p class="note">Generated {generated} from the marts (agg_changes_by_hour,
agg_transaction_profile, agg_transaction_outcomes, rpt_open_transactions,
rpt_top_changed_rows, rpt_ddl_timeline).</p>
<p class="summary"><span><b>{sources}</b> sources</span><span><b>{captures}</b> captures</span>
<span><b>{changes}</b> changes</span><span><b>{transactions}</b> transactions</span>
<span><b>{quarantined}</b> records quarantined</span></p>
{figures}
{open_table}
{ddl_table}
{backout_table}
{top_table}
<script>
// Checks that each chart drew: its marks have a size once laid out (read by the tests).
var drawn = 0;
document.querySelectorAll("svg.chart").forEach(function (chart) {{
  var marks = Array.prototype.filter.call(chart.querySelectorAll(".mark"), function (m) {{
    var box = m.getBBox();
    return box.width > 0 && box.height > 0;
  }});
  chart.setAttribute("data-drawn", marks.length);
  if (marks.length > 0) drawn += 1;
}});
document.body.setAttribute("data-charts-drawn", drawn);
</script>
</body></html>
"""

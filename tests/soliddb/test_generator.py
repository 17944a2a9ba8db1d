"""The generator as an oracle: its truth vs the decoder's reading of its files, in every format."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from logmart_generators.soliddb import generate, generate_benchmark
from tests.soliddb.transactions import assemble, replay
from udfs.soliddb.catalog import LayoutHistory, read_catalog
from udfs.soliddb.layouts import TYPE_ENCODINGS, DdlLogRecId
from udfs.soliddb.readers import find_exports, read_sys_log
from udfs.soliddb.records import NULL_NOT_IN_RECORD, decode_capture

FORMATS = ("parquet", "csv", "jsonl")
CHANGE_KEYS = (
    "transaction_id",
    "disposition",
    "commit_position",
    "change_seq",
    "operation",
    "relid",
    "table_schema",
    "table_name",
    "before_image",
    "after_image",
)
END = b"\xff" * 20


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("gen")
    return out, generate(out, transactions=120, seed=7, formats=FORMATS)


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def truth(out: Path, name: str):
    path = out / "truth" / "soliddb" / name
    return jsonl(path) if name.endswith(".jsonl") else json.loads(path.read_text("utf-8"))


def decode_folder(capture: Path) -> tuple[list[dict], LayoutHistory, dict]:
    (export,) = find_exports(capture)
    decoded, history = decode_capture(read_sys_log(export), read_catalog(capture / "catalog"))
    return decoded, history, assemble(decoded)


def canonical(changes: list[dict]) -> list[str]:
    return sorted(json.dumps({k: c[k] for k in CHANGE_KEYS}, sort_keys=True) for c in changes)


def final_tables(history: LayoutHistory, changes: list[dict]) -> dict[str, list[dict]]:
    """Replay committed changes; name each table by its layout at the end (dropped: left out)."""
    tables, problems = replay(changes)
    assert problems == []
    out = {}
    for rel_id, rows in tables.items():
        layout = history.layout_at(rel_id, END)
        if layout is not None:
            full = [{c.name: r.get(c.name) for c in layout.columns} for r in rows]
            out[layout.qualified_name] = sorted_rows(full)
    return out


def sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


@pytest.mark.parametrize("fmt", FORMATS)
def test_decoder_reproduces_the_truth(generated, fmt):
    out, _ = generated
    decoded, history, result = decode_folder(out / "soliddb" / f"capture01_{fmt}")
    assert [r["decode_error"] for r in decoded if r["decode_error"]] == []
    assert canonical(result["changes"]) == canonical(truth(out, "changes.jsonl"))
    dispositions = {t["transaction_id"]: t["disposition"] for t in result["transactions"]}
    assert dispositions == {
        t["transaction_id"]: t["disposition"] for t in truth(out, "transactions.jsonl")
    }
    expected = {k: sorted_rows(t["rows"]) for k, t in truth(out, "tables.json").items()}
    assert final_tables(history, result["changes"]) == expected


def test_truth_changes_replay_to_truth_tables(generated):
    """The generator's own changes.jsonl, replayed, gives its tables.json (truth is coherent)."""
    out, _ = generated
    tables, problems = replay(truth(out, "changes.jsonl"))
    assert problems == []
    expected = truth(out, "tables.json")
    assert 1006 in tables  # TMP.DROPME: changed, then dropped, so not in tables.json
    for table in expected.values():
        columns = table["columns"]
        replayed = [{c: r.get(c) for c in columns} for r in tables.get(table["rel_id"], [])]
        assert sorted_rows(replayed) == sorted_rows(table["rows"])
    assert {t["key"][0] for t in expected.values()} == {"ID", "ORDER_ID", "Sku"}


def test_schema_changes_match(generated):
    out, _ = generated
    _, _, result = decode_folder(out / "soliddb" / "capture01_parquet")
    ddl = [e for e in result["schema_changes"] if e["record_kind"] == "ddl"]
    sql = [e for e in result["schema_changes"] if e["record_kind"] == "sql"]
    expected = sorted(truth(out, "schema_changes.jsonl"), key=lambda e: e["logaddr"])
    ddl.sort(key=lambda e: e["logaddr"])
    sql.sort(key=lambda e: e["logaddr"])
    assert [(e["logaddr"], e["ddl_logrecid"], e["ddl_info"], e["relid"]) for e in ddl] == [
        (e["logaddr"], e["logrecid"], e["info"], e["relid"]) for e in expected
    ]
    assert [e["sql_text"] for e in sql] == [e["sql_text"] for e in expected]
    assert {e["ddl_logrecid"] for e in ddl} == {d.value for d in DdlLogRecId}
    named = [
        (e["table_schema"], e["table_name"])
        for e, t in zip(ddl, expected, strict=True)
        if "table_name" in t
    ]
    assert named == [(t["table_schema"], t["table_name"]) for t in expected if "table_name" in t]


def test_workload_covers_the_issue(generated):
    out, summary = generated
    decoded, _, result = decode_folder(out / "soliddb" / "capture01_parquet")
    txns = result["transactions"]
    assert {t["disposition"] for t in txns} == {"committed", "in_flight", "aborted"}
    assert sum(t["capture_off"] for t in txns) == 1
    assert any("#" in t["transaction_id"] for t in txns)
    assert any(not t["has_trx_start"] for t in txns)
    operations = {c["operation"] for c in result["changes"]}
    assert operations == {"insert", "update", "delete", "truncate"}
    kinds = [r["record_kind"] for r in decoded]
    assert kinds.count("nop") == summary["nop_rows"] > 0
    assert any(r["shutdown"] for r in decoded)
    # Every type of the type table with a non-NULL value, and a row logged before ADD COLUMN.
    all_types = [c for c in result["changes"] if c["table_name"] == "ALL_TYPES"]
    seen = {name for c in all_types for name, v in (c["after_image"] or {}).items() if v}
    assert len(seen) == 24
    reasons = {v for c in result["changes"] for v in (c["before_null_reasons"] or {}).values()}
    assert NULL_NOT_IN_RECORD in reasons
    types = {
        c.sql_type
        for layout in read_catalog(out / "soliddb" / "capture01_csv" / "catalog")
        for c in layout.columns
    }
    assert types == set(TYPE_ENCODINGS)


def test_logaddrs_are_20_bytes_and_increase_in_file_order(generated):
    out, _ = generated
    table = pq.read_table(out / "soliddb" / "capture01_parquet" / "sys_log.parquet")
    addresses = [a for a in table.column("LOGADDR").to_pylist() if a is not None]
    assert all(len(a) == 20 for a in addresses)
    assert addresses == sorted(addresses)
    assert addresses[0].hex().upper().startswith("0000000000000001FFFFFFFF")
    assert addresses[-1][:8] == (2).to_bytes(8, "big")  # after the restart: next generation
    data = [d for d in table.column("DATA").to_pylist() if d]
    assert any(b"\xfe" in d for d in data)


def digest(folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()


def test_deterministic_per_seed(tmp_path: Path):
    generate(tmp_path / "a", transactions=40, seed=3)
    generate(tmp_path / "b", transactions=40, seed=3)
    generate(tmp_path / "c", transactions=40, seed=4)
    assert digest(tmp_path / "a") == digest(tmp_path / "b") != digest(tmp_path / "c")
    assert (tmp_path / "a" / "soliddb" / "capture01" / "sys_log.parquet").exists()


def test_arguments_are_checked(tmp_path: Path):
    with pytest.raises(ValueError, match="at least 40"):
        generate(tmp_path, transactions=10)
    with pytest.raises(ValueError, match="formats"):
        generate(tmp_path, formats=("xml",))


def test_benchmark_input_streams_in_row_groups(tmp_path: Path):
    path = tmp_path / "bench" / "sys_log.parquet"
    info = generate_benchmark(path, records=1000, seed=1, row_group_rows=300)
    assert info["records"] == 1000
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    decoded, _ = decode_capture(read_sys_log(path), read_catalog(path.parent / "catalog"))
    assert [r["decode_error"] for r in decoded if r["decode_error"]] == []
    changes = assemble(decoded)["changes"]
    assert {c["operation"] for c in changes} == {"insert", "update"}
    assert changes[0]["after_image"]["TS"].endswith(".000000000")

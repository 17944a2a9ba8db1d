"""The Db2 LUW SQL function bodies without Spark: layout history per table (catalog,
initialize table, ALTER records) and row images decoded with a version's layout JSON."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pytest

from logmart_generators.db2luw import generate
from tests.db2luw import handmade as h
from tests.db2luw.replay import read_capture
from udfs.db2luw import functions
from udfs.db2luw.rows import LayoutBook, decode_row, read_catalog


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[Path, list[dict], dict]:
    root = tmp_path_factory.mktemp("db2luw")
    generate(root, 30, 5)
    folder = root / "db2luw" / "capture01"
    return folder, read_capture(folder, "filter", "little"), read_catalog(folder / "catalog")


def catalog_json(folder: Path, name: str) -> str:
    """One table's catalog JSON as int_db2luw_table_versions builds it (raw CSV values)."""
    with (folder / "catalog" / "tables.csv").open() as handle:
        table = next(row for row in csv.DictReader(handle) if row["TABNAME"] == name)
    with (folder / "catalog" / "columns.csv").open() as handle:
        columns = [row for row in csv.DictReader(handle) if row["TABNAME"] == name]
    return json.dumps(
        {
            "tabschema": table["TABSCHEMA"],
            "tabname": name,
            "tbspaceid": int(table["TBSPACEID"]),
            "tableid": int(table["TABLEID"]),
            "compression": table["COMPRESSION"],
            "columns": [
                {
                    "colname": c["COLNAME"],
                    "colno": int(c["COLNO"]),
                    "typename": c["TYPENAME"],
                    "length": int(c["LENGTH"]),
                    "scale": int(c["SCALE"]),
                    "nulls": c["NULLS"],
                    "compress": c["COMPRESS"],
                    "inline_length": int(c["INLINE_LENGTH"]),
                    "keyseq": int(c["KEYSEQ"]) if c["KEYSEQ"] else None,
                }
                for c in reversed(columns)  # any order: COLNO decides
            ],
        }
    )


def layout_records(
    records: list[dict],
    table_space: int,
    table: int,
    kinds: tuple[str, ...] = ("ddl_initialize_table", "ddl_add_columns"),
) -> list[dict]:
    keys = ("lsn", "kind", "table_space_identifier", "table_identifier", "old_columns",
            "new_columns", "column_id")  # fmt: skip
    return [
        {key: record[key] for key in keys}
        for record in reversed(records)  # any order: LSN decides
        if record["kind"] in kinds
        and (record["table_space_identifier"], record["table_identifier"]) == (table_space, table)
    ]


def test_catalog_only_table_has_one_version_from_the_start(capture):
    folder, _, _ = capture
    (version,) = functions.layout_history(catalog_json(folder, "ORDERS"), None, [])
    assert version["valid_from_lsn"] == -1 and version["error"] is None
    assert version["layout_source"] == "catalog"
    assert version["column_names"][:3] == ["ORDER_ID", "CUSTOMER", "QTY"]
    layout, settings = functions.layout_from_json(version["layout_json"])
    assert layout.key_columns == ("ORDER_ID",) and layout.value_compression is True
    assert settings == functions.DEFAULT_SETTINGS


def test_add_column_gives_a_version_before_and_after(capture):
    folder, records, catalog = capture
    history = functions.layout_history(
        catalog_json(folder, "ACCOUNTS"), '{"codec": "latin-1"}', layout_records(records, 2, 12)
    )
    assert [v["layout_source"] for v in history] == ["alter", "alter"]
    assert history[0]["valid_from_lsn"] == -1 and history[1]["valid_from_lsn"] > 0
    assert "TIER" not in history[0]["column_names"] and history[1]["column_names"][-1] == "TIER"
    assert functions.layout_from_json(history[1]["layout_json"])[1]["codec"] == "latin-1"
    book = LayoutBook(catalog)
    for record in records:
        book.observe(record)
    assert [functions.layout_from_json(v["layout_json"])[0] for v in history] == [
        version.layout for version in book.history(2, 12)
    ]


def test_table_created_in_the_capture_takes_its_initialize_table_record(capture):
    """The table did not exist before its initialize-table record: no version before it (the
    catalog names its columns)."""
    folder, records, _ = capture
    history = functions.layout_history(
        catalog_json(folder, "EVENTS"), None, layout_records(records, 2, 14)
    )
    (initialize,) = layout_records(records, 2, 14)
    assert [v["layout_source"] for v in history] == ["initialize_table"]
    assert history[0]["valid_from_lsn"] == initialize["lsn"] and history[0]["valid_to_lsn"] is None
    assert history[0]["column_names"] == ["EVENT_ID", "KIND", "AT", "DETAIL"]
    assert (history[0]["table_schema"], history[0]["table_name"]) == ("SALES", "EVENTS")


def test_a_dropped_tables_ids_taken_by_a_later_table(capture):
    """SALES.LOADS is created, dropped (once rolled back) and its ids taken by SALES.AUDIT:
    two incarnations, each with its own layout; only AUDIT is the catalog export's."""
    folder, records, _ = capture
    kinds = ("ddl_initialize_table", "ddl_create_table", "ddl_drop_table", "undo_ddl_drop_table")
    history = functions.layout_history(
        catalog_json(folder, "AUDIT"), None, layout_records(records, 2, 15, kinds)
    )
    drops = [r["lsn"] for r in records if r["kind"] == "ddl_drop_table"]
    creates = [r["lsn"] for r in records if r["kind"] == "ddl_create_table"
               and r["table_identifier"] == 15]  # fmt: skip
    assert [v["incarnation"] for v in history] == [1, 2]
    loads, audit = history
    assert (loads["valid_from_lsn"], loads["valid_to_lsn"]) == (creates[0], drops[-1] + 1)
    assert loads["dropped_lsn"] == drops[-1] and loads["table_schema"] is None
    assert loads["table_name"] == f"TBSPACEID=2,TABLEID=15,DROPPED_LSN={drops[-1]:016X}"
    assert loads["column_names"] == ["C1", "C2", "C3", "C4"] and loads["key_columns"] == []
    assert loads["column_types"] == ["INTEGER", "VARCHAR(20)", "BIGINT", "TIMESTAMP"]
    assert (audit["valid_from_lsn"], audit["valid_to_lsn"]) == (creates[1], None)
    assert (audit["table_schema"], audit["table_name"]) == ("SALES", "AUDIT")
    assert audit["column_names"] == ["AUDIT_ID", "ACTION", "AMOUNT", "NOTE"]
    assert audit["key_columns"] == ["AUDIT_ID"] and audit["dropped_lsn"] is None


def test_catalog_json_codepage_0_travels_to_the_row_decoder():
    """The SQL's catalog JSON (with 'codepage', issue 14 item 7) -> layout JSON -> row values."""
    catalog = json.dumps({
        "tabschema": "S", "tabname": "T", "tbspaceid": 2, "tableid": 7, "compression": "N",
        "columns": [
            {"colname": "TAG", "colno": 0, "typename": "CHARACTER", "length": 2, "scale": 0,
             "nulls": "N", "codepage": 0},
            {"colname": "NAME", "colno": 1, "typename": "CHARACTER", "length": 2, "scale": 0,
             "nulls": "N", "codepage": 1208},
        ],
    })  # fmt: skip
    (version,) = functions.layout_history(catalog, None, [])
    layout, settings = functions.layout_from_json(version["layout_json"])
    image = h.formatted("<", b"\x00\x01" + b"ok")
    decoded = functions.decode_image(image, layout, settings, "little")
    assert decoded["values"] == ["0001", "ok"]
    assert version["column_types"] == ["CHAR(2) FOR BIT DATA", "CHAR(2)"]


def test_layout_json_without_the_newest_column_fields_still_reads():
    (version,) = functions.layout_history(
        json.dumps({"tabschema": "S", "tabname": "T", "tbspaceid": 2, "tableid": 7,
                    "columns": [{"colname": "A", "colno": 0, "typename": "INTEGER",
                                 "length": 4, "scale": 0, "nulls": "N"}]}), None, [])  # fmt: skip
    document = json.loads(version["layout_json"])
    document["columns"] = [column[:-1] for column in document["columns"]]  # no for_bit_data
    layout, _ = functions.layout_from_json(json.dumps(document))
    assert layout.columns[0].for_bit_data is False


def test_without_a_catalog_columns_are_numbered(capture):
    _, records, _ = capture
    (version,) = functions.layout_history(None, None, layout_records(records, 2, 14))
    assert version["column_names"] == ["C1", "C2", "C3", "C4"]
    assert functions.layout_history(None, None, []) == []


def test_a_table_no_layout_can_be_built_for_says_why(capture):
    folder, records, _ = capture
    bad = json.loads(catalog_json(folder, "ORDERS"))
    bad["columns"][0]["typename"] = "SPATIAL"
    (failed,) = functions.layout_history(json.dumps(bad), None, [])
    assert failed["layout_json"] is None
    assert "no table layout: catalog type 'SPATIAL'" in failed["error"]
    (alter_only,) = functions.layout_history(
        None, None, [{**layout_records(records, 2, 12)[0], "old_columns": None}]
    )
    assert "no earlier layout and no catalog entry" in alter_only["error"]


def test_arrow_history_is_a_list_of_versions(capture):
    folder, _, _ = capture
    out = functions.layout_history_arrow(
        pa.array([catalog_json(folder, "ORDERS"), None]),
        pa.array(['{"codec": "utf-8"}', None]),
        pa.array([[], None], pa.list_(pa.struct([("lsn", pa.int64())]))),
    )
    assert out.type == functions._HISTORY_ARROW
    assert len(out[0]) == 1 and len(out[1]) == 0


def test_row_udf_decodes_every_image_like_decode_row(capture):
    _, records, catalog = capture
    book = LayoutBook(catalog)
    for record in records:
        book.observe(record)
    images, layouts, expected = [], [], []
    for record in records:
        if record["kind"] not in ("row_insert", "row_delete", "row_update"):
            continue
        if record["catalog_table"]:
            continue
        layout = book.at(
            record["table_space_identifier"], record["table_identifier"], record["lsn"]
        )
        for image in record["images"] or [record["before_image"], record["after_image"]]:
            if image is not None:
                images.append(image)
                layouts.append(functions.layout_to_json(layout, {}))
                expected.append((decode_row(image, layout), layout))
    out = functions.row_arrow(
        pa.array(images, pa.binary()), pa.array(layouts), pa.array(["little"] * len(images))
    ).to_pylist()
    for got, (row, layout) in zip(out, expected, strict=True):
        assert got["error"] is None
        assert got["is_user_row"] == (row.record_kind == "user_row")
        assert (got["record_kind"], got["record_type"]) == (row.record_kind, row.record_type)
        if got["is_user_row"]:
            names = [c.name for c in layout.columns]
            assert dict(zip(names, got["values"], strict=True)) == row.values
            reasons = [r for r in got["null_reasons"] if r is not None]
            assert reasons == [row.none_sources[n] for n in names if n in row.none_sources]
    assert any(not o["is_user_row"] for o in out)  # the internal record
    assert {o["record_kind"] for o in out if o["record_type"] == 0x02} == {"image_elsewhere"}
    assert any(o["record_type"] == 0x04 and o["is_user_row"] for o in out)  # carries an image


def test_row_udf_reports_missing_layouts_and_bad_images(capture):
    _, _, catalog = capture
    layout = functions.layout_to_json(next(iter(catalog.values())), {})
    out = functions.row_arrow(
        pa.array([None, b"\x00\x00\x04\x00", b"\x00\x00\x09\x00", b"\x00\x00\x04\x00"]),
        pa.array([layout, None, layout, "{not json"]),
        pa.array(["little"] * 4),
    ).to_pylist()
    assert out[0] is None
    assert out[1]["error"] == "no table layout for this table at this LSN"
    assert "row record header says 9 bytes, the image has 4" in out[2]["error"]
    assert out[3]["error"].startswith("table layout unusable")


def test_column_types_as_db2_ddl_spells_them(capture):
    folder, _, _ = capture
    by_name = {
        version["layout_source"]: dict(
            zip(version["column_names"], version["column_types"], strict=True)
        )
        for version in functions.layout_history(catalog_json(folder, "ALLTYPES"), None, [])
    }
    types = by_name["catalog"]
    assert types["C_DEC"] == "DECIMAL(9,2)" and types["C_DF34"] == "DECFLOAT(34)"
    assert types["C_GRAPHIC"] == "GRAPHIC(4)" and types["C_VARGRAPHIC"] == "VARGRAPHIC(20)"
    assert types["C_TS"] == "TIMESTAMP" and types["C_CLOB"] == "CLOB(1024)"
    assert types["C_BIN"] == "BINARY(4)" and types["C_CHAR"] == "CHAR(8)"

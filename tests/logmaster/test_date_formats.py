"""DLDS DATEFORMAT: DATE/TIME/TIMESTAMP columns written in each date format decode to the same
text (docs/logmaster.md "Date formats"), scalar and batch alike, from hand-made bytes and from
the generator's extracts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from logmart_generators import logmaster as generator
from tests.logmaster.handmade import data_field
from tests.logmaster.test_batch_rows import _batches
from udfs import batch_values as bv
from udfs import values
from udfs.errors import DecodeError
from udfs.logmaster import batch_rows
from udfs.logmaster import rows as row_images
from udfs.logmaster.rows import Column, RowLayout, decode_data, layout_text, parse_layout

# One moment written in every format, by hand from each format's description: DATE 2024-02-29,
# TIME 13:45:07 (USA: no seconds, so 13:45), TIMESTAMP 2024-03-18 09:30:05.123456 (+05:30).
# SAS: 2024-02-29 is day 23435 since 1960-01-01; 13:45:07 is second 49507 of the day;
# 2024-03-18 09:30:05 is second 2026373405 since 1960-01-01 00:00:00.
WRITTEN = {
    "DB2I": ("2024-02-29", "13.45.07", "2024-03-18-09.30.05.123456"),
    "ISO": ("2024-02-29", "13.45.07", "2024-03-18-09.30.05.123456"),
    "JIS": ("2024-02-29", "13:45:07", "2024-03-18-09.30.05.123456"),
    "EUR": ("29.02.2024", "13.45.07", "2024-03-18-09.30.05.123456"),
    "USA": ("02/29/2024", "01:45 PM", "2024-03-18-09.30.05.123456"),
    "SASTIME": ("     23435", "   49507", "         2026373405.123456"),
}
RENDERED = ("2024-02-29", "13:45:07", "2024-03-18 09:30:05.123456")


@pytest.mark.parametrize("fmt", list(WRITTEN))
def test_each_format_renders_alike(fmt):
    date, time, stamp = WRITTEN[fmt]
    assert values.date_text(date, fmt) == RENDERED[0]
    assert values.time_text(time, fmt) == ("13:45:00" if fmt == "USA" else RENDERED[1])
    assert values.timestamp_text(stamp, fmt) == RENDERED[2]


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # Db2's USA table: 12:01-12:59 AM = 00:01-00:59, 12:00 AM = 24:00, 00:00 AM = 00:00
        ("12:30 AM", "00:30:00"),
        ("12:00 AM", "24:00:00"),
        ("00:00 AM", "00:00:00"),
        ("01:00 AM", "01:00:00"),
        ("11:59 AM", "11:59:00"),
        ("12:00 PM", "12:00:00"),
        ("11:59 PM", "23:59:00"),
        ("1:30 PM", "13:30:00"),
    ],
)
def test_usa_times_follow_db2s_table(text, expected):
    assert values.time_text(text, "USA") == expected


@pytest.mark.parametrize(
    ("function", "fmt", "text", "expected"),
    [
        (values.date_text, "SASTIME", "0", "1960-01-01"),
        (values.date_text, "SASTIME", "-1642", "1955-07-04"),
        (values.time_text, "SASTIME", "0", "00:00:00"),
        (values.time_text, "SASTIME", "86400", "24:00:00"),
        (values.timestamp_text, "SASTIME", "-1", "1959-12-31 23:59:59"),
        (values.timestamp_text, "SASTIME", "2026373405", "2024-03-18 09:30:05"),
        (values.timestamp_text, "SASTIME", "2026373405.5+05:30", "2024-03-18 09:30:05.5+05:30"),
        (
            values.timestamp_text,
            "EUR",
            "2024-03-18-09.30.05.1-08:00",
            "2024-03-18 09:30:05.1-08:00",
        ),
        (values.time_text, "EUR", "13:45:07", "13:45:07"),  # ':' accepted (interpretation 5)
    ],
)
def test_sas_numbers_and_other_forms(function, fmt, text, expected):
    assert function(text, fmt) == expected


@pytest.mark.parametrize(
    ("function", "fmt", "text"),
    [
        (values.date_text, "EUR", "2024-02-29"),  # an ISO date is not a EUR date
        (values.date_text, "EUR", "30.02.2024"),
        (values.date_text, "USA", "13/01/2024"),
        (values.date_text, "ISO", "29.02.2024"),
        (values.time_text, "USA", "13:00 PM"),
        (values.time_text, "USA", "00:30 AM"),  # hour 0 only as 00:00 AM
        (values.time_text, "USA", "13.45.07"),
        (values.time_text, "SASTIME", "86401"),
        (values.time_text, "SASTIME", "-5"),
        (values.date_text, "SASTIME", "2024-02-29"),
        (values.timestamp_text, "SASTIME", "2024-03-18-09.30.05.123456"),
        (values.timestamp_text, "SASTIME", "999999999999"),  # past the year 9999
        (values.date_text, "XYZ", "2024-02-29"),
    ],
)
def test_values_not_in_the_format_are_decode_errors(function, fmt, text):
    with pytest.raises(DecodeError):
        function(text, fmt)


def test_dateformat_field_is_read_blank_as_db2i_and_unknown_refused():
    assert values.date_format("DB2I    ") == "DB2I"
    assert values.date_format("sastime ") == "SASTIME"
    assert values.date_format("        ") == values.date_format(None) == "DB2I"
    with pytest.raises(DecodeError, match="DATEFORMAT"):
        values.date_format("LOCAL")


# --- the batch decoder agrees with the scalar one ----------------------------------------------

# Rows of every format, valid and not, each the column's width (DATE 10, TIME 8, DTTM 26).
BATCH_ROWS = {
    "DATE": ["2024-02-29", "29.02.2024", "02/29/2024", "     23435", "2023-02-29", "31.04.2024",
             "12/31/1999", "01.01.0001", "    -1642 ", "2024/02/29"],
    "TIME": ["13.45.07", "13:45:07", "01:45 PM", "12:00 AM", "   49507", "24.00.00", "25.00.00",
             "12:61 PM", "   86400", "00:00 AM"],
    "DTTM": ["2024-03-18-09.30.05.123456", "2024-03-18 09:30:05.123456",
             "         2026373405.123456", "2024-02-30-09.30.05.123456",
             "           -1.000001      "],
}  # fmt: skip


@pytest.mark.parametrize("fmt", list(WRITTEN))
@pytest.mark.parametrize("kind", list(BATCH_ROWS))
@pytest.mark.parametrize("codec", ["cp037", "latin-1"])
def test_batch_and_scalar_decoders_agree(fmt, kind, codec):
    rows = [text.encode(codec) for text in BATCH_ROWS[kind]]
    matrix = np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1)
    rendered, bad = bv.temporal_strings(matrix, kind, codec, fmt)
    scalar = {"DATE": values.date_text, "TIME": values.time_text, "DTTM": values.timestamp_text}
    expected = []
    for raw in rows:
        try:
            expected.append(scalar[kind](raw.decode(codec), fmt))
        except DecodeError:
            expected.append(None)
    assert [None if b else v for v, b in zip(rendered.to_pylist(), bad, strict=True)] == expected
    assert list(bad) == [value is None for value in expected]
    assert any(value is not None for value in expected)  # each format reads some of the rows


# --- row images: the format travels in the layout text -------------------------------------------

COLUMNS = (
    Column(1, "DATE", 10, 0, "N", "", 4),
    Column(2, "TIME", 8, 0, "Y", "", 14),
    Column(3, "DTTM", 26, 0, "N", "", 23),
    Column(4, "DTTZ", 32, 0, "Y", "", 49),
)
ZONED = {"SASTIME": "   2026373405.123456+05:30"}


@pytest.mark.parametrize("fmt", list(WRITTEN))
def test_row_images_decode_every_format_to_the_same_text(fmt):
    date, time, stamp = WRITTEN[fmt]
    zoned = ZONED.get(fmt, "2024-03-18-09.30.05.123456+05:30").rjust(32)
    # DATE, null byte + TIME, DTTM, null byte + DTTZ: at LLCOLUMNPOS 4, 14, 23, 49
    parts = [date, "\x00", time, stamp, "\x00", zoned]
    image = b"".join(part.encode("cp037") for part in parts)
    layout = parse_layout(layout_text(RowLayout(COLUMNS, date_format=fmt)))
    assert layout.date_format == fmt
    result = decode_data([data_field(image)], ["I"], layout)
    assert result.errors == [None] and result.warnings == [[]]
    time_text = "13:45:00" if fmt == "USA" else RENDERED[1]
    assert result.after[0] == [RENDERED[0], time_text, RENDERED[2], RENDERED[2] + "+05:30"]


def test_layout_text_carries_the_format_as_an_optional_8th_field():
    default = layout_text(RowLayout(COLUMNS))
    assert default.count("|") == 5  # DB2I: the text (and its digest) is as before
    sas = layout_text(RowLayout(COLUMNS, date_format="SASTIME"))
    assert sas == default + "||SASTIME"  # the 7th (mixed code page) empty
    mixed = layout_text(RowLayout(COLUMNS, mixed_codec="ibm930", date_format="EUR"))
    assert mixed == default + "|ibm930|EUR"
    assert parse_layout(mixed).mixed_codec == "ibm930"
    assert parse_layout(sas).mixed_codec is None
    assert parse_layout(default + "|ccsid:930").date_format == "DB2I"


def test_an_unknown_dateformat_makes_the_layout_unusable():
    text = layout_text(RowLayout(COLUMNS)) + "||LOCAL"
    data, change_type = pa.array([data_field(b"")], pa.binary()), pa.array(["I"])
    result = row_images.decode_groups(data, change_type, np.array([0]), [text])
    # the rows of that table quarantine, saying why
    assert "DATEFORMAT 'LOCAL'" in result.field("error")[0].as_py()


# --- the generator writes each format; the decoder reads it back ---------------------------------


@pytest.fixture(scope="module")
def extracts(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for fmt in generator.DATE_FORMATS:
        out[fmt] = tmp_path_factory.mktemp(f"dates_{fmt.lower()}")
        generator.generate(out[fmt], transactions=30, seed=11, date_format=fmt)
    return out


def _truth(out: Path) -> list[dict]:
    lines = (out / "truth" / "db2zos" / "changes.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _without_usa_seconds(truth: list[dict]) -> list[dict]:
    """The default extract's truth as a USA one says it: times have no seconds."""
    times = {c.name for t in generator._tables() for c in t.columns if c.type == "TIME"}
    for line in truth:
        for image in (line["before"], line["after"]):
            for name in times & set(image or ()):
                if image[name] is not None:
                    image[name] = image[name][:6] + "00"
    return truth


@pytest.mark.parametrize("fmt", generator.DATE_FORMATS)
def test_generator_writes_the_format_and_it_reads_back_as_the_default(extracts, fmt):
    out = extracts[fmt]
    control = next((out / "logmaster").rglob("*.F0001"))
    raw = control.read_bytes()
    dlds = raw.index("DLDS".encode("cp037"))  # DATEFORMAT CHAR(8) at 51 (x'33')
    assert raw[dlds + 51 : dlds + 59].decode("cp037") == fmt.ljust(8)
    texts = [v.layout_text for t in batch_rows.table_versions(control).values() for v in t]
    assert texts and all(
        text.count("|") == 5 if fmt == "DB2I" else text.endswith(f"||{fmt}") for text in texts
    )
    # the same seed writes the same changes: the truth is the default's (USA times aside)
    default = _truth(extracts["DB2I"])
    assert _truth(out) == (_without_usa_seconds(default) if fmt == "USA" else default)
    # and the decoder reads every one-segment change back to that truth, without a warning
    columns = {(t.owner, t.name): [c.name for c in t.columns] for t in generator._tables()}
    by_location = {}
    for batch in _batches(out):
        for row in batch.to_pylist():
            by_location[(Path(row["source_file"]).name, row["raw_offset"])] = row
    checked = 0
    for line in _truth(out):
        if line["segments"] != 1 or line["change_type"] not in ("I", "IL", "UB", "D"):
            continue
        row = by_location[tuple(line["records"][0])]
        if line["table_name"] in ("DOCUMENT_NOTE", "NOTE_REVIEW"):
            # LOBSINCLUDED / XMLINCLUDED N: only the UDF says which values are not in the log,
            # so the data source leaves these changes to it (udfs/logmaster/batch_rows.py)
            assert row["image_digest"] is None and row["image_error"] is None
            continue
        assert row["image_error"] is None and row["image_warnings"] == []
        names = columns[(line["table_owner"], line["table_name"])]
        for side in ("before", "after"):
            got = row[f"{side}_values"]
            assert (None if got is None else dict(zip(names, got, strict=True))) == line[side]
        checked += 1
    assert checked > 20

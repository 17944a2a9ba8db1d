"""The vectorised decoders (udfs/batch_values.py, udfs/batch.py) agree with the scalar ones.

For every column decoder: on random bytes, a row is flagged bad exactly when the scalar decoder
raises DecodeError, and every row not flagged has the scalar decoder's text; on valid values
built by the generators' encoders, no row is flagged and the texts are equal.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from logmart_generators import logmaster as lm
from tests.fuzz.support import decodes_or_rejects, fuzz
from udfs import batch, fields, values
from udfs import batch_values as bv

CODECS = ["cp037", "cp500", "latin-1", "ascii", "utf-8", "utf-16-be"]


def matrices(widths):
    """(rows, width) uint8 matrices of random bytes; ``widths`` a strategy of widths."""
    return widths.flatmap(
        lambda width: st.lists(st.binary(min_size=width, max_size=width), min_size=1, max_size=12)
    ).map(lambda rows: np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1))


def ragged_values(max_size: int = 16):
    return st.lists(st.binary(max_size=max_size), min_size=1, max_size=12)


def _ragged(items: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    data = np.frombuffer(b"".join(items), np.uint8)
    offsets = np.zeros(len(items) + 1, np.int32)
    np.cumsum([len(item) for item in items], out=offsets[1:])
    return data, offsets


def assert_agrees(texts, bad, matrix_rows: list[bytes], scalar) -> None:
    """Batch texts/bad mask against the scalar decoder, row by row."""
    texts = texts.to_pylist()
    for row, raw in enumerate(matrix_rows):
        expected = decodes_or_rejects(scalar, raw)
        assert bool(bad[row]) == (expected is None and _raises(scalar, raw)), (raw, texts[row])
        if not bad[row]:
            assert texts[row] == expected, raw


def _raises(scalar, raw) -> bool:
    try:
        scalar(raw)
    except values.DecodeError:
        return True
    return False


# --- numbers ---------------------------------------------------------------------------------


@fuzz(300)
@given(matrices(st.integers(1, 10)), st.integers(0, 12))
def test_packed_decimals_agree_on_any_bytes(matrix, scale):
    texts, bad = bv.packed_decimals(matrix, scale)
    assert_agrees(texts, bad, [row.tobytes() for row in matrix],
                  lambda raw: values.packed_decimal(raw, scale))  # fmt: skip


@fuzz(200)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(st.just(n), st.lists(st.integers(-(10 ** (2 * n - 1)) + 1, 10 ** (2 * n - 1) - 1), min_size=1, max_size=10))),  # noqa: E501
       st.integers(0, 12))  # fmt: skip
def test_packed_decimals_agree_on_valid_values(size_and_values, scale):
    size, numbers = size_and_values
    rows = [lm.packed(n, size) for n in numbers]
    matrix = np.frombuffer(b"".join(rows), np.uint8).reshape(-1, size)
    texts, bad = bv.packed_decimals(matrix, scale)
    assert not bad.any()
    assert texts.to_pylist() == [lm.scaled(n, scale) for n in numbers]


@fuzz(300)
@given(matrices(st.sampled_from([2, 4, 8])))
def test_integers_agree(matrix):
    texts, bad = bv.int_strings(matrix)
    assert not bad.any()
    assert texts.to_pylist() == [str(values.int_be(row.tobytes())) for row in matrix]


@fuzz(300)
@given(matrices(st.sampled_from([4, 8])))
def test_floats_agree(matrix):
    single = matrix.shape[1] == 4
    rows = [row.tobytes() for row in matrix]
    hfp = bv.hfp_floats(matrix)
    ieee = bv.ieee_floats(matrix)
    for row, raw in enumerate(rows):
        assert _same_float(hfp[row], values.hfp_float(raw))
        assert _same_float(ieee[row], values.ieee_float(raw))
    for floats in (hfp, ieee):
        texts, bad = bv.float_strings(floats, single)
        assert not bad.any()
        assert texts.to_pylist() == [values.render_float(float(f), single) for f in floats]


def _same_float(a: float, b: float) -> bool:
    return (a != a and b != b) or (a == b and np.signbit(a) == np.signbit(b))


# --- text, binary ----------------------------------------------------------------------------


@fuzz(300)
@given(ragged_values(), st.sampled_from(CODECS))
def test_text_agrees_on_any_bytes(items, codec):
    texts, bad = bv.text_strings(*_ragged(items), codec)
    assert_agrees(texts, bad, items, lambda raw: values.text(raw, codec))


@fuzz(200)
@given(st.lists(st.text(max_size=10), min_size=1, max_size=12), st.sampled_from(CODECS))
def test_text_agrees_on_valid_text(strings, codec):
    items = [s.encode(codec, errors="ignore") for s in strings]
    texts, bad = bv.text_strings(*_ragged(items), codec)
    assert_agrees(texts, bad, items, lambda raw: values.text(raw, codec))
    if codec != "utf-16-be":  # odd byte counts can come from 'ignore'
        assert not bad.any()


@fuzz(200)
@given(ragged_values())
def test_hex_agrees(items):
    assert bv.hex_strings(*_ragged(items)).to_pylist() == [values.hex_upper(i) for i in items]


# --- character dates and times ---------------------------------------------------------------

_SCALAR_TEMPORAL = {
    "DATE": values.date_text,
    "TIME": values.time_text,
    "DTTM": values.timestamp_text,
    "DTTZ": values.timestamp_text,
}
_WIDTHS = {"DATE": 10, "TIME": 8, "DTTM": 26, "DTTZ": 32}


_FORMS = {
    "DATE": "%Y-%m-%d",
    "TIME": "%H.%M.%S",
    "DTTM": "%Y-%m-%d-%H.%M.%S.%f",
    "DTTZ": "%Y-%m-%d-%H.%M.%S.%f+05:30",
}


def _temporal_texts(kind: str):
    """Texts of the external form's width: valid ones with a few characters replaced by
    digits or separators (so both the fast path and the scalar fallback are reached)."""
    valid = st.datetimes(min_value=dt.datetime(1000, 1, 1)).map(lambda m: m.strftime(_FORMS[kind]))
    sample = dt.datetime(2000, 1, 1).strftime(_FORMS[kind])
    separators = [at for at, char in enumerate(sample) if not char.isdigit()]
    edits = st.lists(
        st.tuples(
            st.one_of(st.integers(0, _WIDTHS[kind] - 1), st.sampled_from(separators)),
            st.one_of(st.sampled_from("-.: +"), st.sampled_from("0123456789")),
        ),
        max_size=2,
    )

    def edit(pair: tuple[str, list[tuple[int, str]]]) -> str:
        text, changes = list(pair[0]), pair[1]
        for at, char in changes:
            text[at] = char
        return "".join(text)

    return st.lists(st.tuples(valid, edits).map(edit), min_size=1, max_size=8)


@pytest.mark.parametrize("kind", list(_SCALAR_TEMPORAL))
@fuzz(150)
@given(data=st.data(), codec=st.sampled_from(["cp037", "latin-1"]))
def test_temporal_columns_agree_on_any_text(kind, data, codec):
    texts = data.draw(_temporal_texts(kind))
    rows = [text.encode(codec) for text in texts]
    matrix = np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1)
    rendered, bad = bv.temporal_strings(matrix, kind, codec)
    scalar = _SCALAR_TEMPORAL[kind]
    assert_agrees(rendered, bad, rows, lambda raw: scalar(values.text(raw, codec)))


@fuzz(200)
@given(st.lists(st.datetimes(min_value=dt.datetime(1000, 1, 1)), min_size=1, max_size=8),
       st.sampled_from(list(_FORMS)))  # fmt: skip
def test_temporal_columns_agree_on_valid_values(moments, kind):
    rows = [m.strftime(_FORMS[kind]).encode("cp037") for m in moments]
    matrix = np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1)
    rendered, bad = bv.temporal_strings(matrix, kind, "cp037")
    assert not bad.any()
    expected = [_SCALAR_TEMPORAL[kind](m.strftime(_FORMS[kind])) for m in moments]
    assert rendered.to_pylist() == expected


# --- fixed header fields (udfs/batch.py) against the construct field types --------------------

_FIELD_TYPES = {
    "bin": fields.Bin,
    "char": fields.Char,
    "hex": fields.Hex,
    "rba": fields.Rba,
    "lrsn": fields.Lrsn,
    "ts17": lambda width: fields.Timestamp17(),
}


def _field_specs(kinds_and_widths: list[tuple[str, int]]) -> list[batch.FieldSpec]:
    specs, offset = [], 0
    for number, (kind, width) in enumerate(kinds_and_widths):
        specs.append(batch.FieldSpec(f"F{number}", offset, width, kind))
        offset += width
    return specs


# BIN(8) is left out: the raw column is a signed bigint, so values from 2**63 come out negative
# (construct says unsigned); no LLDF header field is wider than BIN(4).
_KIND_WIDTHS = st.one_of(
    st.tuples(st.just("bin"), st.integers(1, 7)),
    st.tuples(st.just("char"), st.integers(1, 20)),
    st.tuples(st.just("hex"), st.integers(1, 12)),
    st.tuples(st.sampled_from(["rba", "lrsn"]), st.sampled_from([6, 10])),
    st.tuples(st.just("ts17"), st.just(17)),
)


def _header_rows(specs: list[batch.FieldSpec], valid_moments: bool):
    """Rows of random bytes, BIN(17) fields optionally filled with valid timestamps."""
    width = specs[-1].end

    def row(draw_bytes: bytes, moments: list) -> bytes:
        data = bytearray(draw_bytes)
        for spec, moment in zip((s for s in specs if s.kind == "ts17"), moments, strict=False):
            data[spec.offset : spec.end] = moment if isinstance(moment, bytes) else lm.bin17(moment)
        return bytes(data)

    # valid moments, no timestamp (zeros), or BCD digits that may not be a date or time
    two = st.integers(0, 99).map("{:02d}".format)
    digits = st.tuples(
        st.integers(0, 9999).map("{:04d}".format), st.integers(0, 13).map("{:02d}".format),
        st.integers(0, 32).map("{:02d}".format), st.integers(0, 25).map("{:02d}".format),
        two, two, st.text("0123456789", min_size=20, max_size=20),
    ).map(lambda parts: bytes.fromhex("".join(parts)))  # fmt: skip
    moment = st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1000, 1, 1)), digits)
    one = st.tuples(st.binary(min_size=width, max_size=width),
                    st.lists(moment, min_size=len(specs), max_size=len(specs)) if valid_moments
                    else st.just([])).map(lambda pair: row(*pair))  # fmt: skip
    return st.lists(one, min_size=1, max_size=10)


@pytest.mark.parametrize("valid_moments", [False, True], ids=["any-bytes", "bcd-timestamps"])
@fuzz(200)
@given(data=st.data(), codec=st.sampled_from(["cp037", "cp500", "latin-1"]))
def test_decode_fields_agrees_with_the_construct_field_types(valid_moments, data, codec):
    specs = _field_specs(data.draw(st.lists(_KIND_WIDTHS, min_size=1, max_size=6)))
    rows = data.draw(_header_rows(specs, valid_moments))
    matrix = np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1)
    columns, problems = batch.decode_fields(matrix, specs, codec)
    bad_rows = np.zeros(len(rows), bool)
    for mask, reason in problems:
        assert reason.endswith("is not a valid BIN(17) timestamp")
        bad_rows |= mask
    for spec in specs:
        construct = _FIELD_TYPES[spec.kind](spec.width)
        for row, raw in enumerate(rows):
            field = raw[spec.offset : spec.end]
            expected = decodes_or_rejects(construct.parse, field, codec=codec)
            if _raises(lambda b, c=construct: c.parse(b, codec=codec), field):
                assert bad_rows[row], (spec, field)
            elif spec.kind != "ts17" or expected is not None:
                assert columns[spec.column][row].as_py() == expected, (spec, field)

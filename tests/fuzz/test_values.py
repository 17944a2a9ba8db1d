"""Property tests of the shared scalar value decoders (udfs/values.py).

(a) Any bytes / text: a value or logmart's DecodeError, nothing else.
(b) decode(build(x)) == x, with the generators' own encoders as builders (they are written
    without udfs.values), and the rendering the specs README asks for computed here from x.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Context, Decimal

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from logmart_generators import db2luw as luw
from logmart_generators import logmaster as lm
from logmart_generators import soliddb as solid
from tests.fuzz.support import decodes_or_rejects, fuzz
from udfs import values

CODECS = ["cp037", "cp500", "cp273", "cp1140", "latin-1", "ascii", "utf-8", "utf-16-be"]
SQL_DATE_TYPES = ["DATE", "TIME", "TIMESTAMP", "INTEGER"]
# The generators format years with strftime('%Y'), which does not pad years before 1000.
moments = st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31))

# --- (a) random input --------------------------------------------------------------------------


@fuzz(400)
@given(st.binary(max_size=40), st.sampled_from(CODECS))
def test_character_decoders_on_any_bytes(raw, codec):
    decodes_or_rejects(values.text, raw, codec)
    decodes_or_rejects(values.char_field, raw, codec)
    number = decodes_or_rejects(values.char_int, raw, codec)
    assert number is None or isinstance(number, int)
    assert values.hex_upper(raw) == raw.hex().upper()


@fuzz(200)
@given(st.one_of(st.none(), st.integers(), st.text(max_size=12)))
def test_code_page_lookups_never_raise_anything_else(ccsid):
    assert values.ebcdic_codec(ccsid) in values._EBCDIC_CCSID_CODECS.values()
    if isinstance(ccsid, str):
        decodes_or_rejects(values.check_codec, ccsid)


@fuzz(400)
@given(st.binary(max_size=20))
def test_binary_decoders_on_any_bytes(raw):
    for decoder in (
        values.rba_hex,
        values.lrsn_hex,
        values.bin17_timestamp,
        values.packed_decimal_unscaled,
        values.packed_digits,
        values.hfp_float,
        values.ieee_float,
        values.packed_date,
        values.packed_time,
        values.packed_timestamp,
        values.decfloat_dpd,
        values.datetime11_parts,
    ):
        decodes_or_rejects(decoder, raw)
    decodes_or_rejects(values.ieee_float, raw, "little")
    decodes_or_rejects(values.decfloat_dpd, raw, "little")
    assert values.int_be(raw) == int.from_bytes(raw, "big", signed=True)
    assert values.int_le(raw) == int.from_bytes(raw, "little", signed=True)


@fuzz(300)
@given(st.binary(min_size=1, max_size=20), st.integers(-3, 40))
def test_packed_decimal_on_any_bytes(raw, scale):
    text = decodes_or_rejects(values.packed_decimal, raw, scale)
    if text is not None:
        assert Decimal(text) == Decimal(values.packed_decimal_unscaled(raw)).scaleb(-scale)


@fuzz(300)
@given(st.binary(min_size=11, max_size=11), st.sampled_from(SQL_DATE_TYPES))
def test_solid_datetime_on_any_bytes(raw, sql_type):
    decodes_or_rejects(values.datetime11_text, raw, sql_type)


@fuzz(300)
@given(st.binary(min_size=4, max_size=8).filter(lambda raw: len(raw) in (4, 8)), st.booleans())
def test_floats_render_and_read_back(raw, single):
    for value in (values.hfp_float(raw), values.ieee_float(raw)):
        text = values.render_float(value, single=single)
        if math.isnan(value):
            assert text == "nan"
        else:
            assert float(text) == value or (single and np.float32(text) == np.float32(value))


_DATE_LIKE = st.from_regex(
    r"\A[0-9 ]{0,4}[-.: ]?[0-9]{0,2}[-.: ]?[0-9]{0,2}[-. ]?[0-9]{0,2}[.:]?[0-9]{0,2}[.:]?"
    r"[0-9]{0,2}(\.[0-9]{0,14})?([+-][0-9]{2}:?[0-9]{2})?\Z"
)


@fuzz(400)
@given(st.one_of(st.text(max_size=40), _DATE_LIKE))
def test_character_dates_and_times_on_any_text(text):
    for decoder in (values.date_text, values.time_text, values.timestamp_text):
        decodes_or_rejects(decoder, text)


@fuzz(400)
@given(
    st.one_of(
        st.text(max_size=30),
        st.from_regex(r"\A[+-]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][+-]?[0-9]{1,5})?\Z"),
    ),
    st.one_of(st.none(), st.integers(-5, 40)),
)
def test_decimal_text_on_any_text(text, scale):
    rendered = decodes_or_rejects(values.decimal_text, text, scale)
    if rendered is not None:
        assert Decimal(rendered) == Decimal(text.strip(" \x00"))


@fuzz(300)
@given(st.integers(-(10**40), 10**40), st.integers(-5, 40))
def test_scaled_text_is_the_exact_decimal(unscaled, scale):
    exact = Context(prec=100)
    assert Decimal(values.scaled_text(unscaled, scale)) == Decimal(unscaled).scaleb(-scale, exact)


@fuzz(200)
@given(*(st.integers(-5, 10000) for _ in range(6)))
def test_timestamp_parts_on_any_numbers(year, month, day, hour, minute, second):
    decodes_or_rejects(values.timestamp_parts_text, year, month, day, hour, minute, second)


# --- (b) round trips through the generators' encoders ------------------------------------------


@fuzz(300)
@given(st.integers(1, 16).flatmap(lambda n: st.tuples(st.just(n), st.integers(-(10 ** (2 * n - 1)) + 1, 10 ** (2 * n - 1) - 1))),  # noqa: E501
       st.sampled_from([0xC, 0xF]), st.integers(0, 9))  # fmt: skip
def test_packed_decimal_round_trip(size_and_value, plus_sign, scale):
    size, unscaled = size_and_value
    raw = lm.packed(unscaled, size, plus_sign)
    assert values.packed_decimal_unscaled(raw) == unscaled
    assert values.packed_decimal(raw, scale) == lm.scaled(unscaled, scale)
    assert values.packed_decimal_unscaled(luw.encode_packed(unscaled, size)) == unscaled


@fuzz(300)
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([4, 8]))
def test_hfp_round_trip(value, size):
    try:
        raw = lm.hfp(value, size)
    except ValueError:  # not exactly representable in HFP of that size
        assume(False)
    assert values.hfp_float(raw) == value
    assert math.copysign(1, values.hfp_float(raw)) == math.copysign(1, value) or value == 0


@fuzz(300)
@given(moments)
def test_bin17_round_trip(moment):
    stamp = values.bin17_timestamp(lm.bin17(moment))
    assert stamp == moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond:06d}000000"
    assert values.bin17_timestamp(lm.bin17(None)) is None


@fuzz(200)
@given(st.binary(min_size=6, max_size=6))
def test_six_byte_rba_and_lrsn_round_trip(raw6):
    assert values.rba_hex(raw6) == lm.rba_from_6(raw6).hex().upper()
    assert values.lrsn_hex(raw6) == lm.lrsn_from_6(raw6).hex().upper()
    assert values.rba_hex(lm.rba_from_6(raw6)) == values.rba_hex(raw6)


@fuzz(300)
@given(st.integers(1, 8).flatmap(lambda w: st.tuples(st.just(w), st.integers(-(10 ** (w - 1)) + 1, 10**w - 1))),  # noqa: E501
       st.sampled_from(["cp037", "cp500", "cp1140"]))  # fmt: skip
def test_char_number_round_trip(width_and_value, codec):
    width, value = width_and_value
    assert values.char_int(lm.num(value, width).decode(lm.EBCDIC).encode(codec), codec) == value


@fuzz(300)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=None), st.sampled_from([8, 16]),
       st.sampled_from(["<", ">"]))  # fmt: skip
def test_decfloat_round_trip(value, size, bo):
    digits, low, high = {8: (16, -398, 369), 16: (34, -6176, 6111)}[size]
    _sign, coefficient, exponent = value.as_tuple()
    assume(len(coefficient) <= digits and low <= exponent <= high)
    raw = luw.encode_decfloat(value, size, bo)
    assert values.decfloat_dpd(raw, "little" if bo == "<" else "big") == str(value)


@fuzz(300)
@given(moments, st.sampled_from(["<", ">"]))
def test_packed_date_time_timestamp_round_trip(moment, bo):
    date, time = luw.Col("D", "DATE"), luw.Col("T", "TIME")
    stamp = luw.Col("S", "TIMESTAMP")
    day = moment.date()
    assert values.packed_date(luw.encode_value(date, day, bo)) == luw.render(date, day)
    assert values.packed_time(luw.encode_value(time, moment.time(), bo)) == luw.render(time, moment)
    assert values.packed_timestamp(luw.encode_value(stamp, moment, bo)) == luw.render(stamp, moment)


@fuzz(300)
@given(
    st.tuples(
        st.integers(0, 9999), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
        st.integers(0, 59), st.integers(0, 59), st.integers(0, 10**9 - 1),
    )
)  # fmt: skip
def test_solid_datetime_round_trip(parts):
    year, month, day, hour, minute, second, _nanos = parts
    column = solid.GenColumn("X", "TIMESTAMP")
    raw = solid.encode_value(parts, "TIMESTAMP", None)
    assert values.datetime11_text(raw, "TIMESTAMP") == solid.render(parts, column)
    assert values.datetime11_text(raw, "DATE") == f"{year:04d}-{month:02d}-{day:02d}"
    assert values.datetime11_text(raw, "TIME") == f"{hour:02d}:{minute:02d}:{second:02d}"


@fuzz(300)
@given(st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-10**14,
                   max_value=10**14), st.randoms(use_true_random=False))  # fmt: skip
def test_decimal_text_round_trip(value, rng):
    column = solid.GenColumn("N", "NUMERIC", precision=20, scale=4)
    text = solid.encode_value(value, "NUMERIC", rng).decode("ascii")
    assert values.decimal_text(text, 4) == solid.render(value, column)


@fuzz(300)
@given(st.floats(allow_nan=False), st.floats(width=32, allow_nan=False))
def test_ieee_round_trip(double, single):
    assert values.render_float(values.ieee_float(struct.pack(">d", double))) == repr(double)
    assert values.render_float(values.ieee_float(struct.pack("<d", double), "little")) == repr(
        double
    )
    text = values.render_float(values.ieee_float(struct.pack(">f", single)), single=True)
    assert np.float32(text) == np.float32(single) or math.isinf(single)

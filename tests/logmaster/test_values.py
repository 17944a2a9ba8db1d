"""Shared value decoders against the specs' own examples and hand-made bytes."""

import math

import numpy as np
import pytest

from udfs import batch_values as bv
from udfs import values
from udfs.errors import DecodeError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # 000_/003_ footnote: non-extended LRSN X'CA670FBBF3D3' -> X'00CA670FBBF3D3000000'
        ("CA670FBBF3D3", "00CA670FBBF3D3000000"),
        ("00CA670FBBF3D3000000", "00CA670FBBF3D3000000"),
    ],
)
def test_lrsn_six_byte_form_sits_at_offset_one(raw, expected):
    assert values.lrsn_hex(bytes.fromhex(raw)) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # footnote: non-extended RBA X'123456789ABC' -> X'00000000123456789ABC'
        ("123456789ABC", "00000000123456789ABC"),
        ("00000000123456789ABC", "00000000123456789ABC"),
    ],
)
def test_rba_six_byte_form_sits_at_offset_four(raw, expected):
    assert values.rba_hex(bytes.fromhex(raw)) == expected


def test_rba_of_wrong_length_is_a_decode_error():
    with pytest.raises(DecodeError, match="6 or 10 bytes"):
        values.rba_hex(b"\x00" * 8)


@pytest.mark.parametrize(
    ("raw", "scale", "expected"),
    [
        ("12345C", 2, "123.45"),
        ("0527500C", 2, "5275.00"),
        ("001D", 2, "-0.01"),
        ("001B", 2, "-0.01"),  # B is negative too
        ("12345F", 0, "12345"),  # F is positive (unsigned)
        ("0000000C", 2, "0.00"),
        ("9999999999999999999999999999999D", 0, "-" + "9" * 31),  # DEC(31) needs big ints
    ],
)
def test_packed_decimal(raw, scale, expected):
    assert values.packed_decimal(bytes.fromhex(raw), scale) == expected


@pytest.mark.parametrize("raw", ["1234", "1A3C", ""])
def test_packed_decimal_rejects_bad_nibbles(raw):
    with pytest.raises(DecodeError):
        values.packed_decimal(bytes.fromhex(raw), 0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("41100000", 1.0),  # IBM's textbook examples of HFP short
        ("C276A000", -118.625),
        ("00000000", 0.0),
        ("4110000000000000", 1.0),
        ("42640000", 100.0),
        ("40800000", 0.5),
        ("3F100000", 16.0**-2),
    ],
)
def test_hfp_float(raw, expected):
    assert values.hfp_float(bytes.fromhex(raw)) == expected


def test_hfp_long_keeps_56_bits():
    # 0.1 in HFP long: X'401999999999999A'
    assert math.isclose(values.hfp_float(bytes.fromhex("401999999999999A")), 0.1, rel_tol=1e-15)


@pytest.mark.parametrize(
    ("value", "single", "expected"),
    [
        (1500.5, False, "1500.5"),
        (1.0, False, "1.0"),
        (0.1, False, "0.1"),
        (float.fromhex("0x1.99999ap-4"), True, "0.1"),  # float32 0.1 reads as 0.1
        (1e300, True, "1e+300"),  # beyond float32: double text
    ],
)
def test_render_float_is_shortest_round_trip(value, single, expected):
    assert values.render_float(value, single) == expected


# Issue 14 item 11: HFP short values below 2**-126, where float32 is subnormal. Each vector's
# exact value is worked by hand: 0.fraction(hex) * 16**(exponent - 64).
TINY_HFP_SHORT = [
    ("1B800000", math.ldexp(1, -149), "1.401298464324817e-45"),  # 0.8 * 16**-37 = 2**-149
    ("20FFFFF8", math.ldexp(0xFFFFF8, -152), "2.9387344757572544e-39"),  # 2**-128 - 2**-149
    ("9B800000", -math.ldexp(1, -149), "-1.401298464324817e-45"),  # the sign bit
    ("21100000", math.ldexp(1, -128), "2.938735877055719e-39"),  # 0.1 * 16**-31 = 16**-32
    ("1B100001", math.ldexp(0x100001, -172), None),  # 21 significant bits, far below 2**-149
    ("00100000", math.ldexp(1, -260), None),  # the smallest normalised HFP short, 16**-65
]


@pytest.mark.parametrize(("raw", "exact", "text"), TINY_HFP_SHORT)
def test_tiny_hfp_short_reads_back_exactly(raw, exact, text):
    value = values.hfp_float(bytes.fromhex(raw))
    assert value == exact
    rendered = values.render_float(value, single=True)
    assert float(rendered) == exact  # '1e-45' would read back 29% off
    if text is not None:
        assert rendered == text


@pytest.mark.parametrize(("raw", "exact", "text"), TINY_HFP_SHORT)
def test_tiny_hfp_short_batch_agrees_with_scalar(raw, exact, text):
    matrix = np.frombuffer(bytes.fromhex(raw), np.uint8).reshape(1, 4)
    texts, bad = bv.float_strings(bv.hfp_floats(matrix), single=True)
    assert not bad.any()
    assert texts.to_pylist() == [values.render_float(exact, single=True)]


def test_smallest_normal_float32_keeps_its_short_text():
    # X'21400000' = 0.4 * 16**-31 = 2**-126: a normal float32, so the float32 text stays.
    value = values.hfp_float(bytes.fromhex("21400000"))
    assert value == math.ldexp(1, -126)
    assert values.render_float(value, single=True) == "1.1754944e-38"


def test_bin17_timestamp():
    raw = bytes.fromhex("20240506070809123456789012" + "00000000")
    assert values.bin17_timestamp(raw) == "2024-05-06 07:08:09.123456789012"


def test_bin17_zero_timestamp_is_none():
    assert values.bin17_timestamp(bytes(17)) is None


def test_bin17_rejects_month_13():
    with pytest.raises(DecodeError, match="not a valid date"):
        values.bin17_timestamp(bytes.fromhex("20241306070809" + "00" * 10))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("007", 7), ("-0001", -1), ("   -1", -1), ("   ", None), ("00037", 37)],
)
def test_char_numbers(text, expected):
    assert values.char_int(text.encode("cp037")) == expected


def test_char_number_with_letters_is_a_decode_error():
    with pytest.raises(DecodeError):
        values.char_int("0A1".encode("cp037"))


@pytest.mark.parametrize(
    ("function", "text", "expected"),
    [
        (values.date_text, "2024-02-29", "2024-02-29"),
        (values.time_text, "13.32.00", "13:32:00"),
        (values.time_text, "13:32:00", "13:32:00"),
        (values.timestamp_text, "2024-01-31-13.45.07.123456", "2024-01-31 13:45:07.123456"),
        (values.timestamp_text, "2024-01-31-13.45.07", "2024-01-31 13:45:07"),
        (values.timestamp_text, "2024-01-31 13:45:07.1", "2024-01-31 13:45:07.1"),
        (
            values.timestamp_text,
            "2024-01-31-13.45.07.123456+01:00",
            "2024-01-31 13:45:07.123456+01:00",
        ),
    ],
)
def test_character_dates_and_times(function, text, expected):
    assert function(text) == expected


@pytest.mark.parametrize(
    ("function", "text"),
    [
        (values.date_text, "2023-02-29"),
        (values.date_text, "2024/01/01"),
        (values.time_text, "25.00.00"),
        (values.timestamp_text, "2024-01-31-13.61.07"),
    ],
)
def test_bad_dates_and_times(function, text):
    with pytest.raises(DecodeError):
        function(text)


def test_ebcdic_codec_from_ccsid():
    assert values.ebcdic_codec("00037") == "cp037"
    assert values.ebcdic_codec(500) == "cp500"
    assert values.ebcdic_codec("") == "cp037"
    assert values.ebcdic_codec(930) == "cp037"  # no Python codec: default

"""Control file records decoded from bytes laid out by hand at the spec's hex offsets."""

import pytest

from tests.logmaster.handmade import Record
from udfs.errors import DecodeError
from udfs.logmaster.control import control_codec, decode_control_record, header_layout_from_xhdf
from udfs.logmaster.layouts import CONTROL_LAYOUTS, DLCI, DTBI, LLDF_HEADER


def dtbi_record(size: int = 705) -> Record:
    r = Record(size)
    r.char(0x00, "DTBI").char(0x04, "DB2A").char(0x08, "0104").char(0x0C, "0002")
    r.char(0x10, "0003").char(0x14, "TB").char(0x16, "007").char(0x19, "00321")
    r.char(0x1E, "007").char(0x21, "00400").char(0x26, "V").char(0x27, "001")
    r.hexa(0x2A, "00CA670FBBF3D3000000")  # CREATERBA
    r.hexa(0x34, "0000")  # reserved: hex 0x34 (README interpretation 2)
    r.hexa(0x36, "00000000000000000000")  # DROPRBA at 0x36
    r.hexa(0x40, "0000")
    r.char(0x42, "E").char(0x43, "000").char(0x5E, "005").char(0x61, "DBPAY")
    r.char(0x79, "005").char(0x7C, "TSPAY")
    r.char(0x94, "012").char(0x97, "PAYROLL_OWNR")  # a long owner (> 8)
    r.char(0x117, "PAYROLL_")  # SHORTOWNER
    r.char(0x11F, "025").char(0x122, "CUSTOMER_ORDER_HISTORY_X")  # a long name (> 18)
    r.char(0x1A2, "CUSTOMER_ORDER0001")  # SHORTNAME
    r.char(0x1B4, "002").char(0x1B7, "N").char(0x1B8, "000")
    r.char(0x23B, "Y").char(0x23C, "006")
    r.raw(0x23F, "Größe¹".encode()[:6].ljust(128, b" "))  # UNITABLENAME: UTF-8
    r.char(0x2BF, "Y")  # LOBSINCLUDED
    if size > 704:
        r.char(0x2C0, "N")  # XMLINCLUDED
    return r


def test_dtbi_fields_at_their_hex_offsets():
    record_type, fields = decode_control_record(dtbi_record().bytes(), "cp037")
    assert record_type == "DTBI"
    assert fields["dbid"] == "0104" and fields["tbobid"] == "0003"
    assert fields["db2numcol"] == 7 and fields["llmaxrowlen"] == 400
    assert fields["createrba"] == "00CA670FBBF3D3000000"
    assert fields["droprba"] == "00000000000000000000"
    assert fields["encodingscheme"] == "E"
    assert fields["tableownerlen"] == 12 and fields["tableowner"] == "PAYROLL_OWNR"
    assert fields["shortowner"] == "PAYROLL_"
    assert fields["tablename"] == "CUSTOMER_ORDER_HISTORY_X"
    assert fields["shortname"] == "CUSTOMER_ORDER0001"
    assert fields["version"] == 2
    assert fields["untrannameflag"] == "Y"
    assert fields["unitablename"].startswith("Größ")
    assert fields["lobsincluded"] == "Y"
    assert fields["xmlincluded"] == "N"


def test_dtbi_of_704_bytes_has_no_xmlincluded():
    # README interpretation 1: the table says 704 but XMLINCLUDED sits at 704.
    _, fields = decode_control_record(dtbi_record(704).bytes(), "cp037")
    assert fields["xmlincluded"] is None
    assert fields["lobsincluded"] == "Y"


def test_dlci_fields_at_their_offsets():
    r = Record(193)
    r.char(0x00, "DLCI").char(0x04, "DB2A").char(0x08, "0104").char(0x0C, "0003")
    r.char(0x10, "002").char(0x13, "VCHR").char(0x17, "00040").char(0x1C, "00")
    r.char(0x1E, "Y").char(0x1F, "   -1").char(0x24, "S").char(0x25, "001").char(0x28, "A")
    r.char(0x29, "00042").char(0x2E, "00040").char(0x33, "00042").char(0x38, "001")
    r.char(0x3B, "008").char(0x3E, "CUSTNAME").char(190, "002")
    _, fields = decode_control_record(r.bytes(), "cp037")
    assert fields["llcolumnnum"] == 2
    assert fields["llcolumntype"] == "VCHR"
    assert fields["llcolumnlen"] == 40
    assert fields["llscale"] == 0
    assert fields["llnulls"] == "Y"
    assert fields["llcolumnpos"] == -1
    assert fields["llcolumnsubtype"] == "S"
    assert fields["keyseq"] == 1 and fields["keyordering"] == "A"
    assert fields["loglogbytes"] == 42
    assert fields["columnnamelen"] == 8 and fields["columnname"] == "CUSTNAME"
    assert fields["version"] == 2  # at decimal 190, not hex B4 (README interpretation 2)


# Issue 14 item 1: the spec's VERSION row reads "190 | B4". COLUMNNAME CHAR(128) from 62 (x'3E')
# ends at 190, VERSION CHAR(3) ends at the total 193 (x'C1'): decimal 190 is right.
LONGEST_NAME = "C" * 60 + "_LONG_" + "N" * 60 + "_END"  # 128 characters


@pytest.mark.parametrize("length", [118, 119, 127, 128])
def test_dlci_column_names_up_to_128_characters_come_back_whole(length):
    name = LONGEST_NAME[: length - 4] + LONGEST_NAME[-4:]
    r = Record(193).char(0, "DLCI").char(16, "001").char(19, "CHAR").char(23, "00010")
    r.char(59, f"{length:03d}").char(62, name).char(190, "007")
    _, fields = decode_control_record(r.bytes(), "cp037")
    assert fields["columnnamelen"] == length
    assert fields["columnname"] == name
    assert fields["version"] == 7


def test_dlci_version_blank_is_none_and_letters_are_not_a_number():
    base = Record(193).char(0, "DLCI").char(16, "001").char(19, "INT ").char(59, "001")
    _, fields = decode_control_record(base.char(62, "A").bytes(), "cp037")
    assert fields["version"] is None
    with pytest.raises(DecodeError, match="is not a number"):
        decode_control_record(base.char(190, "V1 ").bytes(), "cp037")


def test_xtyp_xhdf_dlds_dlge():
    xtyp = Record(66).char(0, "XTYP").char(4, "DB2").char(8, "V13").char(14, "DB2A")
    xtyp.char(18, ";").char(19, "N").char(20, ".").char(21, "00037").char(51, "01208")
    _, fields = decode_control_record(xtyp.bytes(), "cp037")
    assert fields["ebcdicsbcsccsid"] == 37 and fields["unicodesbcsccsid"] == 1208
    assert fields["sysid"] == "DB2A" and fields["decimalpoint"] == "."

    xhdf = Record(37).char(0, "XHDF").char(4, "CHANGE TYPE").char(22, "CHAR")
    xhdf.char(26, " ").char(27, "00002").char(32, "00104")
    _, fields = decode_control_record(xhdf.bytes(), "cp037")
    assert (fields["fieldname"], fields["fieldlength"], fields["fieldoffset"]) == (
        "CHANGE TYPE",
        2,
        104,
    )

    dlds = Record(64).char(0, "DLDS").char(4, "LOGM.EXTRACT1.DATA").char(48, "VB ")
    dlds.char(51, "DB2I").char(59, "N").char(60, "Y")
    _, fields = decode_control_record(dlds.bytes(), "cp037")
    assert fields["datasetname"] == "LOGM.EXTRACT1.DATA" and fields["segmented"] == "Y"

    dlge = Record(48, fill=b"\x00").char(0, "DLGE").hexa(4, "00000000000012345678")
    dlge.hexa(16, "2024050607080900000000000000000000")
    _, fields = decode_control_record(dlge.bytes(), "cp037")
    assert fields["endrba"] == "00000000000012345678"
    assert fields["endtime"] == "2024-05-06 07:08:09.000000000000"


def test_ascii_control_file():
    xtyp = Record(66, fill=b" ", codec="ascii").char(0, "XTYP").char(21, "00037")
    assert control_codec(xtyp.bytes()) == "ascii"
    _, fields = decode_control_record(xtyp.bytes(), "ascii")
    assert fields["ebcdicsbcsccsid"] == 37


def test_unknown_record_type_is_kept_not_an_error():
    assert decode_control_record("DICL".encode("cp037") + bytes(20), "cp037") == ("DICL", None)


def test_short_record_says_how_long_it_should_be():
    with pytest.raises(DecodeError, match="DLCI record is 100 bytes; its layout needs 193"):
        decode_control_record(Record(100).char(0, "DLCI").bytes(), "cp037")


def test_data_record_is_not_a_control_record():
    assert control_codec(b"\x01\x20\xc4\xc2") is None


def test_layout_sizes_match_the_spec_totals():
    assert DLCI.sizeof() == 193  # (Total Length) 193
    assert LLDF_HEADER.sizeof() == 288  # DATA at 288 (x'120')
    assert {name: CONTROL_LAYOUTS[name].sizeof() for name in ("XTYP", "XHDF", "DLDS", "DLGE")} == {
        "XTYP": 66,
        "XHDF": 37,
        "DLDS": 64,
        "DLGE": 48,
    }
    assert len(DTBI.build(DTBI.parse(dtbi_record().bytes()))) == 705


@pytest.mark.parametrize("size", [704, 705])
def test_dtbi_round_trips(size):
    # construct's own check, the other way round: build(parse(bytes)) == bytes.
    raw = dtbi_record(size).bytes()
    parsed = DTBI.parse(raw)
    rebuilt = DTBI.build(parsed)
    assert rebuilt[:704] == raw[:704]


def test_xhdf_moves_a_header_field():
    layout = header_layout_from_xhdf(
        [
            {"fieldname": "LENGTH", "fieldlength": 2, "fieldoffset": 0},
            {"fieldname": "CHANGE TYPE", "fieldlength": 2, "fieldoffset": 300},
            {"fieldname": "NEWFIELD", "fieldlength": 4, "fieldoffset": 302},
            {"fieldname": "LOGRBA", "fieldlength": 6, "fieldoffset": 87},
        ]
    )
    by_name = {spec.name: spec for spec in layout.fields}
    assert by_name["CHANGE_TYPE"].offset == 300
    assert by_name["LOGRBA"].width == 6
    assert layout.width == 302
    assert any("NEWFIELD" in note for note in layout.notes)


def test_control_file_without_xtyp_or_xhdf_uses_the_documented_header(tmp_path):
    from tests.logmaster.handmade import rdw
    from udfs.logmaster.control import DOCUMENTED_LAYOUT, summarize_control_file

    path = tmp_path / "control"
    path.write_bytes(rdw(dtbi_record().bytes()))
    summary = summarize_control_file(path)
    assert summary.header == DOCUMENTED_LAYOUT and summary.codec == "cp037"
    assert summarize_control_file(None).header.source == "documented"


def test_xtyp_ccsid_sets_the_code_page_of_later_records(tmp_path):
    from tests.logmaster.handmade import rdw
    from udfs.logmaster.control import read_control_file, summarize_control_file

    xtyp = Record(66).char(0, "XTYP").char(21, "00500")
    # '[' is x'4A' in cp500 but x'BA' in cp037: the DLCI name shows which code page was used.
    dlci = Record(193).char(0, "DLCI").char(0x10, "001").char(0x13, "CHAR").char(0x3B, "003")
    dlci.raw(0x3E, b"\xc1\x4a\xc2")
    path = tmp_path / "control"
    path.write_bytes(rdw(xtyp.bytes()) + rdw(dlci.bytes()))
    records = list(read_control_file(path, "cp037"))
    assert records[1].fields["columnname"] == "A[B"
    assert summarize_control_file(path).codec == "cp500"

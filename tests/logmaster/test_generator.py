"""The Log Master generator, read back by a tiny reader written here from the spec tables.

The reader below uses the spec's offsets typed in again (decimal column where it agrees with
hex; DLCI VERSION at decimal 190, after COLUMNNAME CHAR(128) from 62), not the generator's
constants, so a wrong offset in the generator
fails here instead of round-tripping.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from logmart_generators import logmaster as g

# --- the independent reader ----------------------------------------------------------------------


def frames(path: Path) -> list[tuple[int, bytes]]:
    """(offset, record) of every RDW-framed record; the whole file must be consumed."""
    raw, out, pos = path.read_bytes(), [], 0
    while pos < len(raw):
        length, zero = struct.unpack_from(">HH", raw, pos)
        assert zero == 0 and length > 4 and pos + length <= len(raw), (path.name, pos)
        out.append((pos, raw[pos + 4 : pos + length]))
        pos += length
    return out


def e(raw: bytes) -> str:
    return raw.decode("cp037")


def cnum(raw: bytes) -> int:
    return int(e(raw))


def read_dtbi(r: bytes) -> dict:
    return {
        "dbid": int(e(r[8:12]), 16), "tbobid": int(e(r[16:20]), 16), "encoding": e(r[66:67]),
        "owner": e(r[151 : 151 + cnum(r[148:151])]), "short_owner": e(r[279:287]).rstrip(),
        "name": e(r[290 : 290 + cnum(r[287:290])]), "short_name": e(r[418:436]).rstrip(),
        "ncols": cnum(r[30:33]), "lobs": e(r[703:704]), "xml": e(r[704:705]),
    }  # fmt: skip


def read_dlci(r: bytes) -> dict:
    return {
        "dbid": int(e(r[8:12]), 16), "tbobid": int(e(r[12:16]), 16), "num": cnum(r[16:19]),
        "type": e(r[19:23]).strip(), "len": cnum(r[23:28]), "scale": cnum(r[28:30]),
        "nulls": e(r[30:31]), "pos": cnum(r[31:36]), "subtype": e(r[36:37]),
        "keyseq": cnum(r[37:40]), "name": e(r[62 : 62 + cnum(r[59:62])]),
        "version": e(r[190:193]), "size": len(r),
    }  # fmt: skip


def read_control(path: Path) -> dict:
    kinds, tables, xhdf, skipped = [], {}, {}, []
    for _, r in frames(path):
        kind = e(r[:4])
        kinds.append(kind)
        if kind == "DTBI":
            t = read_dtbi(r)
            tables[(t["dbid"], t["tbobid"])] = {**t, "columns": []}
        elif kind == "DLCI":
            c = read_dlci(r)
            tables[(c["dbid"], c["tbobid"])]["columns"].append(c)
        elif kind == "XHDF":
            xhdf[e(r[4:22]).rstrip()] = (cnum(r[32:37]), cnum(r[27:32]), e(r[22:26]).strip())
        elif kind not in ("XTYP", "DLDS", "DLGE"):
            skipped.append(kind)  # unknown control record: skip it, say so
    return {"kinds": kinds, "tables": tables, "xhdf": xhdf, "skipped": skipped}


def bin17(raw: bytes) -> str | None:
    if not any(raw):
        return None
    d = raw.hex()
    return f"{d[0:4]}-{d[4:6]}-{d[6:8]} {d[8:10]}:{d[10:12]}:{d[12:14]}.{d[14:26]}"


def read_header(r: bytes) -> dict:
    u = lambda at: struct.unpack_from(">H", r, at)[0]  # noqa: E731
    return {
        "length": u(0), "dbid": u(6), "tbobid": u(10), "ownerlen": u(12), "namelen": u(14),
        "owner": e(r[32:40]).rstrip(), "name": e(r[40:58]).rstrip(), "timestamp": bin17(r[60:77]),
        "log_lrsn": r[77:87].hex().upper(), "log_rba": r[87:97].hex().upper(),
        "change_type": e(r[104:106]).strip(), "disposition": e(r[107:108]).strip(),
        "commit_timestamp": bin17(r[144:161]), "uor_disposition": e(r[161:162]).strip(),
        "uoridlrsn": r[162:172].hex().upper(), "uorid": r[172:182].hex().upper(),
        "seglen": u(182), "totalsegs": u(184), "segnum": u(186),
        "commit_lrsn": r[192:202].hex().upper(), "commit_rba": r[202:212].hex().upper(),
        "authid": e(r[234:242]).rstrip(), "partnum": u(58),
    }  # fmt: skip


def hfp_value(raw: bytes) -> float:
    if not any(raw):
        return 0.0
    fraction = Fraction(int.from_bytes(raw[1:], "big"), 1 << (8 * len(raw) - 8))
    value = float(fraction * Fraction(16) ** ((raw[0] & 0x7F) - 64))
    return -value if raw[0] & 0x80 else value


def packed_text(raw: bytes, scale: int) -> str:
    digits = raw.hex()[:-1]
    sign = "-" if raw.hex()[-1] in "db" else ""
    whole = str(int(digits))
    if scale:
        whole = whole.rjust(scale + 1, "0")
        whole = whole[:-scale] + "." + whole[-scale:]
    return sign + whole if int(digits) else whole


def render(col: dict, raw: bytes, text_codec: str) -> str:
    kind = col["type"]
    if kind == "INT":
        return str(int.from_bytes(raw, "big", signed=True))
    if kind == "DEC":
        return packed_text(raw, col["scale"])
    if kind == "FLOT":
        value = hfp_value(raw)
        return str(np.float32(value)) if len(raw) == 4 else repr(value)
    if col["subtype"] == "B" or kind in ("ROWI", "BLOB"):
        return raw.hex().upper()
    if kind in ("GRPH", "VGRF", "LVGR"):
        return raw.decode("utf-16-be")
    text = raw.decode(text_codec)
    if kind == "TIME":
        return text.replace(".", ":")
    if kind in ("DTTM", "DTTZ"):
        return f"{text[:10]} {text[11:19].replace('.', ':')}{text[19:]}"
    return text


def read_image(image: bytes, table: dict) -> tuple[dict, list[int]]:
    """Row image -> rendered values, plus each column's start offset."""
    codec = "utf-8" if table["encoding"] == "U" else "cp037"
    values, starts, pos = {}, [], 0
    for index, col in enumerate(table["columns"]):
        if index and pos == len(image):
            # a row written before ALTER TABLE ADD COLUMN: its image ends at a column boundary
            # before the added columns (docs/logmaster.md "Row images")
            values[col["name"]] = None
            table.setdefault("added", []).append(col["name"])
            continue
        starts.append(pos)
        null = False
        if col["nulls"] in ("Y", "L"):
            assert image[pos] in (0x00, 0xFF)
            null, pos = image[pos] == 0xFF, pos + 1
        if col["type"] in ("VCHR", "VGRF", "LVCH", "LVGR", "ROWI", "BLOB", "CLOB", "XML"):
            length = struct.unpack_from(">H", image, pos)[0]
            pos += 2
            if col["type"] in ("VGRF", "LVGR"):
                length *= 2  # counted in double-byte characters
        else:
            length = col["len"]
        raw, pos = image[pos : pos + length], pos + length
        assert not null or not any(raw)
        if col["type"] in ("BLOB", "CLOB") and table["lobs"] == "N" and not null:
            # 000_… LOBSINCLUDED "N - LOBs excluded from output files": null byte x'00', no data
            assert raw == b""
            values[col["name"]] = None
            table.setdefault("excluded", []).append((col["name"], "not_logged_lob"))
            continue
        if col["type"] == "XML" and table["xml"] == "N" and not null:
            # DTBI XMLINCLUDED N: likewise, a present XML value has no data in the image
            assert raw == b""
            values[col["name"]] = None
            table.setdefault("excluded", []).append((col["name"], "not_logged_xml"))
            continue
        values[col["name"]] = None if null else render(col, raw, codec)
    assert pos == len(image)
    return values, starts


def read_data(data: bytes, change_type: str, table: dict) -> dict:
    assert struct.unpack_from(">H", data)[0] == len(data)
    out: dict = {"before": None, "after": None, "text": None, "clone": None}
    if change_type in ("CO", "CM", "SC"):
        n = struct.unpack_from(">H", data, 2)[0]
        out["text"] = e(data[4 : 4 + n])
        assert len(data) == 4 + n
    elif change_type == "E":
        n = struct.unpack_from(">H", data, 2)[0]
        m = struct.unpack_from(">H", data, 4 + n)[0]
        out["clone"] = (e(data[4 : 4 + n]), e(data[6 + n : 6 + n + m]))
    elif change_type == "DM" and data != b"\x00\x02":
        # LOAD REPLACE of one partition: the low and high limit keys, each the leading key
        # columns (KEYSEQ order) as a row image holds them (docs/logmaster.md)
        key = sorted((c for c in table["columns"] if c["keyseq"]), key=lambda c: c["keyseq"])
        images, pos = [], 2
        while pos < len(data):
            n = struct.unpack_from(">H", data, pos)[0]
            images.append(data[pos + 2 : pos + 2 + n])
            pos += 2 + n
        assert len(images) == 2
        limits = []
        for image in images:
            columns = key[: 1 if image else 0]  # the generator's limit keys hold one column
            values, _ = read_image(image, {**table, "columns": columns})
            limits.append(list(values.values()))
        out["limits"] = limits
    elif change_type in ("DM", "DT", "DR"):
        assert data == b"\x00\x02"
    else:
        images, pos = [], 2
        while pos < len(data):
            n = struct.unpack_from(">H", data, pos)[0]
            images.append(data[pos + 2 : pos + 2 + n])
            pos += 2 + n
        names = {"UB": ["before", "after"], "D": ["before"]}.get(change_type, ["after"])
        assert len(images) == len(names)
        for name, image in zip(names, images, strict=True):
            seen = {**table, "excluded": [], "added": []}
            out[name], starts = read_image(image, seen)
            out[f"{name}_unavailable"] = {
                **dict(seen["excluded"]),
                **dict.fromkeys(seen["added"], "added_after_row"),
            }
            out.setdefault("starts", []).append(starts)
    return out


def read_change(folder: Path, locations: list, control: dict, cache: dict) -> dict:
    """Decode one logical change from its record location(s), segments in order."""
    headers, pieces = [], []
    for name, offset in locations:
        if name not in cache:
            cache[name] = dict(frames(folder / name))
        record = cache[name][offset]
        header = read_header(record)
        assert header["length"] == 288 and header["seglen"] == len(record) - 288
        headers.append(header)
        pieces.append(record[288:])
    first = headers[0]
    assert [h["segnum"] for h in headers] == list(range(1, len(headers) + 1))
    assert all(h["totalsegs"] == len(headers) for h in headers)
    assert all(h["log_lrsn"] == first["log_lrsn"] for h in headers)
    table = control["tables"][(first["dbid"], first["tbobid"])]
    assert (first["owner"], first["name"]) == (table["short_owner"], table["short_name"])
    assert (first["ownerlen"], first["namelen"]) == (len(table["owner"]), len(table["name"]))
    return {**first, "table": table, **read_data(b"".join(pieces), first["change_type"], table)}


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def extract(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("lm")
    return out, g.generate(out, transactions=80, seed=7)


def folder_of(out: Path) -> Path:
    return out / "logmaster" / g.EXTRACT


def control_file(folder: Path) -> Path:
    """Tell the control file by content: its first record is XTYP."""
    found = [p for p in sorted(folder.iterdir()) if e(frames(p)[0][1][:4]) == "XTYP"]
    assert len(found) == 1
    return found[0]


def truth_lines(out: Path) -> list[dict]:
    text = (out / "truth" / "db2zos" / "changes.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


# --- encoders against known values --------------------------------------------------------------


def test_hfp_known_values():
    assert g.hfp(1.0, 4).hex().upper() == "41100000"
    assert g.hfp(-118.625, 4).hex().upper() == "C276A000"
    assert g.hfp(1.0, 8).hex().upper() == "4110000000000000"
    assert g.hfp(0.0, 4) == bytes(4)
    assert g.hfp(1500.5, 8).hex().upper() == "435DC80000000000"
    with pytest.raises(ValueError):
        g.hfp(0.1, 4)


def test_packed_decimal():
    assert g.packed(12345, 3).hex().upper() == "12345C"  # 123.45, scale 2
    assert g.packed(-1, 2).hex().upper() == "001D"  # -0.01
    assert g.packed(7, 1, plus_sign=0xF).hex().upper() == "7F"
    with pytest.raises(ValueError):
        g.packed(1000, 2)


def test_rba_and_lrsn_from_six_bytes_as_the_spec_footnote():
    assert g.lrsn_from_6(bytes.fromhex("CA670FBBF3D3")).hex().upper() == "00CA670FBBF3D3000000"
    assert g.rba_from_6(bytes.fromhex("123456789ABC")).hex().upper() == "00000000123456789ABC"


def test_bin17_and_char_numbers():
    stamp = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)
    assert g.bin17(stamp).hex() == "20240506070809" + "123456000000" + "0" * 8
    assert g.bin17(None) == bytes(17)
    assert e(g.num(7, 3)) == "007" and e(g.num(-1, 5)) == "   -1"
    assert e(g.hexid(0x0104)) == "0104"


def test_float_values_are_exact_and_render_like_numpy():
    import random

    rng = random.Random(3)
    for single in (True, False):
        for _ in range(300):
            value = g._float(rng, single)
            size = 4 if single else 8
            assert hfp_value(g.hfp(value, size)) == value and value != int(value)
            if single:
                assert g.float32_text(value) == str(np.float32(value))


# --- the generated extract ------------------------------------------------------------------------


def test_same_seed_same_bytes(tmp_path, extract):
    out, _ = extract
    again = g.generate(tmp_path, transactions=80, seed=7)
    for path in sorted(folder_of(out).iterdir()):
        assert (folder_of(tmp_path) / path.name).read_bytes() == path.read_bytes(), path.name
    for name in ("tables.json", "changes.jsonl", "summary.json"):
        truth = out / "truth" / "db2zos" / name
        assert (tmp_path / "truth" / "db2zos" / name).read_bytes() == truth.read_bytes()
    assert again == json.loads((out / "truth" / "db2zos" / "summary.json").read_text())
    other = g.generate(tmp_path / "other", transactions=80, seed=8)
    assert other != again


def test_control_file(extract):
    out, summary = extract
    folder = folder_of(out)
    control = read_control(control_file(folder))
    kinds = control["kinds"]
    assert kinds[0] == "XTYP" and kinds[-1] == "DLGE" and control["skipped"] == ["DICL"]
    assert kinds.index("DLDS") > kinds.index("XHDF") and kinds.count("DTBI") == 8
    assert len(control["tables"]) == 8
    for table in control["tables"].values():
        assert table["ncols"] == len(table["columns"])
        assert [c["num"] for c in table["columns"]] == list(range(1, table["ncols"] + 1))
        assert any(c["keyseq"] for c in table["columns"])
        # LOBs excluded from one table's output (issue 14 item 9), included everywhere else
        assert table["lobs"] == ("N" if table["name"] == "DOCUMENT_NOTE" else "Y")
        assert table["xml"] == "N"
    columns = [c for t in control["tables"].values() for c in t["columns"]]
    assert all(c["size"] == 193 and c["version"].isdigit() for c in columns)
    assert max(len(c["name"]) for c in columns) == 128  # a whole COLUMNNAME CHAR(128)
    long = [t for t in control["tables"].values() if len(t["name"]) > 18]
    assert long and long[0]["short_name"] == long[0]["name"][:14] + "0001"
    assert len(long[0]["owner"]) > 8 and long[0]["short_owner"] == long[0]["owner"][:8]
    xtyp = frames(control_file(folder))[0][1]
    assert e(xtyp[21:26]) == "00037" and len(xtyp) == 66
    assert summary["files"][control_file(folder).name]["kind"] == "control"


def test_xhdf_describes_the_header_the_reader_uses(extract):
    out, _ = extract
    xhdf = read_control(control_file(folder_of(out)))["xhdf"]
    expected = {  # spec table, decimal offsets: (offset, length)
        "LENGTH": (0, 2), "DBID": (6, 2), "TBOBID": (10, 2), "TABLEOWNER": (32, 8),
        "TABLENAME": (40, 18), "TIMESTAMP": (60, 17), "LOGLRSN": (77, 10), "LOGRBA": (87, 10),
        "CHANGE TYPE": (104, 2), "LOGRECDISP": (107, 1), "UORDISP": (161, 1),
        "UORID": (172, 10), "SEGLEN": (182, 2), "TOTALSEGS": (184, 2), "SEGNUM": (186, 2),
        "UORCOMMITLRSN": (192, 10), "UORCOMMITPOINT": (202, 10), "PAGENUMFMT": (287, 1),
    }  # fmt: skip
    assert {name: xhdf[name][:2] for name in expected} == expected
    assert len(xhdf) == 50 and sum(length for _, length, _ in xhdf.values()) == 288 - 4


def test_every_record_is_framed_and_every_change_reads_back(extract):
    out, summary = extract
    folder = folder_of(out)
    control = read_control(control_file(folder))
    data_files = [p for p in sorted(folder.iterdir()) if p != control_file(folder)]
    assert len(data_files) >= 2
    seen = {p.name: {offset for offset, _ in frames(p)} for p in data_files}
    assert {n: len(s) for n, s in seen.items()} == {n: summary["records_per_file"][n] for n in seen}
    cache: dict = {}
    used = set()
    for line in truth_lines(out):
        got = read_change(folder, line["records"], control, cache)
        used.update((name, offset) for name, offset in line["records"])
        for key in ("change_type", "disposition", "uor_disposition", "log_lrsn", "log_rba",
                    "uorid", "uoridlrsn", "commit_lrsn", "commit_rba", "timestamp",
                    "commit_timestamp", "before", "after", "text", "authid"):  # fmt: skip
            assert got[key] == line[key], (key, line["log_lrsn"])
        for key in ("before_unavailable", "after_unavailable"):  # LOBs the log does not carry
            assert got.get(key) == line[key], (key, line["log_lrsn"])
        assert (got["table"]["owner"], got["table"]["name"]) == (
            line["table_owner"],
            line["table_name"],
        )
        if line["change_type"] == "E":
            assert list(got["clone"]) == [line["clone_owner"], line["clone_name"]]
        if "partition" in line:
            part = line["partition"]
            assert got["limits"] == [part["low"], part["high"]]
            assert got["partnum"] == part["partnum"]
        else:
            assert "limits" not in got and got["partnum"] == 1
        for starts in got.get("starts", []):
            check_llcolumnpos(got["table"]["columns"], starts)
    assert used == {(n, o) for n, offsets in seen.items() for o in offsets}


def check_llcolumnpos(columns: list[dict], starts: list[int]) -> None:
    first_varying = next(
        (i for i, c in enumerate(columns) if c["type"] in ("VCHR", "VGRF", "LVCH", "LVGR",
                                                          "ROWI", "BLOB", "CLOB", "XML")),
        len(columns),
    )  # fmt: skip
    # 001_… LLCOLUMNPOS: "Offset of the current column within the DATA field"; 003_… DATA
    # starts with its u16 total length, then the row image's u16 length: image offset + 4.
    # a short image (a row from before an ADD COLUMN) has no starts for the added columns
    for i, (col, start) in enumerate(zip(columns, starts, strict=False)):
        assert col["pos"] == (4 + start if i <= first_varying else -1), col["name"]


def test_features_are_all_there(extract):
    out, summary = extract
    assert set(summary["change_types"]) == {
        "I", "UB", "D", "IL", "DM", "DT", "DR", "CO", "CM", "SC", "E"
    }  # fmt: skip
    assert set(summary["dispositions"]) == {"C", "A", "S", "O", "in_flight"}
    assert set(summary["transactions"]) == {"C", "A", "in_flight"}
    assert summary["segmented_changes"] > 0
    lines = truth_lines(out)
    segmented = [x for x in lines if x["segments"] > 1]
    assert any(len({name for name, _ in x["records"]}) > 1 for x in segmented)
    in_flight = [x for x in lines if x["uor_disposition"] == ""]
    assert in_flight and all(x["commit_lrsn"] == "0" * 20 for x in in_flight)
    assert all(x["commit_timestamp"] is None for x in in_flight)
    # 6-byte-origin positions first, extended ones later
    assert lines[0]["uorid"].startswith("00000000") and lines[0]["uoridlrsn"].endswith("000000")
    assert any(x["log_rba"].startswith("00000001") for x in lines)
    text = json.dumps([x["after"] for x in lines], ensure_ascii=False)
    assert "日本" in text and "ß" in text and "é" in text


def test_commit_points_increase_in_commit_order_and_positions_within_a_ur(extract):
    out, _ = extract
    ended = [x for x in truth_lines(out) if x["uor_disposition"]]
    commits = [x["commit_lrsn"] for x in ended]
    assert commits == sorted(commits)
    by_ur: dict = {}
    for x in ended:
        by_ur.setdefault((x["uoridlrsn"], x["commit_lrsn"]), []).append(x["log_lrsn"])
    for (begin, commit), positions in by_ur.items():
        assert positions == sorted(positions) and begin < positions[0] and positions[-1] < commit


def test_truth_tables_are_the_replay_of_the_effective_changes(extract):
    out, _ = extract
    tables = json.loads((out / "truth" / "db2zos" / "tables.json").read_text(encoding="utf-8"))
    rows: dict = {name: {} for name in tables}
    effective = [x for x in truth_lines(out) if x["uor_disposition"] == "C"
                 and x["disposition"] == "C"]  # fmt: skip
    effective.sort(key=lambda x: (x["commit_lrsn"], x["log_lrsn"], x["log_rba"]))
    for x in effective:
        name = f"{x['table_owner']}.{x['table_name']}"
        key_of = lambda row: tuple(row[k] for k in tables[name]["key"])  # noqa: E731
        if "partition" in x:  # a partition-level DM empties its key range only
            part = x["partition"]
            rows[name] = {
                k: row
                for k, row in rows[name].items()
                if not in_range([row[c] for c in part["columns"]], part["low"], part["high"])
            }
        elif x["change_type"] in ("DT", "DM", "DR", "E"):
            rows[name].clear()
        if x["before"] is not None:
            rows[name].pop(key_of(x["before"]))
        if x["after"] is not None:
            rows[name][key_of(x["after"])] = x["after"]
    for name, table in tables.items():
        assert sorted(map(json.dumps, rows[name].values())) == sorted(
            map(json.dumps, table["rows"])
        ), name
    assert all(table["rows"] for table in tables.values())


def in_range(key: list[str], low: list[str], high: list[str]) -> bool:
    """Db2's ascending limit keys: above the previous limit, at or below this one (numbers)."""
    number = lambda values: [int(v) for v in values]  # noqa: E731
    return (not low or number(key) > number(low)) and (not high or number(key) <= number(high))


def test_a_partition_level_mass_delete_is_there_and_leaves_other_partitions(extract):
    out, _ = extract
    lines = truth_lines(out)
    parts = [x for x in lines if "partition" in x]
    assert parts and all(x["change_type"] == "DM" for x in parts)
    assert any(x["change_type"] == "DM" and "partition" not in x for x in lines)
    loaded = [x for x in lines if x["ur"] == parts[0]["ur"] and x["change_type"] == "IL"]
    part = parts[0]["partition"]
    assert loaded and all(
        in_range([x["after"][c] for c in part["columns"]], part["low"], part["high"])
        for x in loaded
    )


def test_benchmark_extract_reads_back(tmp_path):
    g.generate_lldf_benchmark(tmp_path, 70_000, seed=2)
    control = read_control(control_file(tmp_path))
    (table,) = control["tables"].values()
    assert table["ncols"] == 20
    data = [p for p in sorted(tmp_path.iterdir()) if p != control_file(tmp_path)]
    records = [r for p in data for _, r in frames(p)]
    assert len(records) == 70_000
    kinds = {}
    for record in records[::997] + records[-3:]:
        header = read_header(record)
        got = read_data(record[288:], header["change_type"], table)
        kinds[header["change_type"]] = got
        assert header["uor_disposition"] == "C" and header["totalsegs"] == 1
    assert set(kinds) == {"I", "UB", "D"}
    assert kinds["I"]["after"]["CURRENCY"] == "USD"

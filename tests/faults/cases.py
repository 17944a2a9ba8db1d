"""The fault matrix: one capture folder per case, each a generated capture damaged precisely.

Every case says what was done to the bytes (``damage``) and what logmart must do
(``expected``); docs/operations.md "Damaged input" lists the same table. ``make(folder,
scratch)`` writes the capture into ``folder`` (RAW/<source folder>/<case>) and returns the
facts the tests check: ``quarantined`` maps (file name, offset or row) to a piece of the reason
that record must carry; ``exact`` says no other record of the capture may be quarantined
(besides ``also`` records, e.g. the other segments of a damaged change). Each case has its own
seed, so no two files of the matrix have the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logmart_generators.db2luw import generate as generate_db2luw
from logmart_generators.logmaster import generate as generate_logmaster
from logmart_generators.soliddb import generate as generate_soliddb
from logmart_generators.soliddb import write_sys_log
from tests.faults import damage as d

Facts = dict[str, Any]


@dataclass(frozen=True)
class Case:
    name: str  # the capture folder
    source: str  # db2zos | db2luw | soliddb
    damage: str
    expected: str
    make: Callable[[Path, Path], Facts]

    @property
    def folder(self) -> str:
        return {"db2zos": "logmaster", "db2luw": "db2luw", "soliddb": "soliddb"}[self.source]


CASES: list[Case] = []


def case(name: str, source: str, damage: str, expected: str):
    def register(make: Callable[[Path, Path], Facts]) -> Callable[[Path, Path], Facts]:
        CASES.append(Case(name, source, damage, expected, make))
        return make

    return register


# --- Log Master (db2zos) ------------------------------------------------------------------------

LM_EXTRACT = "LOGM.EXTRACT1"
CONTROL = f"{LM_EXTRACT}.F0001"
DATA = [f"{LM_EXTRACT}.F000{n}" for n in (2, 3, 4)]


def logmaster(folder: Path, scratch: Path, seed: int) -> list[dict]:
    """Generate an extract into ``folder``; returns the truth's changes (with record places)."""
    generate_logmaster(scratch, 24, seed)
    shutil.copytree(scratch / "logmaster" / LM_EXTRACT, folder)
    path = scratch / "truth" / "db2zos" / "changes.jsonl"
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def other_segments(changes: list[dict], damaged: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Records of the changes that have a damaged record, other than the damaged ones."""
    out: set[tuple[str, int]] = set()
    for change in changes:
        places = {(f, o) for f, o in change["records"]}
        if places & damaged:
            out |= places - damaged
    return out


def pick(records: list[d.Record], want: Callable[[d.Record], bool], skip: int = 1) -> d.Record:
    """The first record after the first ``skip`` that ``want`` accepts."""
    return next(r for r in records[skip:] if want(r))


def unsegmented(change_types: tuple[str, ...]) -> Callable[[d.Record], bool]:
    return lambda r: d.lldf_segments(r)[0] <= 1 and d.lldf_change_type(r) in change_types


@case(
    "db2zos_clean",
    "db2zos",
    "none: the generator's extract as written (it ends with units of recovery in flight)",
    "every record decoded, nothing quarantined; the open URs are 'in_flight' with every change",
)
def _lm_clean(folder: Path, scratch: Path) -> Facts:
    changes = logmaster(folder, scratch, 101)
    in_flight = {c["uorid"] for c in changes if not c["uor_disposition"].strip()}
    return {"quarantined": {}, "exact": True, "in_flight_uorids": sorted(in_flight)}


@case(
    "db2zos_truncated",
    "db2zos",
    "F0002 cut inside its last record's DATA (mid-record); F0003 cut 100 bytes into its last "
    "LLDF header (mid-header); F0004 cut 2 bytes into its last RDW; the control file cut 20 "
    "bytes into its last record (DLGE)",
    "each file's last record quarantined at its offset, 'the file is truncated; transfer it "
    "again'; the other segments of a cut change quarantined ('missing segment'); all else "
    "decoded",
)
def _lm_truncated(folder: Path, scratch: Path) -> Facts:
    changes = logmaster(folder, scratch, 102)
    keep = {DATA[0]: lambda r: len(r.data) - 30, DATA[1]: lambda r: 4 + 100,
            DATA[2]: lambda r: 2, CONTROL: lambda r: 20}  # fmt: skip
    quarantined = {}
    for name, inside in keep.items():
        last = d.rdw_records(folder / name)[-1]
        d.cut(folder / name, last.offset + inside(last))
        quarantined[(name, last.offset)] = "the file is truncated; transfer it again"
    damaged = {k for k in quarantined if k[0] != CONTROL}
    return {"quarantined": quarantined, "exact": True, "also": other_segments(changes, damaged)}


@case(
    "db2zos_bit_flips",
    "db2zos",
    "one bit flipped in each of: F0002 record 3's RDW byte 3 (x'00'->x'01'); F0003: the first "
    "byte of an unsegmented insert's CHANGE TYPE ('I'->'H'); F0004: the high byte of an "
    "unsegmented insert's DATA length; the control file: the record type of the first DLCI "
    "('DLCI'->'DLCH')",
    "the RDW: that record alone quarantined (framing resynchronises); CHANGE TYPE 'H': "
    "quarantined at stage change_type; DATA length: stage row_image; 'DLCH': kept as an unknown "
    "control record type, and the table it described loses that column, so its changes are "
    "quarantined at stage row_image",
)
def _lm_bit_flips(folder: Path, scratch: Path) -> Facts:
    changes = logmaster(folder, scratch, 103)
    first = d.rdw_records(folder / DATA[0])[2]
    d.flip_bit(folder / DATA[0], first.offset + 3, 0x01)
    second = pick(d.rdw_records(folder / DATA[1]), unsegmented(("I ",)))
    d.flip_bit(folder / DATA[1], second.offset + d.RDW + d.LLDF_CHANGE_TYPE, 0x01)
    third = pick(d.rdw_records(folder / DATA[2]), unsegmented(("I ",)))
    d.flip_bit(folder / DATA[2], third.offset + d.RDW + d.u16(third, d.RDW), 0x40)
    dlci = next(r for r in d.rdw_records(folder / CONTROL) if d.control_type(r) == "DLCI")
    d.flip_bit(folder / CONTROL, dlci.offset + d.RDW + 3, 0x01)
    return {
        "quarantined": {
            (DATA[0], first.offset): "records start again at offset",
            (DATA[1], second.offset): "CHANGE TYPE 'H' is not one logmart knows",
            (DATA[2], third.offset): "DATA length",
        },
        "exact": False,  # the DLCH table's changes: checked by the test
        "also": other_segments(changes, {(DATA[0], first.offset)}),
        "unknown_control": (CONTROL, dlci.offset, "DLCH"),
    }


@case(
    "db2zos_rdw_lies",
    "db2zos",
    "F0002 record 4's RDW length set to 0; F0003 record 3's to 100 (shorter than an LLDF "
    "header); F0004's next-to-last record's to x'FFF0' (past the end of the file)",
    "each damaged record alone quarantined at its offset with 'records start again at offset "
    "N'; every other record decoded (a damaged segment's other segments: 'missing segment')",
)
def _lm_rdw_lies(folder: Path, scratch: Path) -> Facts:
    changes = logmaster(folder, scratch, 104)
    quarantined = {}
    for name, which, length in ((DATA[0], 3, 0), (DATA[1], 2, 100), (DATA[2], -2, 0xFFF0)):
        record = d.rdw_records(folder / name)[which]
        d.overwrite(folder / name, record.offset, struct.pack(">H", length))
        quarantined[(name, record.offset)] = "records start again at offset"
    return {"quarantined": quarantined, "exact": True,
            "also": other_segments(changes, set(quarantined))}  # fmt: skip


@case(
    "db2zos_unknown_types",
    "db2zos",
    "a control record of type 'DZZZ' (40 blank bytes) inserted after XTYP; an unsegmented "
    "insert's CHANGE TYPE in F0002 set to 'ZZ'",
    "'DZZZ' kept and counted as a control record of a type logmart does not know (spec: skip "
    "and say so), not quarantined; the 'ZZ' record quarantined at stage change_type",
)
def _lm_unknown_types(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 105)
    records = d.rdw_records(folder / CONTROL)
    unknown = "DZZZ".encode("cp037") + b"\x40" * 40
    bodies = [records[0].data, struct.pack(">HH", len(unknown) + 4, 0) + unknown]
    offsets = d.write_records(folder / CONTROL, bodies + [r.data for r in records[1:]])
    record = pick(d.rdw_records(folder / DATA[0]), unsegmented(("I ",)))
    d.overwrite(folder / DATA[0], record.offset + d.RDW + d.LLDF_CHANGE_TYPE, "ZZ".encode("cp037"))
    return {
        "quarantined": {(DATA[0], record.offset): "CHANGE TYPE 'ZZ' is not one logmart knows"},
        "exact": True,
        "unknown_control": (CONTROL, offsets[1], "DZZZ"),
    }


@case(
    "db2zos_no_control",
    "db2zos",
    "the control file removed: the three data files alone",
    "every data record read and framed with the documented header; each change quarantined at "
    "stage row_image saying the extract has no control file",
)
def _lm_no_control(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 106)
    (folder / CONTROL).unlink()
    return {"quarantined": {}, "exact": False}


@case(
    "db2zos_control_only",
    "db2zos",
    "the three data files removed: the control file alone",
    "the control records decoded; reconciliation says the data sets DLDS lists are missing",
)
def _lm_control_only(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 107)
    for name in DATA:
        (folder / name).unlink()
    return {"quarantined": {}, "exact": True, "missing": DATA}


@case(
    "db2zos_text_transfer",
    "db2zos",
    "every file as an ASCII-mode FTP get leaves it: RDWs dropped, cp037 translated to Latin-1, "
    "CR LF after each record (the wrong code page and no RDWs)",
    "each file one quarantined record at offset 0 whose reason says to transfer it in binary "
    "with SITE RDW",
)
def _lm_text_transfer(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 108)
    for name in [CONTROL, *DATA]:
        d.text_transfer(folder / name)
    return {"quarantined": {(name, 0): "SITE RDW" for name in [CONTROL, *DATA]}, "exact": True}


@case(
    "db2zos_segments",
    "db2zos",
    "a missing segment: segment 2 of a segmented change removed from its data file; a "
    "duplicated segment: segment 1 of another segmented change appended again to F0004; a "
    "duplicated record: an unsegmented insert of F0002 appended again to F0002",
    "the first change's other segments quarantined ('missing segment(s) 2'); each appended "
    "copy quarantined at stage repeat ('repeats the record at <file> offset <n>') and its "
    "change decoded once from the first copy",
)
def _lm_segments(folder: Path, scratch: Path) -> Facts:
    changes = logmaster(folder, scratch, 109)
    segmented = [c for c in changes if c["segments"] > 1]
    assert len(segmented) >= 2, "the generator writes segmented changes"
    repeat_file, repeat_offset = segmented[1]["records"][0]
    repeated = next(r for r in d.rdw_records(folder / repeat_file) if r.offset == repeat_offset)
    gone_file, gone_offset = segmented[0]["records"][1]
    records = d.rdw_records(folder / gone_file)
    d.write_records(folder / gone_file, [r.data for r in records if r.offset != gone_offset])
    appended_at = (folder / DATA[2]).stat().st_size
    with (folder / DATA[2]).open("ab") as handle:
        handle.write(repeated.data)
    copy = pick(d.rdw_records(folder / DATA[0]), unsegmented(("I ",)))
    copied_at = (folder / DATA[0]).stat().st_size
    with (folder / DATA[0]).open("ab") as handle:
        handle.write(copy.data)
    return {
        "quarantined": {
            (DATA[2], appended_at): "repeats the record at",
            (DATA[0], copied_at): "repeats the record at",
        },
        "exact": False,
        "missing_segment_uorid": segmented[0]["uorid"],
        "repeated_segment_uorid": segmented[1]["uorid"],
        "copied_record": (DATA[0], copy.offset),
    }


@case(
    "db2zos_missing_file",
    "db2zos",
    "data file F0003 removed (the control file's DLDS still lists it)",
    "reconciliation names the missing data set; segments of changes split into it quarantined "
    "('missing segment')",
)
def _lm_missing_file(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 110)
    (folder / DATA[1]).unlink()
    return {"quarantined": {}, "exact": False, "missing": [DATA[1]]}


@case(
    "db2zos_odd_files",
    "db2zos",
    "an empty file (EMPTY.F0009), a text file (README.txt) and 3000 random bytes (photo.jpg) "
    "added to the extract folder",
    "the empty file listed with 0 records; README.txt and photo.jpg each one quarantined "
    "record at offset 0 ('no record starts after it'); the extract itself decoded",
)
def _lm_odd_files(folder: Path, scratch: Path) -> Facts:
    logmaster(folder, scratch, 111)
    (folder / "EMPTY.F0009").write_bytes(b"")
    (folder / "README.txt").write_text("Log Master extract of DB2P, taken Monday.\n" * 20)
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(2996))
    return {
        "quarantined": {
            ("README.txt", 0): "no record starts after it",
            ("photo.jpg", 0): "no record starts after it",
        },
        "exact": True,
        "empty": ["EMPTY.F0009"],
    }


# --- Db2 LUW ------------------------------------------------------------------------------------


def db2luw(folder: Path, scratch: Path, seed: int, **settings) -> list[str]:
    """Generate a capture of several small .log files into ``folder``; returns their names."""
    generate_db2luw(scratch, 20, seed, capture="c", file_bytes=4096, **settings)
    shutil.copytree(scratch / "db2luw" / "c", folder)
    return sorted(p.name for p in folder.glob("*.log"))


def db2_header(record: d.Record) -> tuple[int, int]:
    """(record type, flags) of a little-endian record after its filter data."""
    return struct.unpack_from("<HH", record.data, d.DB2_FILTER + 4)


@case(
    "db2luw_clean",
    "db2luw",
    "none: the generator's capture (filter framing, little-endian; its last transaction open)",
    "every record decoded or kept, nothing quarantined; the open transaction 'in_flight'",
)
def _luw_clean(folder: Path, scratch: Path) -> Facts:
    db2luw(folder, scratch, 201)
    return {"quarantined": {}, "exact": True}


@case(
    "db2luw_truncated",
    "db2luw",
    "the first file cut 30 bytes before the end of its last record (mid-record), the second "
    "cut 20 bytes into its last record's log manager header (mid-header), the last cut 10 "
    "bytes into its last record's filter data",
    "each file's last record quarantined at its offset: 'the file is truncated; transfer it again'",
)
def _luw_truncated(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 202)
    quarantined = {}
    cuts = ((names[0], lambda r: len(r.data) - 30), (names[1], lambda r: d.DB2_FILTER + 20),
            (names[-1], lambda r: 10))  # fmt: skip
    for name, inside in cuts:
        last = d.db2_records(folder / name)[-1]
        d.cut(folder / name, last.offset + inside(last))
        quarantined[(name, last.offset)] = "the file is truncated; transfer it again"
    return {"quarantined": quarantined, "exact": False}


@case(
    "db2luw_bit_flips",
    "db2luw",
    "one bit flipped in: record 3 of the first file's realLogRecLen (bit 0x10 of byte 48); "
    "record 5 of the second file's header record type (0x004E -> 0x014E)",
    "each damaged record alone quarantined; reading goes on at the next record",
)
def _luw_bit_flips(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 203)
    first = d.db2_records(folder / names[0])[3]
    d.flip_bit(folder / names[0], first.offset + d.DB2_REAL_LENGTH, 0x10)
    second = d.db2_records(folder / names[1])[5]
    d.flip_bit(folder / names[1], second.offset + d.DB2_FILTER + 5, 0x01)
    return {
        "quarantined": {
            (names[0], first.offset): "realLogRecLen is not the header's record length",
            (names[1], second.offset): "is not a Db2 log record type",
        },
        "exact": False,
    }


@case(
    "db2luw_length_lies",
    "db2luw",
    "record 2 of the first file: realLogRecLen and header length both set to 0x7FFFFFFF; the "
    "next-to-last record of the last file: both set 5000 bytes past the end of the file",
    "each damaged record alone quarantined with 'records start again at offset N'",
)
def _luw_length_lies(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 204)
    first = d.db2_records(folder / names[0])[2]
    for field in (d.DB2_REAL_LENGTH, d.DB2_FILTER):
        d.overwrite(folder / names[0], first.offset + field, struct.pack("<I", 0x7FFFFFFF))
    path = folder / names[-1]
    second = d.db2_records(path)[-2]
    past = path.stat().st_size - second.offset + 5000
    for field in (d.DB2_REAL_LENGTH, d.DB2_FILTER):
        d.overwrite(path, second.offset + field, struct.pack("<I", past))
    return {
        "quarantined": {
            (names[0], first.offset): "records start again at offset",
            (names[-1], second.offset): "records start again at offset",
        },
        "exact": False,
    }


@case(
    "db2luw_no_catalog",
    "db2luw",
    "the catalog folder removed",
    "tables that the log describes (initialize table) decode with columns C1..Cn; rows of the "
    "others quarantined at stage row_image saying there is no table layout",
)
def _luw_no_catalog(folder: Path, scratch: Path) -> Facts:
    db2luw(folder, scratch, 206)
    shutil.rmtree(folder / "catalog")
    return {"quarantined": {}, "exact": False}


@case(
    "db2luw_catalog_only",
    "db2luw",
    "every .log file removed: the catalog export alone",
    "the catalog rows decoded; reconciliation says the capture has no log files",
)
def _luw_catalog_only(folder: Path, scratch: Path) -> Facts:
    for name in db2luw(folder, scratch, 207):
        (folder / name).unlink()
    return {"quarantined": {}, "exact": True}


@case(
    "db2luw_wrong_byteorder",
    "db2luw",
    "the capture written big-endian (AIX) while the build reads little-endian (the default)",
    "each file one quarantined record at offset 0 naming the settings the bytes fit "
    "(byteorder='big')",
)
def _luw_wrong_byteorder(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 208, byteorder="big")
    return {"quarantined": {(n, 0): "the bytes fit framing='filter' byteorder='big'"
                            for n in names}, "exact": True}  # fmt: skip


@case(
    "db2luw_segments",
    "db2luw",
    "a missing segment: the second of the capture's .log files removed; a duplicated record: "
    "the first file's record 2 written again right after itself",
    "reconciliation says a .log file is missing between the two around it; the repeated "
    "record quarantined as a repeat (same LSN) and its change counted once",
)
def _luw_segments(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 210)
    assert len(names) >= 3
    (folder / names[1]).unlink()
    records = d.db2_records(folder / names[0])
    doubled = [r.data for r in records[:3]] + [records[2].data] + [r.data for r in records[3:]]
    offsets = d.write_records(folder / names[0], doubled)
    return {
        "quarantined": {(names[0], offsets[3]): "repeats the record at"},
        "exact": False,
        "missing": [names[1]],
    }


@case(
    "db2luw_cut_transaction",
    "db2luw",
    "the capture cut right before the commit record of its last committed transaction (the "
    "last file shortened to end there)",
    "that transaction 'in_flight' with all its changes; nothing quarantined",
)
def _luw_cut_transaction(folder: Path, scratch: Path) -> Facts:
    names = db2luw(folder, scratch, 212)
    last = folder / names[-1]
    records = d.db2_records(last)
    commits = [r for r in records if db2_header(r)[0] == 0x84]
    assert commits, "the last file holds a commit"
    commit = commits[-1]
    tid = commit.data[d.DB2_FILTER + 32 : d.DB2_FILTER + 38].hex()
    d.cut(last, commit.offset)
    return {"quarantined": {}, "exact": True, "cut_tid": tid}


@case(
    "db2luw_odd_files",
    "db2luw",
    "an empty S0000090.log, a text file named S0000091.log and a notes.txt added",
    "the empty file listed with 0 records; the text .log one quarantined record at offset 0; "
    "notes.txt listed as a file logmart does not read",
)
def _luw_odd_files(folder: Path, scratch: Path) -> Facts:
    db2luw(folder, scratch, 213)
    (folder / "S0000090.log").write_bytes(b"")
    (folder / "S0000091.log").write_text("db2 => connect to SAMPLE\n" * 40)
    (folder / "notes.txt").write_text("capture taken by the night shift\n")
    return {
        "quarantined": {("S0000091.log", 0): "no record starts after it"},
        "exact": True,
        "empty": ["S0000090.log"],
        "ignored": ["notes.txt"],
    }


# --- solidDB ------------------------------------------------------------------------------------


def soliddb(folder: Path, scratch: Path, seed: int, fmt: str = "csv") -> Path:
    """Generate a capture into ``folder``; returns its SYS_LOG export file."""
    generate_soliddb(scratch, 40, seed, formats=(fmt,), capture="c")
    shutil.copytree(scratch / "soliddb" / "c", folder)
    return folder / f"sys_log.{fmt}"


def row_index(rows: list[list[str]], header: list[str], recname: str, skip: int = 0) -> int:
    column = header.index("RECNAME")
    found = [n for n, row in enumerate(rows) if row[column].endswith(recname)]
    return found[skip]


@case(
    "soliddb_clean",
    "soliddb",
    "none: the generator's capture (Parquet; transactions open at the end)",
    "every row decoded, nothing quarantined",
)
def _solid_clean(folder: Path, scratch: Path) -> Facts:
    soliddb(folder, scratch, 301, "parquet")
    return {"quarantined": {}, "exact": True}


def typed_rows(header: list[str], rows: list[list[str]]) -> list[dict]:
    """CSV export rows as the generator's typed rows (LOGADDR/DATA bytes, numbers int)."""
    out = []
    for row in rows:
        typed: dict[str, Any] = {}
        for name, text in zip(header, row, strict=True):
            if text == "":
                typed[name] = None
            elif name in ("LOGADDR", "DATA"):
                typed[name] = bytes.fromhex(text)
            elif name in ("RECNAME", "TEXTDATA"):
                typed[name] = text
            else:
                typed[name] = int(text)
        out.append(typed)
    return out


@case(
    "soliddb_truncated",
    "soliddb",
    "the export in three files of one capture: sys_log_a.csv (rows 0..99) cut in the middle of "
    "its last row's DATA (mid-record); sys_log_b.jsonl (rows 100..149) cut mid-line; "
    "sys_log_c.parquet (the other rows) cut in half, its footer gone; and sys_log_d.csv cut "
    "inside its header line (mid-header)",
    "the cut CSV and JSON rows quarantined at their row numbers; the Parquet file one "
    "quarantined record saying it could not be read; the headless CSV file (no row in it) "
    "listed with the problem 'no record could be read from its 16 bytes'",
)
def _solid_truncated(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 302)
    header, rows = d.csv_rows(export)
    export.unlink()
    d.write_csv(folder / "sys_log_a.csv", header, rows[:100])
    d.cut(folder / "sys_log_a.csv", (folder / "sys_log_a.csv").stat().st_size - 40)
    typed = typed_rows(header, rows)
    write_sys_log(typed[100:150], folder / "sys_log_b.jsonl")
    d.cut(folder / "sys_log_b.jsonl", (folder / "sys_log_b.jsonl").stat().st_size - 25)
    write_sys_log(typed[150:], folder / "sys_log_c.parquet")
    d.cut(folder / "sys_log_c.parquet", (folder / "sys_log_c.parquet").stat().st_size // 2)
    (folder / "sys_log_d.csv").write_bytes(b"RECID,RECNAME,TR")
    return {
        "quarantined": {
            ("sys_log_a.csv", 99): "",
            ("sys_log_b.jsonl", 49): "",
            ("sys_log_c.parquet", 0): "could not be read",
        },
        "exact": False,
    }


@case(
    "soliddb_bit_flips",
    "soliddb",
    "in the CSV export: one bit of a DATA hex digit of insert 2 ('F'/'E'/'D'... -> a letter "
    "that is not hex, bit 0x08), and the first length byte of insert 4's DATA raised by 0x10 "
    "(a field length that lies)",
    "both rows quarantined: 'DATA is not hex' (stage decode) and a row image that does not "
    "decode (stage row_image)",
)
def _solid_bit_flips(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 304)
    header, rows = d.csv_rows(export)
    column = header.index("DATA")
    first = row_index(rows, header, "INSERT", 1)
    hexed = rows[first][column]
    at = next(n for n, c in enumerate(hexed) if c in "ABCDEF")
    rows[first][column] = hexed[:at] + chr(ord(hexed[at]) ^ 0x08) + hexed[at + 1 :]
    second = row_index(rows, header, "INSERT", 3)
    value = bytearray(bytes.fromhex(rows[second][column]))
    value[0] = (value[0] + 0x10) % 0xFE
    rows[second][column] = value.hex().upper()
    d.write_csv(export, header, rows)
    return {
        "quarantined": {("sys_log.csv", first): "DATA is not hex", ("sys_log.csv", second): ""},
        "exact": True,
    }


@case(
    "soliddb_unknown_types",
    "soliddb",
    "the RECID of the first INSERT row set to 99 (no SYS_LOG record id)",
    "that row quarantined at stage record_kind: 'RECID 99 is not a SYS_LOG record id'",
)
def _solid_unknown(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 305)
    header, rows = d.csv_rows(export)
    row = row_index(rows, header, "INSERT")
    rows[row][header.index("RECID")] = "99"
    d.write_csv(export, header, rows)
    return {"quarantined": {("sys_log.csv", row): "RECID 99 is not a SYS_LOG record id"},
            "exact": True}  # fmt: skip


@case(
    "soliddb_no_catalog",
    "soliddb",
    "the catalog folder removed",
    "rows of tables created in the log decode; rows of the others quarantined at stage "
    "row_image: 'no table layout for RELID …'",
)
def _solid_no_catalog(folder: Path, scratch: Path) -> Facts:
    soliddb(folder, scratch, 306)
    shutil.rmtree(folder / "catalog")
    return {"quarantined": {}, "exact": False}


@case(
    "soliddb_catalog_only",
    "soliddb",
    "the SYS_LOG export removed: the catalog alone",
    "the catalog rows read; reconciliation says the capture has no SYS_LOG export",
)
def _solid_catalog_only(folder: Path, scratch: Path) -> Facts:
    soliddb(folder, scratch, 307).unlink()
    return {"quarantined": {}, "exact": True}


@case(
    "soliddb_wrong_codepage",
    "soliddb",
    "the CSV export saved as UTF-16 (what Windows tools call 'Unicode') instead of UTF-8",
    "the file quarantined as one record at row 0 whose reason says it is not UTF-8",
)
def _solid_wrong_codepage(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 308)
    export.write_bytes(export.read_text(encoding="utf-8").encode("utf-16"))
    return {"quarantined": {("sys_log.csv", 0): "UTF-8"}, "exact": True}


@case(
    "soliddb_segments",
    "soliddb",
    "the export in two files whose polls overlap: sys_log_1.csv rows 0..119, sys_log_2.csv "
    "rows 110..end (rows 110..119 exported twice, same LOGADDR)",
    "the repeated rows of sys_log_2.csv that have a LOGADDR quarantined at stage repeat, "
    "naming the row of sys_log_1.csv they repeat (NOP rows have no identity and are kept); "
    "every change counted once",
)
def _solid_segments(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 309)
    header, rows = d.csv_rows(export)
    export.unlink()
    d.write_csv(folder / "sys_log_1.csv", header, rows[:120])
    d.write_csv(folder / "sys_log_2.csv", header, rows[110:])
    return {
        "quarantined": {
            ("sys_log_2.csv", n): "LOGADDR"
            for n, row in enumerate(rows[110:120])
            if row[header.index("LOGADDR")]  # a NOP row (no LOGADDR) has nothing to repeat
        },
        "exact": True,
    }


@case(
    "soliddb_cut_transaction",
    "soliddb",
    "the COMMIT row of the last committed transaction removed (the export ends before it)",
    "that transaction 'in_flight' with its changes; nothing quarantined",
)
def _solid_cut_transaction(folder: Path, scratch: Path) -> Facts:
    export = soliddb(folder, scratch, 310)
    header, rows = d.csv_rows(export)
    last = max(n for n, row in enumerate(rows) if row[header.index("RECNAME")].endswith("COMMIT"))
    trxid = rows[last][header.index("TRXID")]
    d.write_csv(export, header, rows[:last])
    return {"quarantined": {}, "exact": True, "cut_trxid": trxid}


@case(
    "soliddb_odd_files",
    "soliddb",
    "an empty sys_log_2.csv, a text file named sys_log_3.parquet and 2000 random bytes named "
    "sys_log_4.csv added",
    "the empty file listed with 0 records; each of the other two one quarantined record saying "
    "it could not be read",
)
def _solid_odd_files(folder: Path, scratch: Path) -> Facts:
    soliddb(folder, scratch, 311)
    (folder / "sys_log_2.csv").write_bytes(b"")
    (folder / "sys_log_3.parquet").write_text("SELECT * FROM SYS_LOG\n")
    (folder / "sys_log_4.csv").write_bytes(os.urandom(2000))
    return {
        "quarantined": {
            ("sys_log_3.parquet", 0): "could not be read",
            ("sys_log_4.csv", 0): "",
        },
        "exact": False,
        "empty": ["sys_log_2.csv"],
    }


def write_all(raw: Path, scratch: Path) -> dict[str, Facts]:
    """Every case's capture under ``raw``; returns each case's facts."""
    facts = {}
    for one in CASES:
        facts[one.name] = one.make(raw / one.folder / one.name, scratch / one.name)
    return facts


# Each case's capture folder is a log stream of its own: the test run's warehouse holds them
# beside the demo's and the incremental scenario's streams (test_fault_matrix.py).
CASE_STREAMS = frozenset(one.name for one in CASES)

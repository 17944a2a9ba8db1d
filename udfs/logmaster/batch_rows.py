"""Row images decoded while the data file is read (the fast path of the raw load).

The SQL model ``int_logmaster_row_images_decoded`` decodes row images with the UDF
``logmart_logmaster_row_images`` after it has picked each change's table version. Sending every
record to a UDF and back costs the JVM more than the decoding itself (docs/performance.md), so
the data source already decodes the records that need no reassembly (one segment), with the
version it picks from the extract's control file by the same rule. It stores, beside the values,
a digest of the layout text and column names it used; the model takes these values only where
the digest equals the one of the version it picked itself, and sends every other change to the
UDF. A disagreement can therefore cost time, never a wrong value.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from udfs import batch_values as bv
from udfs import values
from udfs.batch import binary_buffers
from udfs.logmaster import control
from udfs.logmaster import rows as row_images

# The dbt vars int_logmaster_table_layouts writes into its layout text (dbt_project.yml
# defaults); a build with other values only loses the fast path.
DEFAULT_SETTINGS = {"ebcdic_codepage": "", "ascii_codepage": "latin-1", "float_format": "hfp"}
ZERO_POSITION = "0" * 20

IMAGE_FIELDS = [
    ("image_digest", pa.string()),
    ("before_values", pa.list_(pa.string())),
    ("after_values", pa.list_(pa.string())),
    ("image_warnings", pa.list_(pa.string())),
    ("image_error", pa.string()),
]


@dataclass(frozen=True)
class TableVersion:
    """One DTBI table version with its DLCI columns, as int_logmaster_table_layouts sees it."""

    sequencenumber: int
    createrba: str | None
    droprba: str | None
    layout_text: str  # the text the SQL model builds (README: row_images.parse_layout)
    digest: str  # sha256 of layout text, NUL, column names joined by NUL


def image_digest(layout_text: str, column_names: list[str]) -> str:
    """What identifies a decoding: its layout text and column names (the SQL model computes
    the same with ``sha2(concat_ws(char(0), layout_text, column_names...), 256)``)."""
    return hashlib.sha256("\0".join([layout_text, *column_names]).encode()).hexdigest()


def table_versions(
    control_file: Path | None, settings: dict[str, str] | None = None
) -> dict[tuple[int, int], list[TableVersion]]:
    """Per (DBID, OBID): the table versions of an extract's control file."""
    if control_file is None:
        return {}
    settings = {**DEFAULT_SETTINGS, **(settings or {})}
    codec = control.sniff(control_file) or "cp037"
    dtbis, dlcis, ccsids, mixed, date_formats = [], {}, [], [], []
    for record in control.read_control_file(control_file, codec):
        fields = record.fields
        if record.error or not fields:
            continue
        if record.record_type == "DTBI":
            dtbis.append(fields)
        elif record.record_type == "DLCI":
            key = (fields.get("dbid"), fields.get("tbobid"), fields.get("sequencenumber"))
            dlcis.setdefault(key, []).append(fields)
        elif record.record_type == "XTYP" and fields.get("ebcdicsbcsccsid") is not None:
            ccsids.append(fields["ebcdicsbcsccsid"])
        elif record.record_type == "DLDS" and (fields.get("dateformat") or "").strip():
            date_formats.append(fields["dateformat"].strip().upper())
        if record.record_type == "XTYP" and values.ebcdic_mixed_codec(
            fields.get("ebcdicmixedccsid")
        ):
            mixed.append(fields["ebcdicmixedccsid"])
    ebcdic = settings["ebcdic_codepage"] or f"ccsid:{min(ccsids) if ccsids else 37}"
    # logmaster.rows' optional 7th layout field, only where the extract has a usable mixed CCSID
    # (int_logmaster_table_layouts adds the same, so the digests match).
    settings = {**settings, "mixed": f"ccsid:{min(mixed)}" if mixed else ""}
    # and the optional 8th, the DLDS DATEFORMAT where it is not DB2I (the 7th then may be empty)
    date_format = min(date_formats, default=values.DEFAULT_DATE_FORMAT)
    settings["dateformat"] = "" if date_format == values.DEFAULT_DATE_FORMAT else date_format
    found: dict[tuple[int, int], list[TableVersion]] = {}
    for dtbi in dtbis:
        key = (dtbi.get("dbid"), dtbi.get("tbobid"), dtbi.get("sequencenumber"))
        text_and_names = _layout_text(dtbi, dlcis.get(key, []), ebcdic, settings)
        if text_and_names is None:
            continue
        text, names = text_and_names
        try:
            table = (int(key[0], 16), int(key[1], 16))
        except (TypeError, ValueError):
            continue
        found.setdefault(table, []).append(
            TableVersion(
                sequencenumber=dtbi["sequencenumber"],
                createrba=dtbi.get("createrba"),
                droprba=dtbi.get("droprba"),
                layout_text=text,
                digest=image_digest(text, names),
            )
        )
    return found


def _layout_text(
    dtbi: dict, dlci: list[dict], ebcdic: str, settings: dict[str, str]
) -> tuple[str, list[str]] | None:
    """The layout text and column names int_logmaster_table_layouts builds, or None where
    its text would be missing or unusable, or where the table's LOBs are not in the log (then
    the UDF path decides)."""
    if not dlci or dtbi.get("encodingscheme") is None or dtbi.get("sequencenumber") is None:
        return None
    columns, names = [], []
    for d in sorted(dlci, key=lambda d: (d.get("llcolumnnum") is None, d.get("llcolumnnum"))):
        parts = [d.get(k) for k in ("llcolumnnum", "llcolumntype", "llcolumnlen")]
        parts += [d.get("llscale") or 0, d.get("llnulls")]
        if any(p is None for p in parts) or d.get("columnname") is None:
            return None
        subtype, pos = d.get("llcolumnsubtype"), d.get("llcolumnpos")
        parts += ["" if subtype is None else subtype, "" if pos is None else pos]
        if (d.get("keyseq") or 0) > 0:  # key columns say their KEYSEQ (limit keys of a DM)
            parts.append(d["keyseq"])
        columns.append(",".join(str(p) for p in parts))
        names.append(d["columnname"][: d.get("columnnamelen") or 128])
    lobs = dtbi.get("lobsincluded") or "Y"
    types = {str(d.get("llcolumntype") or "").strip() for d in dlci}
    if lobs == "N" and types & row_images.LOB_TYPES:
        # LOB values not in the log: only the UDF says which (before_unavailable /
        # after_unavailable), so such tables' changes go to it; this costs time only.
        return None
    if dtbi.get("xmlincluded") == "N":
        if "XML" in types:
            return None  # XML values not in the log: the UDF says which, as for LOBs
        lobs += "N"  # the layout text int_logmaster_table_layouts writes
    head = [dtbi["encodingscheme"], ebcdic, settings["ascii_codepage"], settings["float_format"]]
    extra = [settings["mixed"]] if settings.get("mixed") else []
    if settings.get("dateformat"):
        extra = [settings.get("mixed") or "", settings["dateformat"]]
    return "|".join([*head, lobs, ";".join(columns), *extra]), names


def choose(versions: list[TableVersion], logrba: str, loglrsn: str) -> TableVersion | None:
    """The version in force at a change: int_logmaster_row_images_decoded's rule."""
    if len(versions) == 1:
        return versions[0]
    fitting = [
        v
        for v in versions
        if (_zero(v.createrba) or logrba >= v.createrba or loglrsn >= v.createrba)
        and (_zero(v.droprba) or (logrba < v.droprba and loglrsn < v.droprba))
    ]
    return max(fitting, key=lambda v: v.sequencenumber, default=None)


def _zero(position: str | None) -> bool:
    return position is None or position == ZERO_POSITION


def decode_images(
    batch: pa.RecordBatch, versions: dict[tuple[int, int], list[TableVersion]]
) -> list[pa.Array]:
    """The IMAGE_FIELDS columns for a decoded data batch: values for one-segment records of
    tables with a version, nulls (decided later by the SQL model) for the others."""
    rows = batch.num_rows
    version_of = _versions_of(batch, versions)
    chosen = np.flatnonzero(version_of >= 0)
    if not len(chosen):
        return [pa.nulls(rows, field_type) for _, field_type in IMAGE_FIELDS]
    digests = sorted({v.digest for table in versions.values() for v in table})
    code_of_digest = {digest: code for code, digest in enumerate(digests)}
    texts = {v.digest: v.layout_text for table in versions.values() for v in table}
    flat = [v for table in versions.values() for v in table]
    version_codes = np.array([code_of_digest[v.digest] for v in flat], np.int64)
    codes = version_codes[version_of[chosen]]
    every_row = len(chosen) == rows
    chosen_rows = batch if every_row else batch.take(pa.array(chosen))
    decoded = row_images.decode_groups(
        _data_slices(chosen_rows),
        chosen_rows.column("change_type"),
        codes,
        [texts[d] for d in digests],
    )
    reasons = _with_reasons(decoded)
    if reasons.any():
        # values not in the log (a short row image: columns added after the row was
        # written): only the UDF reports why, so these rows are left to it
        keep = np.flatnonzero(~reasons)
        chosen, codes = chosen[keep], codes[keep]
        decoded = decoded.take(pa.array(keep))
        every_row = False
    if every_row:
        names = pa.array(digests, pa.string()).take(pa.array(codes))
        return (
            [names]
            + [decoded.field(f) for f in ("before_values", "after_values")]
            + [
                decoded.field("warnings"),
                decoded.field("error"),
            ]
        )
    # Back to the batch's rows: rows not decoded here take a null.
    position = np.full(rows, -1, np.int64)
    position[chosen] = np.arange(len(chosen))
    back = pa.array(position, mask=position < 0)
    digest_column = pa.array(digests, pa.string()).take(
        pa.array(
            np.where(position < 0, 0, version_codes[np.maximum(version_of, 0)]), mask=position < 0
        )
    )
    return [
        digest_column,
        decoded.field("before_values").take(back),
        decoded.field("after_values").take(back),
        decoded.field("warnings").take(back),
        decoded.field("error").take(back),
    ]


def _with_reasons(decoded: pa.StructArray) -> np.ndarray:
    """Per row: whether either image names a value the log does not carry."""
    found = np.zeros(len(decoded), bool)
    for side in ("before_unavailable", "after_unavailable"):
        lists = decoded.field(side)
        if lists.null_count == len(lists):
            continue
        flat = lists.flatten()
        if flat.null_count == len(flat):
            continue
        parents = pc.list_parent_indices(lists).to_numpy()
        has = ~flat.is_null().to_numpy(zero_copy_only=False)
        found[np.unique(parents[has])] = True
    return found


def _versions_of(batch: pa.RecordBatch, versions: dict[tuple[int, int], list[TableVersion]]):
    """Per row, the index of its version in the flattened ``versions`` values, or -1."""
    rows = batch.num_rows
    found = np.full(rows, -1, np.int64)
    if not versions or not rows:
        return found
    ok = batch.column("decode_error").is_null().to_numpy(zero_copy_only=False)
    segments = batch.column("totalsegs").fill_null(1).to_numpy(zero_copy_only=False)
    ok &= segments <= 1
    dbid = batch.column("dbid").fill_null(-1).to_numpy(zero_copy_only=False)
    obid = batch.column("tbobid").fill_null(-1).to_numpy(zero_copy_only=False)
    keys = dbid.astype(np.int64) << 32 | (obid.astype(np.int64) & 0xFFFFFFFF)
    logrba = loglrsn = None
    base = 0
    for (db, ob), table in versions.items():
        members = np.flatnonzero(ok & (keys == (db << 32 | ob)))
        if len(members) and len(table) == 1:
            found[members] = base
        elif len(members):
            # Several versions: the rule needs each change's position (rare; one by one).
            if logrba is None:
                logrba = batch.column("logrba").to_pylist()
                loglrsn = batch.column("loglrsn").to_pylist()
            for row in members:
                version = choose(table, logrba[row] or "", loglrsn[row] or "")
                if version is not None:
                    found[row] = base + table.index(version)
        base += len(table)
    return found


def _data_slices(batch: pa.RecordBatch) -> pa.Array:
    """DATA of each record: ``data_length`` bytes at ``data_offset`` of ``record_bytes``
    (what int_logmaster_changes_reassembled cuts for a one-segment record)."""
    buffer, starts, _ = binary_buffers(batch.column("record_bytes"))
    begin = starts + batch.column("data_offset").fill_null(0).to_numpy(zero_copy_only=False)
    width = np.maximum(batch.column("data_length").fill_null(0).to_numpy(zero_copy_only=False), 0)
    return bv.slices(buffer, begin, width)

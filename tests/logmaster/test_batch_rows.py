"""Row images decoded in the data source (udfs/logmaster/batch_rows.py): the version rule of
int_logmaster_row_images_decoded, and the same values as the UDF path."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from logmart_generators.logmaster import generate
from udfs.logmaster import batch_rows, control, rows
from udfs.logmaster.source import LogMasterDataSource

ZERO = "0" * 20


def version(seq: int, create: str = ZERO, drop: str = ZERO) -> batch_rows.TableVersion:
    return batch_rows.TableVersion(seq, create, drop, f"layout {seq}", f"digest {seq}")


def test_a_table_with_one_version_always_uses_it():
    only = version(1, create="00000000000000009999")
    assert batch_rows.choose([only], "00000000000000000001", "00000000000000000001") is only


def test_the_latest_version_created_before_the_change_wins():
    # CREATERBA/DROPRBA hold an RBA or an LRSN: either position of the change may match.
    first = version(1, drop="00000000000000005000")
    second = version(2, create="00000000000000005000")
    versions = [first, second]
    assert batch_rows.choose(versions, "00000000000000004000", "00000000000000004000") is first
    assert batch_rows.choose(versions, "00000000000000006000", "00000000000000000000") is second
    # the LRSN alone reaches the second version's CREATERBA
    assert batch_rows.choose(versions, "00000000000000000001", "00000000000000007000") is second
    # dropped: neither position may be at or past DROPRBA
    dropped = [version(1, drop="00000000000000005000"), version(2, drop="00000000000000005000")]
    assert batch_rows.choose(dropped, "00000000000000006000", "00000000000000000001") is None


@pytest.fixture(scope="module")
def extract(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("images")
    generate(out, transactions=40, seed=7)
    return out


def _batches(raw: Path) -> list[pa.RecordBatch]:
    source = LogMasterDataSource(
        {"path": str(raw / "logmaster"), "raw_root": str(raw), "records": "data", "images": "true"}
    )
    reader = source.reader(None)
    return [batch for part in reader.partitions() for batch in reader.read(part)]


def test_inline_images_are_what_the_udf_gives_for_the_same_layout(extract):
    batches = _batches(extract)
    control = next(p for p in (extract / "logmaster").rglob("*") if p.is_file() and _is_control(p))
    layouts = {
        v.digest: v.layout_text for t in batch_rows.table_versions(control).values() for v in t
    }
    decoded = segmented = 0
    for batch in batches:
        digests = batch.column("image_digest").to_pylist()
        segments = batch.column("totalsegs").to_pylist()
        for row, digest in enumerate(digests):
            if segments[row] and segments[row] > 1:
                segmented += 1
                assert digest is None, "a segment's images come from the reassembled record"
                continue
            if digest is None:
                continue
            decoded += 1
            one = batch.slice(row, 1)
            udf = rows.row_images_arrow(
                batch_rows._data_slices(one), one.column("change_type"), pa.array([layouts[digest]])
            )
            pairs = [("before_values", "before_values"), ("after_values", "after_values")]
            for ours, theirs in [*pairs, ("image_error", "error")]:
                assert one.column(ours).to_pylist() == udf.field(theirs).to_pylist()
    assert decoded > 100 and segmented > 0


# tables whose values the log leaves out (LOBSINCLUDED / XMLINCLUDED N): only the UDF says
# which, so the data source leaves their changes to it (udfs/logmaster/batch_rows.py)
LEFT_TO_THE_UDF = ("DOCUMENT_NOTE", "NOTE_REVIEW")


def test_every_one_segment_record_of_a_known_table_is_decoded(extract):
    for batch in _batches(extract):
        to_udf = np.isin(batch.column("tablename").to_numpy(zero_copy_only=False),
                         LEFT_TO_THE_UDF)  # fmt: skip
        eligible = np.array(batch.column("decode_error").is_null()) & (
            batch.column("totalsegs").fill_null(1).to_numpy(zero_copy_only=False) <= 1
        )
        digests = np.array([d is not None for d in batch.column("image_digest").to_pylist()])
        assert not (digests & to_udf).any()
        eligible &= ~to_udf
        assert (digests <= eligible).all()
        assert digests.sum() >= 0.9 * eligible.sum()


def test_the_digest_names_the_layout_text_and_the_column_names():
    # what the SQL model computes: sha2(concat_ws(char(0), layout_text, names...), 256)
    digest = batch_rows.image_digest("E|ccsid:37|latin-1|hfp|Y|1,INT,4,0,N,,0", ["ID", "NAME"])
    text = b"E|ccsid:37|latin-1|hfp|Y|1,INT,4,0,N,,0\0ID\0NAME"
    assert digest == hashlib.sha256(text).hexdigest()


def _is_control(path: Path) -> bool:
    return control.sniff(path) is not None

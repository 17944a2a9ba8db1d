"""RDW framing: whole records, streaming; broken framing quarantines the rest with a reason."""

from tests.logmaster.handmade import rdw
from udfs.framing import FrameBatch, FramingFailure, frame_file, rdw_length, split_points


def frames(path, **kwargs):
    out = []
    for item in frame_file(path, rdw_length, **kwargs):
        if isinstance(item, FrameBatch):
            out += [
                (int(item.file_offset + s), int(n))
                for s, n in zip(item.starts, item.lengths, strict=True)
            ]
        else:
            out.append(item)
    return out


def test_records_across_small_chunks(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"".join(rdw(bytes([i]) * (i + 1)) for i in range(50)))
    got = frames(path, chunk_size=7)
    assert len(got) == 50
    assert got[3] == (sum(5 + i for i in range(3)), 8)


def test_file_without_rdws_is_one_quarantined_tail(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(rdw(b"ABCD") + b"\x00\x20\x40\x40" + b"x" * 40)
    got = frames(path)
    assert got[0] == (0, 8)
    failure = got[1]
    assert isinstance(failure, FramingFailure)
    assert (failure.offset, failure.length) == (8, 44)
    assert "bytes 2-3 of an RDW must be x'0000', found x'4040'" in failure.reason
    assert "SITE RDW" in failure.reason


def test_truncated_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(rdw(b"ABCD") + rdw(b"E" * 100)[:30])
    failure = frames(path)[-1]
    assert "says 104 bytes but the file ends after 30 bytes" in failure.reason
    assert failure.data == rdw(b"E" * 100)[:30]


def test_tail_shorter_than_an_rdw(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(rdw(b"ABCD") + b"\x00\x09")
    assert "truncated" in frames(path)[-1].reason


def test_empty_file_has_no_records(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"")
    assert frames(path) == []


def test_split_points_fall_on_record_boundaries(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"".join(rdw(b"x" * (10 + i % 7)) for i in range(5000)))
    ranges = split_points(path, rdw_length, 8000)
    assert len(ranges) > 5
    assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
    together = []
    for start, end in ranges:
        together += frames(path, start=start, end=end)
    assert together == frames(path)

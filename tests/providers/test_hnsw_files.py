"""Zeroing the unused capacity of persisted hnswlib index files (providers.hnsw_files)."""

from __future__ import annotations

from pathlib import Path

from hermes_core.providers.hnsw_files import HNSW_HEADER, scrub_unused_capacity

PER_ELEMENT = 16


def _segment(root: Path, name: str, *, max_elements: int, current: int, data: bytes) -> Path:
    seg = root / name
    seg.mkdir(parents=True)
    header = HNSW_HEADER.pack(3, 0, max_elements, current, PER_ELEMENT, 0, 0, 0, 0, 0, 0, 0, 0.0, 0)
    (seg / "header.bin").write_bytes(header)
    (seg / "data_level0.bin").write_bytes(data)
    return seg / "data_level0.bin"


def test_zeroes_only_past_the_recorded_elements(tmp_path: Path) -> None:
    used = b"v" * (2 * PER_ELEMENT)
    stray = ("Zanzibar 桂林山水".encode() + b"x" * 64)[: 2 * PER_ELEMENT]
    data = _segment(tmp_path, "seg", max_elements=4, current=2, data=used + stray)
    assert scrub_unused_capacity(tmp_path) == 1
    assert data.read_bytes() == used + bytes(2 * PER_ELEMENT)
    assert scrub_unused_capacity(tmp_path) == 1  # idempotent: still the same file, still zeros
    assert data.read_bytes() == used + bytes(2 * PER_ELEMENT)


def test_leaves_files_the_header_does_not_describe(tmp_path: Path) -> None:
    content = b"Zanzibar".ljust(3 * PER_ELEMENT, b"x")
    wrong_size = _segment(tmp_path, "a", max_elements=4, current=1, data=content)
    full = _segment(tmp_path, "b", max_elements=3, current=3, data=content)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "header.bin").write_bytes(b"short")
    (tmp_path / "c" / "data_level0.bin").write_bytes(content)
    target = _segment(tmp_path / "elsewhere", "d", max_elements=3, current=1, data=content)
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "header.bin").write_bytes((target.parent / "header.bin").read_bytes())
    (tmp_path / "e" / "data_level0.bin").symlink_to(target)
    assert scrub_unused_capacity(tmp_path) == 0
    for path in (wrong_size, full, tmp_path / "c" / "data_level0.bin", target):
        assert path.read_bytes() == content


def test_no_index_no_work(tmp_path: Path) -> None:
    assert scrub_unused_capacity(tmp_path) == 0
    assert scrub_unused_capacity(tmp_path / "missing") == 0


def test_zeroes_the_link_lengths_past_the_recorded_elements(tmp_path: Path) -> None:
    """``length.bin`` has one 4-byte slot per element and the same stray capacity (seen in
    chromadb 1.x: a forgotten phrase found in it after a delete)."""
    data = _segment(tmp_path, "seg", max_elements=4, current=1, data=bytes(4 * PER_ELEMENT))
    lengths = data.with_name("length.bin")
    stray = "桂林山水".encode()
    lengths.write_bytes(b"\x05\x00\x00\x00" + stray)
    assert scrub_unused_capacity(tmp_path) == 2
    assert lengths.read_bytes() == b"\x05\x00\x00\x00" + bytes(len(stray))


def test_zeroes_every_slot_of_an_index_with_no_elements_yet(tmp_path: Path) -> None:
    data = _segment(tmp_path, "seg", max_elements=2, current=0, data=b"Zanzibar" * 4)
    lengths = data.with_name("length.bin")
    lengths.write_bytes(b"Zanzibar")
    assert scrub_unused_capacity(tmp_path) == 2
    assert data.read_bytes() == bytes(2 * PER_ELEMENT)
    assert lengths.read_bytes() == bytes(8)


def test_a_fifo_in_place_of_a_header_is_skipped_without_blocking(tmp_path: Path) -> None:
    import os

    seg = tmp_path / "seg"
    seg.mkdir()
    os.mkfifo(seg / "header.bin")
    (seg / "length.bin").write_bytes(b"Zanzibar")
    assert scrub_unused_capacity(tmp_path) == 0
    assert (seg / "length.bin").read_bytes() == b"Zanzibar"

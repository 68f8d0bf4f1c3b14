"""Clearing the unused capacity of persisted hnswlib vector indexes (chromadb's fork).

chromadb persists each vector segment as ``<segment>/header.bin`` plus two files with one
slot per element: ``data_level0.bin`` (``size_data_per_element`` bytes a slot) and
``length.bin`` (a 4-byte link-list length a slot). hnswlib allocates ``max_elements`` slots
of both without clearing them and writes the whole allocation, so the slots past
``cur_element_count`` can hold stray bytes of the writing process's memory, text of
memories deleted a moment ago included. A forget proof (a raw byte search of the home) then
finds the forgotten text there.

:func:`scrub_unused_capacity` zeroes those slots in every segment below a directory. It
only ever writes past the elements the header records, so the index itself is unchanged;
files whose header does not describe their size exactly, symlinks and headers that are not
regular files (a FIFO never blocks it) are left alone. Used by the providers that embed
chromadb (chroma, mem0 in mode ``oss``) before a forget proof and after closing their
client (whose last persist may write such bytes again).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from hermes_core.fsutil import UnsafeFileError, read_regular_bytes

HNSW_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")
"""``header.bin`` of a persisted hnswlib index (chroma's fork): persistence version,
offsetLevel0, max_elements, cur_element_count, size_data_per_element, label_offset,
offsetData, maxlevel, enterpoint_node, maxM, maxM0, M, mult, ef_construction."""


LENGTH_SLOT = 4
"""Bytes per element in ``length.bin`` (an ``unsigned int`` link-list length)."""


def _zero_past(path: Path, *, slot: int, max_elements: int, current: int) -> bool:
    """Zero ``path`` past its first ``current`` slots of ``slot`` bytes when it is a regular
    file of exactly ``max_elements`` slots; returns whether it was written."""
    if path.is_symlink() or not path.is_file() or slot <= 0:
        return False
    size = path.stat().st_size
    used = current * slot
    if max_elements * slot != size or used >= size:
        return False
    with path.open("r+b") as handle:
        handle.seek(used)
        handle.write(bytes(size - used))
        handle.flush()
        os.fsync(handle.fileno())
    return True


def scrub_unused_capacity(root: Path) -> int:
    """Zero the unused capacity of every ``<segment>/data_level0.bin`` and
    ``<segment>/length.bin`` directly below ``root`` (see the module docstring); returns the
    files scrubbed. Raises ``OSError`` when a file cannot be written."""
    scrubbed = 0
    for header in sorted(root.glob("*/header.bin")):
        if header.is_symlink():
            continue
        try:
            raw = read_regular_bytes(header, max_bytes=HNSW_HEADER.size, what="index header")
        except UnsafeFileError:  # a FIFO or a file larger than any header: not an index
            continue
        if len(raw) != HNSW_HEADER.size:
            continue
        fields = HNSW_HEADER.unpack(raw)
        max_elements, current, per_element = fields[2], fields[3], fields[4]
        if current > max_elements:
            continue
        for name, slot in (("data_level0.bin", per_element), ("length.bin", LENGTH_SLOT)):
            file = header.with_name(name)
            scrubbed += _zero_past(file, slot=slot, max_elements=max_elements, current=current)
    return scrubbed


__all__ = ["HNSW_HEADER", "LENGTH_SLOT", "scrub_unused_capacity"]

"""Clearing the unused capacity of persisted hnswlib vector indexes (chromadb's fork).

chromadb persists each vector segment as ``<segment>/header.bin`` plus
``<segment>/data_level0.bin``. hnswlib allocates ``max_elements`` slots without clearing
them and writes the whole allocation, so the slots past ``cur_element_count`` can hold stray
bytes of the writing process's memory, text of memories deleted a moment ago included. A
forget proof (a raw byte search of the home) then finds the forgotten text there.

:func:`scrub_unused_capacity` zeroes those slots in every segment below a directory. It
only ever writes past the elements the header records, so the index itself is unchanged;
files whose header does not describe them exactly, and symlinks, are left alone. Used by the
providers that embed chromadb (chroma, mem0 in mode ``oss``) before a forget proof and after
closing their client (whose last persist may write such bytes again).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

HNSW_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")
"""``header.bin`` of a persisted hnswlib index (chroma's fork): persistence version,
offsetLevel0, max_elements, cur_element_count, size_data_per_element, label_offset,
offsetData, maxlevel, enterpoint_node, maxM, maxM0, M, mult, ef_construction."""


def scrub_unused_capacity(root: Path) -> int:
    """Zero the unused capacity of every ``<segment>/data_level0.bin`` directly below
    ``root`` (see the module docstring); returns the files scrubbed. Raises ``OSError`` when
    a file cannot be written."""
    scrubbed = 0
    for header in sorted(root.glob("*/header.bin")):
        data = header.with_name("data_level0.bin")
        if header.is_symlink() or data.is_symlink() or not data.is_file():
            continue
        raw = header.read_bytes()
        if len(raw) != HNSW_HEADER.size:
            continue
        fields = HNSW_HEADER.unpack(raw)
        max_elements, current, per_element = fields[2], fields[3], fields[4]
        size = data.stat().st_size
        if per_element <= 0 or max_elements * per_element != size or current > max_elements:
            continue
        used = current * per_element
        if used >= size:
            continue
        with data.open("r+b") as handle:
            handle.seek(used)
            handle.write(bytes(size - used))
            handle.flush()
            os.fsync(handle.fileno())
        scrubbed += 1
    return scrubbed


__all__ = ["HNSW_HEADER", "scrub_unused_capacity"]

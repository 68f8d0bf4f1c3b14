"""A raw byte search of every regular file below a home: the last word of a forget proof.

Case variants of the phrase are searched as UTF-8 bytes (ASCII case-insensitively), so a
phrase that survives in any file — a database page, a WAL frame, a backup, a log — is found
whatever program wrote it. Symlinks are not followed; files above :data:`MAX_SCAN_BYTES` are
reported as not scanned rather than silently skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

CHUNK = 1024 * 1024
MAX_SCAN_BYTES = 2 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class RawScan:
    """Files that still contain the phrase, files too large to scan, files scanned."""

    found: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    scanned: int = 0

    @property
    def clean(self) -> bool:
        return not self.found and not self.skipped


def needles(phrase: str) -> list[bytes]:
    """The lower-cased UTF-8 byte forms of ``phrase`` searched in lower-cased bytes."""
    forms = {phrase, phrase.lower(), phrase.casefold(), phrase.upper(), phrase.title()}
    return sorted({form.encode("utf-8", "surrogatepass").lower() for form in forms if form})


def file_contains(path: Path, patterns: list[bytes]) -> bool:
    """Whether ``path``'s bytes (ASCII-lower-cased) contain any of ``patterns``."""
    overlap = max(len(p) for p in patterns) - 1
    tail = b""
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            window = tail + chunk.lower()
            if any(p in window for p in patterns):
                return True
            tail = window[-overlap:] if overlap > 0 else b""
    return False


def scan_home(home: Path, phrase: str) -> RawScan:
    """Every regular file below ``home`` whose bytes contain ``phrase`` (relative paths)."""
    patterns = needles(phrase)
    found: list[str] = []
    skipped: list[str] = []
    scanned = 0
    for dirpath, dirnames, filenames in os.walk(home, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                if path.stat().st_size > MAX_SCAN_BYTES:
                    skipped.append(str(path.relative_to(home)))
                    continue
                scanned += 1
                if file_contains(path, patterns):
                    found.append(str(path.relative_to(home)))
            except OSError:
                skipped.append(str(path.relative_to(home)))
    return RawScan(found, skipped, scanned)


__all__ = ["RawScan", "file_contains", "needles", "scan_home"]

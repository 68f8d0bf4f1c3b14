"""chroma as an InspectableProvider: listed, superseded memories shown as replaced, and
"forget a subject" leaves no byte of the phrase in the home (embedded chroma's SQLite too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hermes_core import MemoryHost
from hermes_core.inspector import forget
from hermes_core.inspector.people import list_people
from hermes_core.providers.inspect import inspectable
from hermes_core.testing.inspector import file_bytes, seed_memories

PHRASE = "Project Falcon"
PHRASE_ZH = "猎鹰计划"


FACTS = {
    "alice": [f"Alice leads {PHRASE}.", f"Alice 负责{PHRASE_ZH}。", "Alice drinks tea."],
    "bob": ["Bob plays go."],
}


@pytest.fixture
def chroma_home(hermes_home: Path) -> Path:
    config = "providers:\n  chroma:\n    embedder: hash"
    return seed_memories(hermes_home, "chroma", FACTS, config=config)


def test_chroma_memories_are_listed_per_user(chroma_home: Path) -> None:
    with MemoryHost.open(chroma_home) as host:
        lister = inspectable(host.provider)
        assert lister is not None
        assert set(lister.inspect_users()) >= {"alice", "bob"}
        texts = [m.text for m in lister.inspect_memories("alice")]
        assert any(PHRASE in t for t in texts) and not any("Bob" in t for t in texts)
        people = {p.user_id: p for p in list_people(host)}
        assert people["alice"].provider_memories == 3 and people["bob"].provider_memories == 1


@pytest.mark.parametrize("phrase", [PHRASE, PHRASE_ZH])
def test_forget_reaches_chroma_and_leaves_no_bytes(chroma_home: Path, phrase: str) -> None:
    assert phrase.encode() in file_bytes(chroma_home)
    with MemoryHost.open(chroma_home) as host:
        preview = forget.find_subject(host, "alice", phrase)
        assert preview.counts["provider"] == 1 and preview.provider_note == ""
        report = forget.forget_subject(host, "alice", phrase)
        assert report.proof.clean, report.proof.to_dict()
        lister = inspectable(host.provider)
        assert lister is not None
        assert len(lister.inspect_memories("alice")) == 2
        assert len(lister.inspect_memories("bob")) == 1
    assert phrase.encode() not in file_bytes(chroma_home)


def test_the_store_still_works_after_a_forget(chroma_home: Path) -> None:
    with MemoryHost.open(chroma_home) as host:
        forget.forget_subject(host, "alice", PHRASE)
    with MemoryHost.open(chroma_home) as host:
        lister = inspectable(host.provider)
        assert lister is not None
        assert sorted(m.text for m in lister.inspect_memories("alice")) == [
            "Alice drinks tea.",
            f"Alice 负责{PHRASE_ZH}。",
        ]
        with host.session(user_id="alice") as s:
            s.call_tool("memory", {"action": "add", "target": "user", "content": "Alice bikes."})
        host.flush(30)
        assert len(lister.inspect_memories("alice")) == 3


def test_scrub_zeroes_only_the_unused_capacity(tmp_path: Path) -> None:
    from hermes_core.providers.hnsw_files import HNSW_HEADER

    from hermes_memory_chroma.embedders import HashEmbedder
    from hermes_memory_chroma.store import MemoryStore

    store = MemoryStore(tmp_path / "chroma", HashEmbedder())
    try:
        segment = tmp_path / "chroma" / "seg"
        segment.mkdir()
        per, capacity, used = 16, 4, 2
        header = HNSW_HEADER.pack(1, 0, capacity, used, per, 0, 0, 0, 0, 0, 0, 0, 0.0, 0)
        (segment / "header.bin").write_bytes(header)
        body = b"U" * (per * used) + b"secret stray text!" + b"G" * (per * 2 - 18)
        (segment / "data_level0.bin").write_bytes(body)
        odd = tmp_path / "chroma" / "odd"
        odd.mkdir()
        (odd / "header.bin").write_bytes(header)
        (odd / "data_level0.bin").write_bytes(b"x" * 10)  # does not match its header
        assert store.scrub_index_files() == 1
        assert (segment / "data_level0.bin").read_bytes() == b"U" * 32 + bytes(32)
        assert (odd / "data_level0.bin").read_bytes() == b"x" * 10
    finally:
        store.close()


def test_the_inspector_page_shows_chroma_memories_and_replacements(chroma_home: Path) -> None:
    pytest.importorskip("starlette")
    import re

    from hermes_core.ui.app import create_app
    from hermes_core.ui.guard import Guard
    from starlette.testclient import TestClient

    with MemoryHost.open(chroma_home) as host:
        provider: Any = host.provider
        old = next(m for m in provider.inspect_memories("alice") if "tea" in m.text)
        new = next(m for m in provider.inspect_memories("alice") if "Falcon" in m.text)
        provider.store.supersede("alice", [old.id], new.id)
        guard = Guard(home=chroma_home)
        with TestClient(
            create_app(host, guard), base_url="http://127.0.0.1:9", follow_redirects=False
        ) as client:
            page = client.get("/provider", params={"u": "alice"}).text
            assert "chroma" in page and "Alice drinks tea." in page
            assert f"replaced by {new.id}" in page
            assert "Bob plays go." not in page
            assert "Bob plays go." in client.get("/provider", params={"u": "bob"}).text
            people = client.get("/").text
            assert re.search(r"alice</a></td>(<td>\d+</td>){5}<td>2</td>", people), people
            r = client.post(
                "/provider/forget", data={"u": "alice", "id": new.id, "csrf": guard.csrf}
            )
            assert r.status_code == 303 and "ok=1" in r.headers["location"]
            assert "Falcon" not in client.get("/provider", params={"u": "alice"}).text


def test_scrub_clears_a_real_chroma_index_of_deleted_text(tmp_path: Path) -> None:
    """chromadb writes its vector index files from uncleared allocations: after a delete,
    ``length.bin`` or ``data_level0.bin`` can hold the deleted text (five runs in eight
    here). Eight fresh indexes, each scrubbed: none keeps a byte of it."""
    import chromadb
    from chromadb.config import Settings
    from hermes_core.providers.hnsw_files import scrub_unused_capacity

    phrase = "桂林山水甲天下 Zanzibar"
    needle = "桂林山水".encode()
    for trial in range(8):
        root = tmp_path / f"trial{trial}"
        client = chromadb.PersistentClient(
            path=str(root), settings=Settings(anonymized_telemetry=False)
        )
        coll = client.get_or_create_collection("scrubbed")
        for i in range(5):
            coll.add(ids=[f"m{i}"], documents=[f"{i} {phrase * 50}"], embeddings=[[0.1 * i, 1.0]])
        coll.delete(ids=[f"m{i}" for i in range(5)])
        del coll, client
        scrub_unused_capacity(root)
        index_files = [p for p in root.glob("*/*.bin") if p.is_file()]
        assert index_files, "chromadb should persist a vector index"
        leaked = [p.name for p in index_files if needle in p.read_bytes()]
        assert leaked == [], f"trial {trial}: {leaked}"

"""The fact store on a real SQLite file: FTS5 (EN + ZH), trust, entities, HRR and fallback."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest
from hermes_memory_holographic import hrr as hrr_mod
from hermes_memory_holographic.store import FactStore, FactStoreError
from hermes_memory_holographic.text import extract_entities, fts_query, split_cjk


@pytest.fixture(params=[True, False], ids=["hrr", "keyword"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> FactStore:
    s = FactStore(tmp_path / "memory_store.db", use_hrr=request.param)
    # Without numpy (a minimal install) both variants run in keyword-fallback mode.
    assert (s.hrr is not None) is (request.param and hrr_mod.available())
    yield s  # type: ignore[misc]
    s.close()


def contents(facts: list) -> list[str]:  # type: ignore[type-arg]
    return [f.content for f in facts]


# ----------------------------------------------------------------- text


def test_split_cjk_and_query() -> None:
    assert split_cjk("我喜欢Python").split() == ["我", "喜", "欢", "Python"]
    q = fts_query("我的咖啡")
    assert '"咖 啡"' in q and '"咖"' in q
    assert fts_query("what is the") == ""


@pytest.mark.parametrize(
    "hostile",
    ['"', 'a" OR "b', "NEAR(a b)", "*", "col:value", "AND OR NOT", "(", "'; DROP TABLE facts; --"],
)
def test_hostile_queries_are_safe(store: FactStore, hostile: str) -> None:
    store.add("u", "A harmless fact about parentheses (and quotes).")
    try:
        store.search("u", hostile)
    except FactStoreError:
        pass  # "nothing to search for" is fine; an sqlite error is not
    assert store.count("u") == 1


def test_entity_extraction() -> None:
    ents = extract_entities(
        "Alice moved Project Atlas to PostgreSQL; see config.yaml and 《三体》."
    )
    assert {"Alice", "Project Atlas", "PostgreSQL", "config.yaml", "三体"} <= set(ents)
    assert "The" not in extract_entities("The weather is nice.")


# ----------------------------------------------------------------- writes


def test_add_dedups_and_stores_entities(store: FactStore) -> None:
    fact, created = store.add("u", "Alice uses  PostgreSQL.", category="project", tags=["db"])
    assert created and fact.trust == 0.5 and fact.category == "project"
    assert set(fact.entities) >= {"Alice", "PostgreSQL"}
    again, created2 = store.add("u", "alice uses postgresql.")
    assert not created2 and again.id == fact.id
    other, created3 = store.add("v", "Alice uses PostgreSQL.")
    assert created3 and other.id != fact.id  # the same text for another user is its own fact


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"content": ""}, "content"),
        ({"content": "x" * 2001}, "too long"),
        ({"content": "ok", "category": "secret"}, "category"),
        ({"content": "ok", "tags": [1, 2]}, "tags"),
        ({"content": "ok", "entities": "Alice"}, "entities"),
    ],
)
def test_add_rejects_bad_input(store: FactStore, kwargs: dict, match: str) -> None:  # type: ignore[type-arg]
    kwargs = dict(kwargs)
    content = kwargs.pop("content")
    with pytest.raises(FactStoreError, match=match):
        store.add("u", content, **kwargs)
    assert store.count("u") == 0


def test_search_english_and_chinese(store: FactStore) -> None:
    store.add("u", "The user drinks black coffee every morning.")
    store.add("u", "The quarterly budget report is due Friday.")
    store.add("u", "用户喜欢喝咖啡，不加糖。")
    store.add("u", "我们下周一开会讨论向量数据库的设计。")
    assert contents(store.search("u", "coffee"))[0] == "The user drinks black coffee every morning."
    zh = contents(store.search("u", "咖啡"))
    assert zh[0] == "用户喜欢喝咖啡，不加糖。"
    assert contents(store.search("u", "会"))[0] == "我们下周一开会讨论向量数据库的设计。"
    assert contents(store.search("u", "数据库"))[0] == "我们下周一开会讨论向量数据库的设计。"
    assert "budget" in contents(store.search("u", "budgets"))[0]  # prefix match
    assert store.search("u", "giraffe") == []


def test_trust_feedback_and_threshold(store: FactStore) -> None:
    fact, _ = store.add("u", "The deploy script lives in tools/deploy.sh.")
    assert store.feedback("u", fact.id, helpful=True).trust == pytest.approx(0.55)
    down = store.feedback("u", fact.id, helpful=False)
    assert down.trust == pytest.approx(0.45) and down.helpful == 1 and down.unhelpful == 1
    store.feedback("u", fact.id, helpful=False)  # 0.35
    assert contents(store.search("u", "deploy script", min_trust=0.3))
    store.feedback("u", fact.id, helpful=False)  # 0.25: below the default threshold
    assert store.search("u", "deploy script", min_trust=0.3) == []
    assert contents(store.search("u", "deploy script", min_trust=0.2))
    for _ in range(20):
        store.feedback("u", fact.id, helpful=True)
    assert store.get("u", fact.id).trust == 1.0  # type: ignore[union-attr]
    with pytest.raises(FactStoreError, match="no fact"):
        store.feedback("other-user", fact.id, helpful=True)


def test_update_reindexes(store: FactStore) -> None:
    fact, _ = store.add("u", "Alice lives in Lisbon.")
    updated = store.update(
        "u", fact.id, content="Alice lives in Porto.", tags=["moved"], trust_delta=0.2
    )
    assert updated.trust == pytest.approx(0.7) and updated.tags == ("moved",)
    assert store.search("u", "Lisbon") == []
    assert contents(store.search("u", "Porto")) == ["Alice lives in Porto."]
    assert contents(store.search("u", "moved")) == ["Alice lives in Porto."]
    with pytest.raises(FactStoreError, match="trust_delta"):
        store.update("u", fact.id, trust_delta=float("nan"))
    with pytest.raises(FactStoreError, match="no fact"):
        store.update("v", fact.id, content="hijack")
    assert store.get("u", fact.id).content == "Alice lives in Porto."  # type: ignore[union-attr]


def test_remove_clears_index_rows(store: FactStore, tmp_path: Path) -> None:
    fact, _ = store.add("u", "Temporary fact about Kafka.")
    with pytest.raises(FactStoreError):
        store.remove("v", fact.id)
    store.remove("u", fact.id)
    assert store.search("u", "Kafka") == []
    assert store.probe("u", "Kafka") == []
    db = sqlite3.connect(tmp_path / "memory_store.db")
    for table, col in (
        ("facts_fts", "rowid"),
        ("hrr_vectors", "fact_id"),
        ("fact_entities", "fact_id"),
    ):
        assert (
            db.execute(f"SELECT count(*) FROM {table} WHERE {col} = ?", (fact.id,)).fetchone()[0]
            == 0
        )
    assert db.execute("SELECT count(*) FROM entities").fetchone()[0] == 0


def test_probe_related_reason(store: FactStore) -> None:
    store.add("u", "Alice leads Project Atlas.")
    store.add("u", "Project Atlas uses PostgreSQL.")
    store.add("u", "PostgreSQL runs on the db1 server.")
    store.add("u", "Bob enjoys sailing.")
    store.add("u", "张伟负责《星图》项目。", entities=["张伟", "星图"])
    store.add("u", "《星图》项目使用 Redis。", entities=["星图", "Redis"])
    assert set(contents(store.probe("u", "Project Atlas"))) == {
        "Alice leads Project Atlas.",
        "Project Atlas uses PostgreSQL.",
    }
    related = contents(store.related("u", "Alice"))
    assert "Project Atlas uses PostgreSQL." in related
    assert "Alice leads Project Atlas." not in related and "Bob enjoys sailing." not in related
    assert contents(store.reason("u", ["Project Atlas", "PostgreSQL"])) == [
        "Project Atlas uses PostgreSQL."
    ]
    assert contents(store.reason("u", ["Alice", "PostgreSQL"])) == []
    assert contents(store.probe("u", "星图"))  # Chinese entities
    assert "《星图》项目使用 Redis。" in contents(store.related("u", "张伟"))
    with pytest.raises(FactStoreError, match="at least two"):
        store.reason("u", ["Alice"])


def test_contradict_en_zh(store: FactStore) -> None:
    store.add("u", "Alice prefers tabs for Python code.")
    store.add("u", "Alice does not prefer tabs for Python code.")
    store.add("u", "The office has 12 desks.")
    store.add("u", "The office has 15 desks.")
    store.add("u", "我喜欢喝绿茶。")
    store.add("u", "我不喜欢喝绿茶。")
    store.add("u", "Project Atlas ships on Friday.")
    pairs = {frozenset((a.content, b.content)): why for a, b, why in store.contradict("u")}
    assert (
        frozenset(
            {"Alice prefers tabs for Python code.", "Alice does not prefer tabs for Python code."}
        )
        in pairs
    )
    assert pairs[frozenset({"The office has 12 desks.", "The office has 15 desks."})].startswith(
        "different"
    )
    assert frozenset({"我喜欢喝绿茶。", "我不喜欢喝绿茶。"}) in pairs
    assert not any("Project Atlas ships on Friday." in p for p in pairs)


def test_temporal_decay_prefers_recent(tmp_path: Path) -> None:
    now = [1_000_000.0]
    s = FactStore(tmp_path / "m.db", half_life_days=7, clock=lambda: now[0])
    s.add("u", "The staging server is called alpha.")
    now[0] += 30 * 86400
    s.add("u", "The staging server is called beta.")
    assert contents(s.search("u", "staging server"))[0] == "The staging server is called beta."
    s.close()


def test_persists_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "memory_store.db"
    s = FactStore(path)
    s.add("u", "Persisted fact about Rust.")
    s.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    s2 = FactStore(path)
    assert contents(s2.search("u", "Rust")) == ["Persisted fact about Rust."]
    s2.close()


def test_vectors_are_reencoded_when_hrr_dim_changes_or_numpy_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hrr_mod.available():
        pytest.skip("needs the [hrr] extra (numpy)")
    path = tmp_path / "m.db"
    with monkeypatch.context() as m:  # first written without numpy: no vectors at all
        m.setattr(hrr_mod, "available", lambda: False)
        s = FactStore(path, use_hrr=True)
        s.add("u", "Alice leads Project Atlas.", entities=["Alice", "Project Atlas"])
        s.add("u", "王芳负责雅典娜项目。", entities=["王芳"])
        s.close()

    def dims(store: FactStore) -> list[int]:
        return [r[0] for r in store._db.execute("SELECT dim FROM hrr_vectors ORDER BY fact_id")]

    s = FactStore(path, use_hrr=True, hrr_dim=256)
    assert s.reencoded == 2 and dims(s) == [256, 256]
    s.close()
    s = FactStore(path, use_hrr=True, hrr_dim=512)  # a new dimension: all re-encoded
    assert s.reencoded == 2 and dims(s) == [512, 512]
    vectors = s._user_vectors("u")
    assert len(vectors) == 2 and vectors.dim == 512
    assert contents(s.reason("u", ["Alice", "Project Atlas"])) == ["Alice leads Project Atlas."]
    s.close()
    s = FactStore(path, use_hrr=True, hrr_dim=512)  # nothing stale: nothing done
    assert s.reencoded == 0
    s.close()


def test_numpy_missing_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hrr_mod, "available", lambda: False)
    s = FactStore(tmp_path / "m.db", use_hrr=True)
    assert s.hrr is None
    s.add("u", "Alice leads Project Atlas.")
    s.add("u", "Project Atlas uses PostgreSQL.")
    assert len(s.probe("u", "Project Atlas")) == 2
    assert contents(s.reason("u", ["Alice", "Project Atlas"])) == ["Alice leads Project Atlas."]
    s.close()

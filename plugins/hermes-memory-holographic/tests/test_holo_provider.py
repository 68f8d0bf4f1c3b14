"""The provider: settings, prefetch format, mirroring, auto-extract, tools, isolation."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_memory_holographic import HolographicProvider, HolographicSettings
from hermes_memory_holographic.provider import extract_preferences
from holo_testutil import call, make_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import MemoryWrite, ToolContext
from hermes_core.providers.base import load_provider_settings
from hermes_core.testing.properties import two_user_writes, with_fixtures

Factory = Callable[..., HolographicProvider]


def test_settings_defaults_descriptions_and_lenient_bool(home: Path) -> None:
    s = load_provider_settings(HolographicSettings, "holographic", home, {"auto_extract": "false"})
    assert s.auto_extract is False
    assert load_provider_settings(
        HolographicSettings, "holographic", home, {"auto_extract": "True"}
    ).auto_extract
    assert (s.default_trust, s.min_trust_threshold, s.hrr_dim, s.hrr_weight) == (
        0.5,
        0.3,
        1024,
        0.3,
    )
    assert s.resolved_db_path(home) == home / "memory_store.db"
    for name, info in HolographicSettings.model_fields.items():
        assert info.description, name


def test_db_path_expands_hermes_home(home: Path, make_provider: Factory) -> None:
    p = make_provider(db_path="$HERMES_HOME/facts/store.db")
    call(p, make_session(home), "fact_store", action="add", content="Path check fact.")
    assert (home / "facts" / "store.db").is_file()
    assert p.is_available() and p.unavailable_reason() == ""


def test_prefetch_format_and_threshold(home: Path, make_provider: Factory) -> None:
    p = make_provider()
    s = make_session(home)
    keep = call(
        p, s, "fact_store", action="add", content="The user prefers dark mode in every editor."
    )
    low = call(
        p, s, "fact_store", action="add", content="The user once tried light mode editor themes."
    )
    for _ in range(3):
        call(p, s, "fact_feedback", action="unhelpful", fact_id=low["fact_id"])  # 0.5 → 0.2
    ctx = p.prefetch(s, "which editor mode?")
    assert ctx is not None and ctx.count == 1
    assert ctx.text.splitlines() == [
        "## Holographic Memory",
        "- [0.50] The user prefers dark mode in every editor.",
    ]
    assert p.store.get("alice", keep["fact_id"]).retrieval_count == 1  # type: ignore[union-attr]
    assert p.prefetch(s, "completely unrelated giraffes") is None
    assert p.prefetch(s, "") is None


def test_prefetch_caps_at_five(home: Path, make_provider: Factory) -> None:
    p = make_provider()
    s = make_session(home)
    for i in range(8):
        call(p, s, "fact_store", action="add", content=f"Kubernetes note number {i} about pods.")
    ctx = p.prefetch(s, "kubernetes pods")
    assert ctx is not None and ctx.count == 5 and len(ctx.text.splitlines()) == 6


def test_on_memory_write_mirrors_adds_only(home: Path, make_provider: Factory) -> None:
    p = make_provider()
    s = make_session(home)
    p.on_memory_write(s, MemoryWrite(action="add", target="user", content="用户住在杭州。"))
    p.on_memory_write(
        s, MemoryWrite(action="add", target="memory", content="Repo uses uv for packaging.")
    )
    p.on_memory_write(
        s,
        MemoryWrite(
            action="replace",
            target="user",
            content="用户住在北京。",
            previous_content="用户住在杭州。",
        ),
    )
    p.on_memory_write(
        s,
        MemoryWrite(
            action="remove",
            target="memory",
            content="",
            previous_content="Repo uses uv for packaging.",
        ),
    )
    facts = {f.content: f.category for f in p.store.list_facts("alice", limit=50)}
    assert facts == {"用户住在杭州。": "user_pref", "Repo uses uv for packaging.": "general"}


def test_auto_extract_off_by_default_and_string_false(home: Path, make_provider: Factory) -> None:
    messages = [{"role": "user", "content": "I prefer Vim over Emacs. 我喜欢喝乌龙茶。"}]
    for p in (make_provider(), make_provider(auto_extract="false")):
        p.on_session_end(make_session(home), messages)
        assert p.store.count("alice") == 0


def test_auto_extract_en_zh(home: Path, make_provider: Factory) -> None:
    p = make_provider(auto_extract=True)
    messages = [
        {"role": "system", "content": "I like being a system prompt."},
        {
            "role": "user",
            "content": "Fix the bug please. I prefer Vim over Emacs. My timezone is UTC+8.",
        },
        {"role": "assistant", "content": "I love helping."},
        {"role": "user", "content": [{"type": "text", "text": "我喜欢喝乌龙茶。今天天气不错。"}]},
    ]
    assert extract_preferences(messages) == [
        "I prefer Vim over Emacs.",
        "My timezone is UTC+8.",
        "我喜欢喝乌龙茶。",
    ]
    p.on_session_end(make_session(home), messages)
    facts = p.store.list_facts("alice", limit=10)
    assert {f.content for f in facts} == {
        "I prefer Vim over Emacs.",
        "My timezone is UTC+8.",
        "我喜欢喝乌龙茶。",
    }
    assert all(f.category == "user_pref" and "auto" in f.tags for f in facts)


def test_every_fact_store_action(home: Path, make_provider: Factory) -> None:
    p = make_provider()
    s = make_session(home)
    a = call(
        p,
        s,
        "fact_store",
        action="add",
        content="Alice leads Project Atlas.",
        category="project",
        tags=["team"],
    )
    assert a["success"] and a["created"] and a["fact"]["category"] == "project"
    b = call(
        p, s, "fact_store", action="add", content="Project Atlas uses PostgreSQL.", entities=["db"]
    )
    call(p, s, "fact_store", action="add", content="Project Atlas does not use PostgreSQL.")
    assert (
        call(p, s, "fact_store", action="add", content="alice leads project atlas.")["created"]
        is False
    )
    assert (
        call(p, s, "fact_store", action="search", query="who leads atlas")["facts"][0]["fact_id"]
        == a["fact_id"]
    )
    assert call(p, s, "fact_store", action="probe", entity="Project Atlas")["count"] == 3
    related = call(p, s, "fact_store", action="related", entity="Alice")
    assert b["fact_id"] in [f["fact_id"] for f in related["facts"]]
    reason = call(p, s, "fact_store", action="reason", entities=["Alice", "Project Atlas"])
    assert [f["fact_id"] for f in reason["facts"]] == [a["fact_id"]]
    contra = call(p, s, "fact_store", action="contradict")
    assert contra["count"] >= 1 and "PostgreSQL" in json.dumps(contra["contradictions"][0])
    up = call(
        p, s, "fact_store", action="update", fact_id=b["fact_id"], trust_delta=0.3, category="tool"
    )
    assert up["fact"]["trust"] == 0.8 and up["fact"]["category"] == "tool"
    listed = call(p, s, "fact_store", action="list", limit=2)
    assert listed["count"] == 2 and listed["facts"][0]["fact_id"] == b["fact_id"]
    assert call(p, s, "fact_store", action="list", category="project")["count"] == 1
    rm = call(p, s, "fact_store", action="remove", fact_id=str(a["fact_id"]))
    assert rm["removed"]["content"] == "Alice leads Project Atlas."
    assert call(p, s, "fact_store", action="search", query="Alice leads")["count"] == 0
    fb = call(p, s, "fact_feedback", action="helpful", fact_id=b["fact_id"])
    assert fb == {"success": True, "fact_id": b["fact_id"], "trust": 0.85}


@pytest.mark.parametrize(
    "tool,args,needle",
    [
        ("fact_store", {}, "action"),
        ("fact_store", {"action": "explode"}, "action"),
        ("fact_store", {"action": "add"}, "content"),
        ("fact_store", {"action": "add", "content": "x", "category": "secret"}, "category"),
        ("fact_store", {"action": "search"}, "query"),
        ("fact_store", {"action": "probe"}, "entity"),
        ("fact_store", {"action": "reason", "entities": "Alice"}, "entities"),
        ("fact_store", {"action": "update", "fact_id": 1}, "update needs"),
        ("fact_store", {"action": "update", "fact_id": 99, "content": "x"}, "no fact"),
        ("fact_store", {"action": "remove"}, "fact_id"),
        ("fact_store", {"action": "list", "limit": 0}, "limit"),
        ("fact_store", {"action": "search", "query": "x", "min_trust": 5}, "min_trust"),
        ("fact_feedback", {"action": "meh", "fact_id": 1}, "helpful"),
        ("fact_feedback", {"action": "helpful", "fact_id": "abc"}, "fact_id"),
    ],
)
def test_bad_input_is_a_clear_error(
    home: Path, make_provider: Factory, tool: str, args: dict[str, Any], needle: str
) -> None:
    p = make_provider()
    out = call(p, make_session(home), tool, **args)
    assert out["success"] is False and needle in out["error"], out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=15),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
KEYS = [
    "action",
    "content",
    "query",
    "entity",
    "entities",
    "fact_id",
    "category",
    "tags",
    "trust_delta",
    "min_trust",
    "limit",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tool=st.sampled_from(["fact_store", "fact_feedback"]),
    args=st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6),
    action=st.sampled_from(
        [
            "add",
            "search",
            "probe",
            "related",
            "reason",
            "contradict",
            "update",
            "remove",
            "list",
            "helpful",
            "unhelpful",
        ]
    ),
)
def test_handlers_never_raise(
    home: Path, make_provider: Factory, tool: str, args: dict[str, Any], action: str
) -> None:
    p = _shared(home, make_provider)
    args = {"action": action, **args} if "action" not in args else args
    session = make_session(home, "fuzz")
    spec = {t.name: t for t in p.register_tools(session)}[tool]
    out = json.loads(spec.handler(args, ToolContext(session=session)))
    assert isinstance(out["success"], bool)
    if not out["success"]:
        assert isinstance(out["error"], str) and out["error"]


_SHARED: dict[Path, HolographicProvider] = {}


def _shared(home: Path, make_provider: Factory) -> HolographicProvider:
    if home not in _SHARED:
        _SHARED.clear()
        _SHARED[home] = make_provider()
    return _SHARED[home]


ALPHA = ["apple orchard", "anchor chain", "amber lamp", "安静的湖", "阿尔卑斯山", "苹果园"]
BRAVO = ["banana boat", "bronze bell", "bucket list", "北极熊", "香蕉船", "桥梁设计"]


@with_fixtures(40)
@given(
    writes=two_user_writes(len(ALPHA), ["tool", "mirror", "extract"], max_size=10),
    query=st.sampled_from(ALPHA + BRAVO + ["lamp boat", "湖 熊", "note"]),
)
def test_isolation_property(
    home: Path, make_provider: Factory, writes: list[tuple[str, int, str]], query: str
) -> None:
    """Random interleavings of writes by A and B: A's recall never contains B's content."""
    p = _shared(home, make_provider)
    p.settings = p.settings.model_copy(update={"auto_extract": True})
    run = uuid.uuid4().hex[:6]
    users = {w: make_session(home, f"{w}-{run}", sid=f"{w}{run}") for w in "AB"}
    b_texts = set()
    for n, (who, idx, how) in enumerate(writes):
        text = f"I like {(ALPHA if who == 'A' else BRAVO)[idx]} note {n} {run}."
        if who == "B":
            b_texts.add(text)
        s = users[who]
        if how == "tool":
            call(p, s, "fact_store", action="add", content=text, entities=[f"{who}{run}", "Shared"])
        elif how == "mirror":
            p.on_memory_write(s, MemoryWrite(action="add", target="user", content=text))
        else:
            p.on_session_end(s, [{"role": "user", "content": text}])
    a = users["A"]
    outputs = [
        json.dumps(call(p, a, "fact_store", action=act, **kw), ensure_ascii=False)
        for act, kw in [
            ("search", {"query": f"{query} {run}", "min_trust": 0}),
            ("probe", {"entity": "Shared", "min_trust": 0}),
            ("related", {"entity": f"A{run}", "min_trust": 0}),
            ("reason", {"entities": ["Shared", f"B{run}"], "min_trust": 0}),
            ("contradict", {}),
            ("list", {"limit": 100}),
        ]
    ]
    ctx = p.prefetch(a, f"{query} {run}")
    outputs.append(ctx.text if ctx else "")
    for text in b_texts:
        for out in outputs:
            assert text not in out

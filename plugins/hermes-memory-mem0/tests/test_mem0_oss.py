"""Mode oss: the real ``mem0.Memory`` with chroma and the bundled embedder, offline.

The LLM is the loopback ``FakeLLMServer``; every other socket is refused by the ``offline``
fixture, so a hub download or telemetry call would fail these tests.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_memory_mem0 import Mem0Provider
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mem0_testutil import ctx, make_session

from hermes_core import MemoryWrite, Turn
from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.testing.fakes import make_turn
from hermes_core.testing.harness import tool_result as tool
from hermes_core.testing.processes import last_json_line, run_python
from hermes_core.testing.properties import two_user_writes, with_fixtures


def test_storage_lives_under_home_and_telemetry_is_off(
    home: Path, make_provider: Callable[..., Mem0Provider]
) -> None:
    provider = make_provider()
    s = make_session(home, "alice")
    assert tool(provider, s, "mem0_add", content="I drink oolong tea.")["success"]
    assert (home / "mem0" / "chroma").is_dir()
    assert (home / "mem0" / "history.db").is_file()
    import mem0.memory.telemetry as telemetry

    assert telemetry.MEM0_TELEMETRY is False
    assert os.environ["MEM0_TELEMETRY"] == "False"


def test_a_fresh_process_turns_telemetry_off_before_mem0_is_imported(tmp_path: Path) -> None:
    """Run in a clean interpreter with no MEM0_* variables (this suite's conftest sets them,
    so only a subprocess can show that the provider does it on its own)."""

    home, user_home = tmp_path / "hermes", tmp_path / "user"
    user_home.mkdir()
    script = (
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "from hermes_memory_mem0 import Mem0Provider\n"
        "from hermes_memory_mem0.settings import Mem0Settings\n"
        "from mem0_testutil import ctx, make_session\n"
        "assert 'mem0' not in sys.modules, 'mem0 imported before the provider asked for it'\n"
        "home = Path(sys.argv[1])\n"
        "p = Mem0Provider(Mem0Settings(), home)\n"
        "s = make_session(home, 'alice')\n"
        "spec = {t.name: t for t in p.register_tools(s)}['mem0_add']\n"
        "out = json.loads(spec.handler({'content': '我喜欢乌龙茶 / I like oolong.'}, ctx(s)))\n"
        "import mem0.memory.telemetry as t\n"
        "print(json.dumps({'ok': out['success'], 'tel': os.environ['MEM0_TELEMETRY'],\n"
        "    'dir': os.environ['MEM0_DIR'], 'flag': t.MEM0_TELEMETRY}))\n"
        "p.shutdown()\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEM0_", "HERMES_")) and k != "ANONYMIZED_TELEMETRY"
    }
    env["HOME"] = str(user_home)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    seen = last_json_line(run_python(script, str(home), env=env, timeout=240))
    assert seen["ok"] is True
    assert seen["tel"] == "False" and seen["flag"] is False
    assert Path(seen["dir"]).is_relative_to(home)
    assert not (user_home / ".mem0").exists()


def test_sync_without_llm_stores_verbatim_en_zh(
    home: Path, make_provider: Callable[..., Mem0Provider]
) -> None:
    provider = make_provider()
    s = make_session(home, "alice")
    assert provider.sync_infer(s) is False
    provider.sync(s, make_turn("My favourite drink is black coffee.", "Got it.", session_id="s1"))
    provider.sync(
        s, make_turn("我的狗叫旺财，它三岁了。", "好的，记住了。", session_id="s1", number=2)
    )
    texts = {i.memory for i in provider.backend(s).list(user_id="alice", limit=50)}
    assert {"My favourite drink is black coffee.", "我的狗叫旺财，它三岁了。"} <= texts
    got = provider.prefetch(s, "what coffee do I like?")
    assert got is not None and "black coffee" in got.text
    zh = provider.search(s, "狗的名字", top_k=1)
    assert zh and "旺财" in zh[0].memory


def test_sync_with_llm_extracts_facts_through_fake_server(home: Path) -> None:
    with FakeLLMServer() as llm:
        llm.script_chat(content=json.dumps({"memory": [{"text": "User is allergic to peanuts"}]}))
        provider = Mem0Provider(Mem0Provider.Settings(), home)
        try:
            s = make_session(home, "alice", llm_url=llm.base_url)
            assert provider.sync_infer(s) is True
            provider.sync(s, make_turn("I can't eat peanuts, I'm allergic.", session_id="s1"))
            assert len(llm.chat_requests) == 1
            sent = json.dumps(llm.chat_requests[0], ensure_ascii=False)
            assert "peanuts" in sent
            memories = [i.memory for i in provider.backend(s).list(user_id="alice", limit=10)]
            assert memories == ["User is allergic to peanuts"]
        finally:
            provider.shutdown()


def test_llm_failure_falls_back_to_verbatim(home: Path) -> None:
    with FakeLLMServer() as llm:
        for _ in range(3):
            llm.script_error(401, "bad key")  # not retried by the OpenAI client
        provider = Mem0Provider(Mem0Provider.Settings(), home)
        try:
            s = make_session(home, "alice", llm_url=llm.base_url)
            turn = Turn(session_id="s1", number=1, user_text="我对花生过敏。", reply="记住了。")
            provider.sync(s, turn)
            assert llm.chat_requests  # extraction was attempted
            memories = {i.memory for i in provider.backend(s).list(user_id="alice", limit=10)}
            assert memories == {"我对花生过敏。", "记住了。"}
            assert provider.breaker.failures == 0
        finally:
            provider.shutdown()


def test_tools_round_trip_and_scope(home: Path, make_provider: Callable[..., Mem0Provider]) -> None:
    provider = make_provider()
    alice, bob = make_session(home, "alice"), make_session(home, "bob")
    added = tool(provider, alice, "mem0_add", content="Alice works at the Lisbon office.")
    mem_id = added["results"][0]["id"]
    tool(provider, bob, "mem0_add", content="Bob works at the Osaka office.")
    found = tool(provider, alice, "mem0_search", query="which office?", top_k=5)
    assert [r["memory"] for r in found["results"]] == ["Alice works at the Lisbon office."]
    denied = tool(provider, bob, "mem0_update", memory_id=mem_id, content="moved")
    assert denied["success"] is False and "not found" in denied["error"]
    assert tool(provider, alice, "mem0_update", memory_id=mem_id, content="Alice works in Porto.")[
        "success"
    ]
    assert provider.backend(alice).get(mem_id).memory == "Alice works in Porto."  # type: ignore[union-attr]
    assert tool(provider, bob, "mem0_delete", memory_id=mem_id)["success"] is False
    assert tool(provider, alice, "mem0_delete", memory_id=mem_id)["success"] is True
    assert provider.backend(alice).get(mem_id) is None


def test_on_memory_write_mirrors_into_oss(
    home: Path, make_provider: Callable[..., Mem0Provider]
) -> None:
    provider = make_provider()
    s = make_session(home, "alice")
    provider.on_memory_write(
        s, MemoryWrite(action="add", target="memory", content="项目使用 PostgreSQL 16。")
    )
    got = provider.search(s, "数据库版本")
    assert got and got[0].memory == "项目使用 PostgreSQL 16。"


def test_bad_tool_input_never_raises(
    home: Path, make_provider: Callable[..., Mem0Provider]
) -> None:
    provider = make_provider()
    s = make_session(home, "alice")
    for name, args in [
        ("mem0_search", {}),
        ("mem0_search", {"query": 5}),
        ("mem0_search", {"query": "x", "top_k": "many"}),
        ("mem0_add", {"content": ""}),
        ("mem0_add", {"content": "x" * 5000}),
        ("mem0_update", {"memory_id": "nope"}),
        ("mem0_update", {"memory_id": "nope", "content": "c"}),
        ("mem0_delete", {"memory_id": None}),
    ]:
        out = tool(provider, s, name, **args)
        assert out["success"] is False and out["error"], (name, args)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(["mem0_search", "mem0_update", "mem0_delete"]),
    args=st.dictionaries(
        st.sampled_from(["query", "top_k", "memory_id", "content", "junk"]), json_values, max_size=4
    ),
)
def test_handlers_fuzz(
    name: str, args: dict[str, Any], home: Path, make_provider: Callable[..., Mem0Provider]
) -> None:
    provider = _shared(home, make_provider)
    out = json.loads(
        {t.name: t for t in provider.register_tools(make_session(home, "fuzz"))}[name].handler(
            args, ctx(make_session(home, "fuzz"))
        )
    )
    assert isinstance(out.get("success"), bool)
    if not out["success"]:
        assert isinstance(out["error"], str) and out["error"]


_PROVIDERS: dict[Path, Mem0Provider] = {}


def _shared(home: Path, make_provider: Callable[..., Mem0Provider]) -> Mem0Provider:
    if home not in _PROVIDERS:
        _PROVIDERS.clear()
        _PROVIDERS[home] = make_provider()
    return _PROVIDERS[home]


ALPHA = ["apple", "anchor", "amber", "arrow", "苹果", "安静", "阿尔卑斯"]
BRAVO = ["banana", "bridge", "bronze", "bucket", "香蕉", "桥梁", "北极熊"]


@with_fixtures(12)
@given(
    writes=two_user_writes(len(ALPHA), ["tool", "sync", "mirror"], max_size=8),
    query_word=st.sampled_from(ALPHA + BRAVO),
)
def test_isolation_property(
    writes: list[tuple[str, int, str]],
    query_word: str,
    home: Path,
    make_provider: Callable[..., Mem0Provider],
) -> None:
    """Random interleavings of writes by A and B: A's recall never contains B's content."""
    provider = _shared(home, make_provider)
    run = uuid.uuid4().hex[:8]
    users = {
        "A": make_session(home, f"A-{run}", sid=f"a{run}"),
        "B": make_session(home, f"B-{run}", sid=f"b{run}"),
    }
    b_texts: set[str] = set()
    for n, (who, idx, how) in enumerate(writes):
        words = ALPHA if who == "A" else BRAVO
        text = f"{who} note {n}: {words[idx]} {run}"
        if who == "B":
            b_texts.add(text)
        s = users[who]
        if how == "tool":
            assert tool(provider, s, "mem0_add", content=text)["success"]
        elif how == "sync":
            provider.sync(s, Turn(session_id=s.id, number=n, user_text=text, reply=""))
        else:
            provider.on_memory_write(s, MemoryWrite(action="add", target="user", content=text))
    a = users["A"]
    recalled = [i.memory for i in provider.search(a, f"{query_word} {run}", top_k=50)]
    ctx_block = provider.prefetch(a, f"{query_word} {run}")
    listed = [i.memory for i in provider.backend(a).list(user_id=a.user_id or "", limit=100)]
    tool_out = json.dumps(
        tool(provider, a, "mem0_search", query=f"{query_word} {run}", top_k=50), ensure_ascii=False
    )
    for text in b_texts:
        assert text not in recalled
        assert text not in listed
        assert text not in tool_out
        assert ctx_block is None or text not in ctx_block.text

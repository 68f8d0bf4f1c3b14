"""Isolation property: for random interleavings of writes by users A and B (through every
write path), A's recall never contains B's content, and forgetting A leaves B intact."""

from __future__ import annotations

from collections.abc import Callable

from hermes_core.testing.fakes import make_turn
from hermes_core.types import MemoryWrite, SessionInfo, ToolContext
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_memory_chroma.provider import ChromaProvider

WORDS = ["apple", "river", "piano", "garden", "rocket", "咖啡", "记忆", "火车", "lamp", "zebra"]

_op = st.tuples(
    st.sampled_from(["A", "B"]),
    st.sampled_from(["sync", "tool", "mirror", "direct"]),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)


def test_users_never_see_each_other(
    make_provider: Callable[..., ChromaProvider], session_for: Callable[..., SessionInfo]
) -> None:
    provider = make_provider(compact_threshold=4)
    sessions = {"A": session_for("user-a", "sa"), "B": session_for("user-b", "sb")}
    tools = {t.name: t for t in provider.register_tools(sessions["A"])}
    counter = {"n": 0}

    @settings(max_examples=25, deadline=None)
    @given(ops=st.lists(_op, min_size=1, max_size=8), query=st.sampled_from(WORDS))
    def run(ops: list[tuple[str, str, list[str]]], query: str) -> None:
        for who, path, words in ops:
            counter["n"] += 1
            s = sessions[who]
            # every text carries an owner marker that must never cross over
            text = f"owner{who} {' '.join(words)} n{counter['n']}"
            if path == "sync":
                provider.sync(s, make_turn(text, "ok", session_id=s.id, number=counter["n"]))
            elif path == "tool":
                tools["chroma_remember"].handler({"content": text}, ToolContext(session=s))
            elif path == "mirror":
                provider.on_memory_write(s, MemoryWrite("add", "memory", text))
            else:
                provider.store.add(provider.user_for(s), text)
        for me, other in (("A", "B"), ("B", "A")):
            ctx = provider.prefetch(sessions[me], query)
            if ctx is not None:
                assert f"owner{other}" not in ctx.text
            found = tools["chroma_search"].handler(
                {"query": query, "limit": 20}, ToolContext(session=sessions[me])
            )
            assert f"owner{other}" not in found
            for mem in provider.store.list_memories(
                provider.user_for(sessions[me]), include_superseded=True
            ):
                assert f"owner{other}" not in mem.content

    run()
    before_b = provider.store.count("user-b", include_superseded=True)
    provider.clear_user_memory("user-a")
    assert provider.store.count("user-a", include_superseded=True) == 0
    assert provider.store.fts.count("user-a") == 0
    assert provider.store.count("user-b", include_superseded=True) == before_b

"""The built-in compressor wired through the real MemoryHost / Session."""

from __future__ import annotations

from pathlib import Path

import pytest
from compkit import assert_valid_openai, newest_user, transcript

from hermes_core.host import MemoryHost
from hermes_core.layers.compression.metrics import load_stats
from hermes_core.testing.fake_llm import FakeLLMServer


def test_session_compresses_with_fallback_and_records_metrics(memory_host: MemoryHost) -> None:
    with memory_host.session() as session:
        msgs = transcript(40, chinese=True)
        out = session.maybe_compress(msgs, context_length=8_000)
        assert len(out) < len(msgs)
        assert_valid_openai(out)
        assert newest_user(out) == newest_user(msgs)
        assert session.compression.count == 1 and session.compression.fallbacks == 1
        stats = load_stats(memory_host.home, session.info.id)
    assert stats.count == 1 and stats.fallbacks == 1


def test_session_uses_configured_summariser(
    hermes_home: Path, fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_LLM__BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("HERMES_LLM__MODEL", fake_llm.model)
    fake_llm.script_chat("## Goal\n- 迁移数据库")
    host = MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False)
    try:
        with host.session() as session:
            out = session.maybe_compress(transcript(40), context_length=8_000)
            assert any("## Goal\n- 迁移数据库" in str(m.get("content")) for m in out)
            assert session.compression.fallbacks == 0
    finally:
        host.close()
    assert len(fake_llm.chat_requests) == 1

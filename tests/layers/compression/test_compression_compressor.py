"""The compressor end to end against the real loopback FakeLLMServer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pluggy
import pytest
from compkit import assert_valid_openai, newest_user, session, settings, transcript

from hermes_core.hookspecs import CompressionResult
from hermes_core.layers.compression.boundaries import find_boundaries
from hermes_core.layers.compression.compressor import tail_budget_tokens
from hermes_core.layers.compression.fallback import FALLBACK_NOTE
from hermes_core.layers.compression.messages import (
    SUMMARY_END_MARKER,
    SUMMARY_MARKER_KEY,
    SUMMARY_PREFIX,
)
from hermes_core.layers.compression.metrics import load_stats
from hermes_core.layers.compression.plugin import CompressionLayer
from hermes_core.layers.compression.summarizer import HEADINGS, summary_budget
from hermes_core.llm.client import LLMClient
from hermes_core.llm.tokens import estimate_messages_tokens
from hermes_core.markers import hookimpl
from hermes_core.settings.models import HermesSettings
from hermes_core.testing.fake_llm import FakeLLMServer
from hermes_core.types import CompressionBudget

CONTEXT = 400_000
SUMMARY = "## Goal\n- migrate billing\n\n## Critical Context\n- port 5433 refused"


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def _settings(server: FakeLLMServer | None, **compression: object) -> HermesSettings:
    llm = {"base_url": server.base_url, "model": server.model} if server else {}
    comp = {"protect_last_n": 4, "target_ratio": 0.1, **compression}
    return settings(llm=llm, compression=comp)


def _layer(sleep: SleepRecorder | None = None) -> CompressionLayer:
    rec = sleep or SleepRecorder()
    return CompressionLayer(
        client_factory=lambda s: LLMClient.from_settings(s, "compression", sleep=rec),
        main_client_factory=lambda s: LLMClient.from_settings(s, sleep=rec),
    )


def _budget(threshold: int = 3000, **kw: object) -> CompressionBudget:
    return CompressionBudget(
        context_length=CONTEXT,
        threshold_tokens=threshold,
        prompt_tokens=threshold,
        **kw,  # type: ignore[arg-type]
    )


def test_request_carries_template_and_budget(llm_server: FakeLLMServer, home: Path) -> None:
    llm_server.script_chat("<think>hmm</think>" + SUMMARY)
    s = _settings(llm_server)
    msgs = transcript(120)
    result = _layer().compress(session(home, s), msgs, _budget(), "")
    assert not result.fallback_used and not result.aborted and result.error is None
    assert result.summary == SUMMARY

    (request,) = llm_server.chat_requests
    prompt = request["messages"][1]["content"]
    positions = [prompt.index(h) for h in HEADINGS]
    assert positions == sorted(positions)
    b = find_boundaries(
        msgs,
        protect_first_n=s.compression.protect_first_n,
        protect_last_n=s.compression.protect_last_n,
        tail_budget_tokens=tail_budget_tokens(s.compression, 3000),
    )
    expected = summary_budget(estimate_messages_tokens(msgs[b.head_end : b.tail_start]), CONTEXT)
    assert expected > 2000
    assert f"Target ~{expected} tokens" in prompt
    assert "max_tokens" not in request  # the budget is guidance, not a wire cap

    out = list(result.messages)
    summary_msgs = [m for m in out if m.get(SUMMARY_MARKER_KEY)]
    assert len(summary_msgs) == 1
    text = summary_msgs[0]["content"]
    assert text.startswith(SUMMARY_PREFIX) and text.endswith(SUMMARY_END_MARKER)
    assert SUMMARY in text
    assert out[0] == msgs[0]
    assert newest_user(out) == newest_user(msgs)
    assert_valid_openai(out)
    assert result.tokens_after < result.tokens_before


def test_iterative_update_sends_previous_summary(llm_server: FakeLLMServer, home: Path) -> None:
    llm_server.script_chat(SUMMARY)
    llm_server.script_chat("## Goal\n- migrate billing (updated)")
    s = _settings(llm_server)
    layer = _layer()
    info = session(home, s)
    first = layer.compress(info, transcript(30), _budget(), "")
    grown = list(first.messages) + transcript(30)[1:]
    second = layer.compress(info, grown, _budget(), "")
    assert not second.fallback_used
    request = llm_server.chat_requests[1]["messages"][1]["content"]
    assert "PREVIOUS SUMMARY" in request and "port 5433 refused" in request
    assert "NEW TURNS TO INCORPORATE" in request
    assert SUMMARY_PREFIX not in request  # the old summary message is not re-serialised
    assert second.summary == "## Goal\n- migrate billing (updated)"
    assert sum(1 for m in second.messages if m.get(SUMMARY_MARKER_KEY)) == 1


def test_unavailable_model_falls_back_with_backoff(llm_server: FakeLLMServer, home: Path) -> None:
    for _ in range(8):
        llm_server.script_error(503, retry_after=1)
    sleep = SleepRecorder()
    s = _settings(llm_server)
    result = _layer(sleep).compress(session(home, s), transcript(30), _budget(), "")
    assert result.fallback_used and not result.aborted
    assert result.summary.startswith(FALLBACK_NOTE)
    assert "503" in (result.error or "")
    assert sleep.delays == [1.0] * s.llm.max_retries  # main == route: no second client
    assert_valid_openai(result.messages)


def test_malformed_and_empty_output_fall_back(llm_server: FakeLLMServer, home: Path) -> None:
    llm_server.script_raw("<html>gateway</html>")
    s = _settings(llm_server)
    assert _layer().compress(session(home, s), transcript(30), _budget(), "").fallback_used
    for _ in range(3):
        llm_server.script_chat("<think>only thoughts</think>")
    result = _layer().compress(session(home, s, "s2"), transcript(30), _budget(), "")
    assert result.fallback_used
    assert len(llm_server.chat_requests) == 1 + 3  # max_attempts = 3


def test_auth_error_keeps_transcript_with_clear_message(home: Path) -> None:
    with FakeLLMServer(api_key="sk-right-key-0000") as server:
        s = _settings(server)
        s = s.model_copy(update={"llm": s.llm.model_copy(update={"api_key": None})})
        msgs = transcript(30)
        result = _layer().compress(session(home, s), msgs, _budget(), "")
    assert result.aborted and not result.fallback_used
    assert list(result.messages) == msgs
    assert "HERMES_LLM__API_KEY" in (result.error or "")
    assert "transcript kept" in (result.error or "")
    stats = load_stats(home, "s1")
    assert (stats.count, stats.aborted) == (0, 1)


def test_quota_error_keeps_transcript(llm_server: FakeLLMServer, home: Path) -> None:
    llm_server.script_error(429, "You exceeded your current quota", code="insufficient_quota")
    msgs = transcript(30)
    result = _layer().compress(session(home, _settings(llm_server)), msgs, _budget(), "")
    assert result.aborted and list(result.messages) == msgs
    assert "quota" in (result.error or "")


def test_abort_on_summary_failure(llm_server: FakeLLMServer, home: Path) -> None:
    for _ in range(4):
        llm_server.script_error(500)
    s = _settings(llm_server, abort_on_summary_failure=True)
    msgs = transcript(30)
    result = _layer().compress(session(home, s), msgs, _budget(), "")
    assert result.aborted and list(result.messages) == msgs
    assert "abort_on_summary_failure" in (result.error or "")


def test_route_failure_retries_once_on_main_model(home: Path) -> None:
    with FakeLLMServer(strict_models=True) as server:
        server.script_chat(SUMMARY)
        s = settings(
            llm={
                "base_url": server.base_url,
                "model": server.model,
                "auxiliary": {"compression": {"model": "missing-small-model"}},
            },
            compression={"protect_last_n": 4, "target_ratio": 0.1},
        )
        result = _layer().compress(session(home, s), transcript(30), _budget(), "")
        assert [r["model"] for r in server.chat_requests] == ["missing-small-model", "fake-model"]
    assert not result.fallback_used and result.summary == SUMMARY


def test_notes_focus_language_and_secrets_reach_the_prompt(
    llm_server: FakeLLMServer, home: Path
) -> None:
    llm_server.script_chat("## Goal\n- 迁移数据库")
    msgs = transcript(30, chinese=True)
    msgs[5] = {"role": "user", "content": "我的 api_key=sk-live-abcdefghijklmnop1234 请保存"}
    notes = "用户偏好：使用 PostgreSQL"
    layer = _layer()
    result = layer.compress(
        session(home, _settings(llm_server)), msgs, _budget(focus="数据库"), notes
    )
    assert not result.fallback_used
    request = llm_server.chat_requests[0]["messages"]
    assert "Chinese" in request[0]["content"]
    prompt = request[1]["content"]
    assert (
        '<memory-provider-context>\n"用户偏好：使用 PostgreSQL"\n</memory-provider-context>'
        in prompt
    )
    assert "FOCUS TOPIC: 数据库" in prompt
    assert "sk-live-abcdefghijklmnop1234" not in prompt and "[REDACTED]" in prompt


def test_no_model_configured_uses_fallback(home: Path) -> None:
    msgs = transcript(30, chinese=True)
    result = _layer().compress(session(home, _settings(None)), msgs, _budget(), "")
    assert result.fallback_used and result.error is None
    assert "预算是" in result.summary
    assert result.tokens_after < result.tokens_before
    assert_valid_openai(result.messages)


def test_anti_thrash_stops_automatic_compaction(home: Path) -> None:
    layer = _layer()
    info = session(home, _settings(None))
    msgs = transcript(30)
    # a threshold nothing can get under: every compaction counts as ineffective
    first = layer.compress(info, msgs, _budget(threshold=10), "")
    assert not first.aborted and layer.state("s1").ineffective_streak == 1
    second = layer.compress(
        info, list(first.messages) + transcript(10)[1:], _budget(threshold=10), ""
    )
    assert not second.aborted and "automatic compaction stopped" in (second.error or "")
    third = layer.compress(info, list(second.messages), _budget(threshold=10), "")
    assert third.aborted and "/compress <topic>" in (third.error or "")
    manual = layer.compress(
        info, list(second.messages) + transcript(20)[1:], _budget(manual=True), ""
    )
    assert not manual.aborted
    layer.on_session_end(info)
    assert layer.state("s1").ineffective_streak == 0


def test_metrics_persisted_without_touching_other_tables(home: Path) -> None:
    db = home / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO sessions VALUES ('other-layer')")
    layer = _layer()
    info = session(home, _settings(None))
    layer.compress(info, transcript(30), _budget(), "")
    layer.compress(info, transcript(2), _budget(), "")  # too short: aborted
    stats = load_stats(home, "s1")
    assert (stats.count, stats.aborted, stats.fallbacks) == (1, 1, 1)
    assert stats.tokens_before > stats.tokens_after > 0 and stats.summary_tokens > 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id FROM sessions").fetchall() == [("other-layer",)]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert load_stats(home, "nobody").count == 0
    assert load_stats(home / "absent").count == 0
    assert not (home / "absent" / "state.db").exists()


def test_hookimpl_is_trylast_and_replaceable(home: Path) -> None:
    from hermes_core.plugins import create_plugin_manager

    pm: pluggy.PluginManager = create_plugin_manager(load_entrypoints=False)
    info = session(home, _settings(None))
    kwargs = {"session": info, "messages": transcript(30), "budget": _budget(), "notes": ""}
    builtin = pm.hook.compress(**kwargs)
    assert isinstance(builtin, CompressionResult) and builtin.fallback_used

    class Replacement:
        @hookimpl
        def compress(self, messages: list[dict]) -> CompressionResult:
            return CompressionResult(messages=tuple(messages[-2:]), summary="custom")

    pm.register(Replacement(), name="replacement")
    assert pm.hook.compress(**kwargs).summary == "custom"


def test_health_check(home: Path, llm_server: FakeLLMServer) -> None:
    layer = _layer()
    layer.configure(_settings(llm_server), home)
    checks = layer.health_check(home)
    assert checks[0].ok and "fake-model" in checks[0].detail
    layer.configure(_settings(None), home)
    assert "deterministic" in layer.health_check(home)[0].detail


@pytest.mark.parametrize("chinese", [False, True])
def test_none_content_does_not_crash(home: Path, chinese: bool) -> None:
    msgs = transcript(20, chinese=chinese)
    for i in range(4, 30, 3):
        if msgs[i]["role"] == "assistant" and not msgs[i].get("tool_calls"):
            msgs[i] = {**msgs[i], "content": None}
    result = _layer().compress(session(home, _settings(None)), msgs, _budget(), "")
    assert not result.aborted
    assert_valid_openai(result.messages)


def test_rate_limit_then_success_honours_retry_after(llm_server: FakeLLMServer, home: Path) -> None:
    llm_server.script_error(429, retry_after=2)
    llm_server.script_error(503, retry_after="0.5")
    llm_server.script_chat(SUMMARY)
    sleep = SleepRecorder()
    result = _layer(sleep).compress(
        session(home, _settings(llm_server)), transcript(30), _budget(), ""
    )
    assert not result.fallback_used and result.summary == SUMMARY
    assert sleep.delays == [2.0, 0.5]
    assert len(llm_server.chat_requests) == 3


def test_failed_summariser_cools_down(llm_server: FakeLLMServer, home: Path) -> None:
    from hermes_core.layers.compression.compressor import (
        COOLDOWNS,
        CompressionState,
        compress_messages,
    )

    clock = [1000.0]
    state = CompressionState()
    s = _settings(llm_server)

    def run(**kw: object) -> CompressionResult:
        return compress_messages(
            transcript(30),
            settings=s.compression,
            budget=_budget(**kw),
            state=state,
            client_factory=lambda: LLMClient.from_settings(s, sleep=SleepRecorder()),
            now=lambda: clock[0],
        )

    for _ in range(4):
        llm_server.script_error(503)
    first = run()
    assert first.fallback_used and len(llm_server.chat_requests) == 4  # 1 + 3 retries
    assert state.cooldown_until == 1000.0 + COOLDOWNS[0]
    second = run()  # inside the cooldown: no request, straight to the sheet
    assert second.fallback_used and "skipped for 60s" in (second.error or "")
    assert len(llm_server.chat_requests) == 4
    llm_server.script_chat(SUMMARY)
    manual = run(manual=True)  # the user asked: try the model anyway
    assert not manual.fallback_used and state.llm_failures == 0 and state.cooldown_until == 0
    for _ in range(8):
        llm_server.script_error(500)
    run()
    clock[0] += 10
    run(manual=True)
    assert state.llm_failures == 2 and state.cooldown_until == clock[0] + COOLDOWNS[1]


def test_oversized_model_summary_is_capped(llm_server: FakeLLMServer, home: Path) -> None:
    from hermes_core.layers.compression.compressor import TRUNCATION_NOTE, cap_summary
    from hermes_core.llm.tokens import estimate_tokens

    llm_server.script_chat("## Goal\n" + "- 很长的总结内容\n" * 6000)
    result = _layer().compress(session(home, _settings(llm_server)), transcript(60), _budget(), "")
    assert not result.fallback_used
    assert result.summary.endswith(TRUNCATION_NOTE)
    assert result.summary_tokens <= 2 * 2000 + 1
    one_line = cap_summary("x" * 40_000, 100)
    assert estimate_tokens(one_line) <= 100 and one_line.endswith(TRUNCATION_NOTE)
    assert cap_summary("short", 100) == "short"

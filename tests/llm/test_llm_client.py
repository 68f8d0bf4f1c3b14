"""LLMClient against the real loopback FakeLLMServer."""

from __future__ import annotations

import json
import random
import socket

import pytest
from pydantic import SecretStr

from hermes_core.llm.client import ChatChunk, LLMClient, RetryNotice
from hermes_core.llm.errors import (
    LLMAuthError,
    LLMError,
    LLMNotFoundError,
    LLMQuotaError,
    LLMResponseError,
    LLMUnavailableError,
)
from hermes_core.settings.models import HermesSettings
from hermes_core.testing.fake_llm import FakeLLMServer, hashed_embedding


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def _client(server: FakeLLMServer, sleep: SleepRecorder | None = None, **kw: object) -> LLMClient:
    return LLMClient(
        server.base_url,
        api_key=None,
        model=server.model,
        sleep=sleep or SleepRecorder(),
        rng=random.Random(7),
        timeout=kw.pop("timeout", 5.0),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def test_chat_roundtrip_and_payload(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat("结论: ship v2", usage={"prompt_tokens": 11, "completion_tokens": 3})
    client = _client(llm_server)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    result = client.chat(
        [{"role": "user", "content": "hi", "_compressed_summary": True}],
        tools=tools,
        tool_choice="auto",
        response_format={"type": "text"},
        temperature=0.2,
        max_tokens=50,
    )
    assert result.content == "结论: ship v2"
    assert result.usage is not None
    assert (result.usage.prompt_tokens, result.usage.total_tokens) == (11, 14)
    assert result.finish_reason == "stop"
    sent = llm_server.chat_requests[0]
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert sent["tools"] == tools
    assert sent["tool_choice"] == "auto"
    assert sent["temperature"] == 0.2
    assert sent["max_tokens"] == 50
    assert sent["model"] == "fake-model"


def test_caller_messages_not_mutated(llm_server: FakeLLMServer) -> None:
    msgs = [{"role": "user", "content": "x", "_marker": 1}]
    _client(llm_server).chat(msgs)
    assert msgs == [{"role": "user", "content": "x", "_marker": 1}]


def test_missing_usage_tolerated(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat("ok", usage=None)
    assert _client(llm_server).chat([{"role": "user", "content": "x"}]).usage is None


def test_tool_calls_parsed_and_message_rebuilt(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat(tool_calls=[{"id": "c1", "name": "memory", "arguments": {"a": "加"}}])
    result = _client(llm_server).chat([{"role": "user", "content": "x"}])
    assert result.finish_reason == "tool_calls"
    (call,) = result.tool_calls
    assert call["id"] == "c1"
    assert json.loads(call["function"]["arguments"]) == {"a": "加"}
    assert result.message()["tool_calls"][0]["function"]["name"] == "memory"


def test_auth_header_sent_and_auth_error_named() -> None:
    with FakeLLMServer(api_key="sk-right") as server:
        ok = LLMClient(server.base_url, SecretStr("sk-right"), "fake-model")
        assert ok.chat([{"role": "user", "content": "x"}]).content
        bad = LLMClient(server.base_url, SecretStr("sk-wrong"), "fake-model", sleep=SleepRecorder())
        with pytest.raises(LLMAuthError) as info:
            bad.chat([{"role": "user", "content": "x"}])
        assert "HERMES_LLM__API_KEY" in str(info.value)
        assert "sk-wrong" not in str(info.value)
        assert info.value.status == 401
        # not retried
        assert len(server.chat_requests) == 2


def test_retries_429_and_503_honour_retry_after_and_backoff(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(429, retry_after=2)
    llm_server.script_error(503)
    llm_server.script_error(503, retry_after="0.25")
    llm_server.script_chat("finally")
    sleep = SleepRecorder()
    client = _client(llm_server, sleep, max_retries=3, backoff_base=1.0)
    assert client.chat([{"role": "user", "content": "x"}]).content == "finally"
    assert len(llm_server.chat_requests) == 4
    assert sleep.delays[0] == 2.0
    # second retry (attempt 1): exponential ceiling 2.0, equal jitter in [1.0, 2.0]
    assert 1.0 <= sleep.delays[1] <= 2.0
    assert sleep.delays[2] == 0.25


def test_backoff_grows_exponentially_then_unavailable(llm_server: FakeLLMServer) -> None:
    for _ in range(4):
        llm_server.script_error(500)
    sleep = SleepRecorder()
    client = _client(llm_server, sleep, max_retries=3, backoff_base=1.0, backoff_max=100)
    with pytest.raises(LLMUnavailableError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert len(sleep.delays) == 3
    for attempt, delay in enumerate(sleep.delays):
        ceiling = 2.0**attempt
        assert ceiling / 2 <= delay <= ceiling
    # The server answered: the message says it is failing, not "is the server running?"
    assert "answered but is failing: 500" in str(info.value)
    assert "Is the server running" not in str(info.value)


def test_unreachable_endpoint_keeps_the_could_not_connect_message() -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LLMClient(
        f"http://127.0.0.1:{port}/v1", None, "m", max_retries=1, sleep=lambda s: None
    )
    with pytest.raises(LLMUnavailableError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert "could not connect" in str(info.value) and "Is the server running" in str(info.value)


def test_on_retry_reports_each_retry_with_status_and_wait(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(503)
    llm_server.script_error(502)
    llm_server.script_chat("好了")
    notices: list[RetryNotice] = []
    client = _client(llm_server, SleepRecorder(), max_retries=3)
    client.on_retry = notices.append
    assert client.chat([{"role": "user", "content": "x"}]).content == "好了"
    assert [(n.attempt, n.max_retries, n.status) for n in notices] == [(1, 3, 503), (2, 3, 502)]
    assert all(n.wait >= 0 and "is failing" in n.reason for n in notices)


def test_a_raising_on_retry_callback_never_breaks_the_call(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(500)
    llm_server.script_chat("ok")

    def boom(notice: RetryNotice) -> None:
        raise RuntimeError("display broke")

    client = _client(llm_server, SleepRecorder(), max_retries=2)
    client.on_retry = boom
    assert client.chat([{"role": "user", "content": "x"}]).content == "ok"


def test_rate_limit_exhausted_is_quota_error(llm_server: FakeLLMServer) -> None:
    for _ in range(3):
        llm_server.script_error(429, retry_after=1)
    sleep = SleepRecorder()
    with pytest.raises(LLMQuotaError):
        _client(llm_server, sleep, max_retries=2).chat([{"role": "user", "content": "x"}])
    assert sleep.delays == [1.0, 1.0]


def test_insufficient_quota_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(429, "You exceeded your current quota", code="insufficient_quota")
    sleep = SleepRecorder()
    with pytest.raises(LLMQuotaError) as info:
        _client(llm_server, sleep).chat([{"role": "user", "content": "x"}])
    assert sleep.delays == []
    assert "quota" in str(info.value)


def test_not_found_names_model_and_url() -> None:
    with FakeLLMServer(strict_models=True) as server:
        client = LLMClient(server.base_url, None, "llama9:70b", sleep=SleepRecorder())
        with pytest.raises(LLMNotFoundError) as info:
            client.chat([{"role": "user", "content": "x"}])
        assert "llama9:70b" in str(info.value)
        assert server.base_url in str(info.value)


def test_wrong_path_is_not_found(llm_server: FakeLLMServer) -> None:
    client = LLMClient(llm_server.base_url[: -len("/v1")], None, "m", sleep=SleepRecorder())
    with pytest.raises(LLMNotFoundError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert "/v1" in str(info.value)


def test_connection_refused_is_unavailable_with_hint() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleep = SleepRecorder()
    client = LLMClient(f"http://127.0.0.1:{port}/v1", None, "m", max_retries=2, sleep=sleep)
    with pytest.raises(LLMUnavailableError) as info:
        client.chat([{"role": "user", "content": "x"}])
    assert f"127.0.0.1:{port}" in str(info.value)
    assert "11434" in str(info.value)
    assert len(sleep.delays) == 2


def test_timeout_retried_then_unavailable(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat("slow", delay=1.0)
    llm_server.script_chat("fast")
    sleep = SleepRecorder()
    client = _client(llm_server, sleep, timeout=0.2, max_retries=1)
    assert client.chat([{"role": "user", "content": "x"}]).content == "fast"
    assert len(sleep.delays) == 1


def test_malformed_body_is_response_error(llm_server: FakeLLMServer) -> None:
    llm_server.script_raw("not json at all")
    with pytest.raises(LLMResponseError):
        _client(llm_server).chat([{"role": "user", "content": "x"}])
    llm_server.script_raw(json.dumps({"choices": []}))
    with pytest.raises(LLMResponseError):
        _client(llm_server).chat([{"role": "user", "content": "x"}])
    assert issubclass(LLMResponseError, LLMError)


def test_streaming_content_tool_calls_and_usage(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat(
        "流式 streaming works",
        tool_calls=[{"id": "t1", "name": "read_file", "arguments": {"path": "/etc/hosts"}}],
    )
    chunks = list(_client(llm_server).stream_chat([{"role": "user", "content": "go"}]))
    assert all(isinstance(c, ChatChunk) for c in chunks)
    deltas = [c.content for c in chunks if not c.done]
    assert len(deltas) >= 2
    final = chunks[-1]
    assert final.done
    assert "".join(deltas) == final.text == "流式 streaming works"
    (call,) = final.tool_calls
    assert call["id"] == "t1"
    assert json.loads(call["function"]["arguments"]) == {"path": "/etc/hosts"}
    assert final.finish_reason == "tool_calls"
    assert final.usage is not None and final.usage.completion_tokens > 0
    assert llm_server.chat_requests[0]["stream_options"] == {"include_usage": True}


def test_streaming_retries_before_first_byte(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(503, retry_after=0)
    llm_server.script_chat("after retry")
    sleep = SleepRecorder()
    chunks = list(_client(llm_server, sleep).stream_chat([{"role": "user", "content": "go"}]))
    assert chunks[-1].text == "after retry"
    assert sleep.delays == [0.0]


def test_embeddings(llm_server: FakeLLMServer) -> None:
    texts = ["the deploy failed", "部署失败", "the deploy failed"]
    vecs = _client(llm_server).embed(texts, batch_size=2)
    assert len(vecs) == 3
    assert vecs[0] == vecs[2] == hashed_embedding("the deploy failed", llm_server.embedding_dim)
    assert len(llm_server.embedding_requests) == 2


def test_embedding_retry(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(503, retry_after=0, endpoint="embeddings")
    sleep = SleepRecorder()
    assert len(_client(llm_server, sleep).embed(["a"])) == 1
    assert sleep.delays == [0.0]


def test_from_settings_routes_and_fallbacks() -> None:
    assert LLMClient.from_settings(HermesSettings()) is None
    s = HermesSettings.model_validate(
        {
            "llm": {
                "base_url": "http://127.0.0.1:11434/v1/",
                "api_key": "sk-main",
                "model": "qwen2.5:7b",
                "timeout": 12,
                "auxiliary": {
                    "compression": {"model": "qwen2.5:1.5b"},
                    "review": {"base_url": "http://127.0.0.1:8000/v1", "model": "m2"},
                },
            }
        }
    )
    main = LLMClient.from_settings(s)
    assert main is not None
    assert (main.base_url, main.model, main.timeout) == (
        "http://127.0.0.1:11434/v1",
        "qwen2.5:7b",
        12,
    )
    comp = LLMClient.from_settings(s, "compression")
    assert comp is not None
    assert comp.model == "qwen2.5:1.5b" and comp.base_url == main.base_url
    assert comp.api_key is not None and comp.api_key.get_secret_value() == "sk-main"
    search = LLMClient.from_settings(s, "session_search")
    assert search is not None and search.model == "qwen2.5:7b"
    review = LLMClient.from_settings(s, "review")
    assert review is not None and review.base_url == "http://127.0.0.1:8000/v1"
    assert review.api_key is None  # the main key never goes to another host
    assert "sk-main" not in repr(comp)
    with pytest.raises(ValueError):
        LLMClient.from_settings(s, "nope")


def test_from_settings_route_only() -> None:
    s = HermesSettings.model_validate(
        {"llm": {"auxiliary": {"compression": {"base_url": "http://h/v1", "model": "x"}}}}
    )
    assert LLMClient.from_settings(s) is None
    comp = LLMClient.from_settings(s, "compression")
    assert comp is not None and comp.model == "x"


def test_rejected_request_names_the_fix_and_is_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(
        400,
        "This model's maximum context length is 8192 tokens. 请求过长。",
        code="context_length_exceeded",
    )
    sleep = SleepRecorder()
    client = LLMClient(llm_server.base_url, None, llm_server.model, sleep=sleep)
    with pytest.raises(LLMError) as info:
        client.chat([{"role": "user", "content": "很长的对话 " * 10}])
    text = str(info.value)
    assert "maximum context length" in text and "请求过长" in text
    assert "llm.context_length" in text and "compression.threshold" in text
    assert info.value.status == 400 and len(llm_server.chat_requests) == 1


def test_retry_after_beyond_the_cap_fails_at_once(llm_server: FakeLLMServer) -> None:
    """A server that says "come back in an hour" is not polled every minute meanwhile."""
    llm_server.script_error(429, "每日额度已用完 daily limit reached", retry_after=3600)
    llm_server.script_chat("never reached")
    sleep = SleepRecorder()
    client = LLMClient(llm_server.base_url, None, llm_server.model, sleep=sleep)
    with pytest.raises(LLMQuotaError) as info:
        client.chat([{"role": "user", "content": "你好"}])
    assert "3600s" in str(info.value) and "try again later" in str(info.value)
    assert info.value.status == 429
    assert len(llm_server.chat_requests) == 1 and sleep.delays == []

"""The loopback FakeLLMServer speaks the OpenAI wire format (raw httpx, no client code)."""

from __future__ import annotations

import json
import math

import httpx

from hermes_core.testing.fake_llm import FakeLLMServer, hashed_embedding


def _post(server: FakeLLMServer, path: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(server.base_url + path, json=body, timeout=5)


def test_base_url_is_loopback_v1(llm_server: FakeLLMServer) -> None:
    assert llm_server.base_url.startswith("http://127.0.0.1:")
    assert llm_server.base_url.endswith("/v1")


def test_fifo_then_responder_then_default(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat("first")
    llm_server.script_chat("second")
    msgs = [{"role": "user", "content": "计划 the launch"}]
    got = [
        _post(llm_server, "/chat/completions", {"model": "m", "messages": msgs}).json()
        for _ in range(2)
    ]
    assert [g["choices"][0]["message"]["content"] for g in got] == ["first", "second"]
    llm_server.responder = lambda body: f"echo {len(body['messages'])}"
    r = _post(llm_server, "/chat/completions", {"model": "m", "messages": msgs}).json()
    assert r["choices"][0]["message"]["content"] == "echo 1"
    llm_server.responder = None
    r = _post(llm_server, "/chat/completions", {"model": "m", "messages": msgs}).json()
    assert r["choices"][0]["message"]["content"] == "[fake-llm] 计划 the launch"
    assert (
        r["usage"]["total_tokens"] == r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"]
    )


def test_records_requests_with_headers(llm_server: FakeLLMServer) -> None:
    httpx.post(
        llm_server.base_url + "/chat/completions",
        json={"model": "m", "messages": []},
        headers={"X-Test": "1"},
    )
    (req,) = llm_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.json == {"model": "m", "messages": []}
    assert req.headers["x-test"] == "1"


def test_scripted_error_has_openai_body_and_retry_after(llm_server: FakeLLMServer) -> None:
    llm_server.script_error(429, "slow down", retry_after=3)
    r = _post(llm_server, "/chat/completions", {"model": "m", "messages": []})
    assert r.status_code == 429
    assert r.headers["retry-after"] == "3"
    assert r.json()["error"] == {
        "message": "slow down",
        "type": "rate_limit_error",
        "param": None,
        "code": "rate_limit_exceeded",
    }


def test_tool_calls_and_missing_usage(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat(
        tool_calls=[{"name": "read_file", "arguments": {"path": "/a"}}], usage=None
    )
    r = _post(llm_server, "/chat/completions", {"model": "m", "messages": []}).json()
    assert "usage" not in r
    choice = r["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": "/a"}


def test_stream_sends_sse_and_done(llm_server: FakeLLMServer) -> None:
    llm_server.script_chat("hello streaming world")
    body = {
        "model": "m",
        "messages": [],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    with httpx.stream("POST", llm_server.base_url + "/chat/completions", json=body) as r:
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert text == "hello streaming world"
    assert chunks[-1]["usage"]["completion_tokens"] > 0


def test_embeddings_deterministic_and_sized(llm_server: FakeLLMServer) -> None:
    r = _post(
        llm_server,
        "/embeddings",
        {"model": "m", "input": ["deploy the app", "部署应用"], "dimensions": 16},
    ).json()
    vecs = [d["embedding"] for d in r["data"]]
    assert all(len(v) == 16 for v in vecs)
    assert vecs[0] == hashed_embedding("deploy the app", 16)
    assert math.isclose(sum(x * x for x in vecs[1]), 1.0, rel_tol=1e-9)


def test_api_key_and_strict_models() -> None:
    with FakeLLMServer(api_key="sk-good", strict_models=True) as server:
        assert httpx.get(server.base_url + "/models").status_code == 401
        ok = httpx.get(server.base_url + "/models", headers={"Authorization": "Bearer sk-good"})
        assert [m["id"] for m in ok.json()["data"]] == ["fake-model"]
        r = httpx.post(
            server.base_url + "/chat/completions",
            json={"model": "nope", "messages": []},
            headers={"Authorization": "Bearer sk-good"},
        )
        assert r.status_code == 404
        assert "nope" in r.json()["error"]["message"]


def test_stop_is_idempotent() -> None:
    server = FakeLLMServer().start()
    server.stop()
    server.stop()

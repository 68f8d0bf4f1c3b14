"""A real, scripted, OpenAI-compatible HTTP server on 127.0.0.1 (tests and ``hermes-memory bench``).

Shipped code (the benchmarks) imports it from here; tests keep importing it from
:mod:`hermes_core.testing.fake_llm`, which re-exports this module.

:class:`FakeLLMServer` speaks the OpenAI wire format over a real loopback socket, so the code
under test runs its actual HTTP client, retry and error paths: nothing is mocked inside the
process. It serves

* ``POST /v1/chat/completions`` — non-streaming JSON, or ``stream: true`` server-sent events
  (role chunk, content deltas, tool-call deltas split across chunks, finish chunk, a usage
  chunk when ``stream_options.include_usage`` is true, then ``data: [DONE]``);
* ``POST /v1/embeddings`` — deterministic hashed bag-of-words vectors (L2-normalised, so
  texts sharing words have a positive cosine), dimension ``embedding_dim`` or the request's
  ``dimensions``;
* ``GET /v1/models`` — the configured model names.

What a chat request gets back, in order of precedence:

1. the next scripted reply in the FIFO queue (:meth:`FakeLLMServer.script_chat`,
   :meth:`FakeLLMServer.script_error`, :meth:`FakeLLMServer.script_raw`);
2. otherwise the ``responder`` callable, if set (``responder(request_json) -> reply``);
3. otherwise a deterministic default: ``"{}"`` when ``response_format`` asks for JSON, else
   ``"[fake-llm] <first 200 chars of the last user message>"``.

Every request is recorded in :attr:`FakeLLMServer.requests` as a
:class:`RecordedRequest` ``(path, json, headers)`` *before* it is answered. The server is
thread-safe: scripting, recording and serving share one lock.

Example::

    with FakeLLMServer() as llm:
        llm.script_error(503, retry_after=2)
        llm.script_chat(content="## Goal\\nShip it")
        client = LLMClient(llm.base_url, api_key=None, model=llm.model)
        assert client.chat([{"role": "user", "content": "hi"}]).content == "## Goal\\nShip it"
        assert len(llm.chat_requests) == 2
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal, NamedTuple

from hermes_core.llm.tokens import estimate_messages_tokens, estimate_tokens
from hermes_core.net import LoopbackHTTPServer
from hermes_core.text import CJK_CHAR

Endpoint = Literal["chat", "embeddings", "models"]
"""Which queue a scripted reply goes to."""

_AUTO: Any = object()

_ERROR_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", "permission_denied"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    500: ("server_error", "internal_error"),
    502: ("server_error", "bad_gateway"),
    503: ("server_error", "overloaded"),
}
_WORD = re.compile(r"\w+", re.UNICODE)


class RecordedRequest(NamedTuple):
    """One request as the server received it. ``json`` is ``None`` for GET or a bad body;
    header names are lower-cased."""

    path: str
    json: Any
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class ScriptedReply:
    """One scripted answer. Build these with the ``script_*`` methods or return one from a
    ``responder``.

    ``status`` != 200 produces an OpenAI-style error body ``{"error": {"message", "type",
    "code"}}`` (``error_message``/``error_type``/``error_code`` override the defaults) with an
    optional ``Retry-After`` header. ``raw`` sends these exact bytes instead of a JSON body
    (for malformed-response tests). ``usage`` ``None`` omits the usage object (like some
    local servers); the default computes it from token estimates. ``delay`` seconds are
    slept before answering (for timeout tests).
    """

    content: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    usage: Mapping[str, int] | None = field(default=_AUTO)
    finish_reason: str | None = None
    status: int = 200
    error_message: str | None = None
    error_type: str | None = None
    error_code: str | None = None
    retry_after: float | str | None = None
    delay: float = 0.0
    raw: bytes | None = None
    content_type: str = "application/json"
    model: str | None = None


Reply = ScriptedReply | str | Mapping[str, Any]
"""What a ``responder`` may return: a :class:`ScriptedReply`, a plain content string, or a
mapping of :class:`ScriptedReply` field names."""

Responder = Callable[[Mapping[str, Any]], Reply]


def _as_reply(value: Reply) -> ScriptedReply:
    if isinstance(value, ScriptedReply):
        return value
    if isinstance(value, str):
        return ScriptedReply(content=value)
    data = dict(value)
    if "tool_calls" in data and data["tool_calls"] is not None:
        data["tool_calls"] = tuple(data["tool_calls"])
    return ScriptedReply(**data)


def hashed_embedding(text: str, dim: int) -> list[float]:
    """The deterministic vector the fake server returns for ``text``.

    Each word (and each CJK character, so Chinese works without segmentation) is hashed to a
    bucket and a sign; the bag is L2-normalised. Equal texts give equal vectors; texts sharing
    words have a positive cosine. An empty text gives a unit vector on bucket 0.
    """
    vec = [0.0] * dim
    tokens = _WORD.findall(text.lower()) + CJK_CHAR.findall(text)
    for token in tokens:
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        bucket = int.from_bytes(digest[:4], "big") % dim
        vec[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


def _normalise_tool_calls(calls: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Fill ids/types and JSON-encode dict arguments, as a real server would."""
    out: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        fn = dict(call.get("function") or {})
        if "name" not in fn and "name" in call:
            fn["name"] = call["name"]
        args = fn.get("arguments", call.get("arguments", "{}"))
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        fn["arguments"] = args
        out.append(
            {
                "id": str(call.get("id") or f"call_{index}"),
                "type": "function",
                "function": {"name": str(fn.get("name", "")), "arguments": args},
            }
        )
    return out


class FakeLLMServer(LoopbackHTTPServer):
    """A loopback OpenAI-compatible server with scripted replies. See the module docstring.

    ``model`` is reported by ``/v1/models`` (plus ``extra_models``) and echoed in replies.
    ``api_key``: when set, requests without ``Authorization: Bearer <api_key>`` get 401.
    ``strict_models``: when True, a chat/embeddings request for a model not listed gets a
    404 ``model_not_found``. ``embedding_dim`` is the default embedding size.
    """

    def __init__(
        self,
        *,
        model: str = "fake-model",
        extra_models: Sequence[str] = (),
        api_key: str | None = None,
        strict_models: bool = False,
        embedding_dim: int = 64,
        responder: Responder | None = None,
    ) -> None:
        self.model = model
        self.models: list[str] = [model, *extra_models]
        self.api_key = api_key
        self.strict_models = strict_models
        self.embedding_dim = embedding_dim
        self.responder: Responder | None = responder
        self._lock = threading.Lock()
        self._queues: dict[Endpoint, deque[ScriptedReply]] = {
            "chat": deque(),
            "embeddings": deque(),
            "models": deque(),
        }
        self._requests: list[RecordedRequest] = []

    # ----------------------------------------------------------------- lifecycle

    url_path = "/v1"  # base_url is what an OpenAI client takes as its base URL
    thread_name = "fake-llm-server"
    poll_interval = 0.05

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    # ----------------------------------------------------------------- scripting

    def script(self, reply: Reply, *, endpoint: Endpoint = "chat") -> None:
        """Append one reply to ``endpoint``'s FIFO queue."""
        with self._lock:
            self._queues[endpoint].append(_as_reply(reply))

    def script_chat(
        self,
        content: str | None = None,
        *,
        tool_calls: Sequence[Mapping[str, Any]] = (),
        usage: Mapping[str, int] | None = _AUTO,
        finish_reason: str | None = None,
        status: int = 200,
        delay: float = 0.0,
        model: str | None = None,
    ) -> None:
        """Queue one chat completion. ``tool_calls`` items may be full OpenAI tool calls or
        ``{"name": ..., "arguments": {...}}`` shorthands. ``usage=None`` omits usage."""
        self.script(
            ScriptedReply(
                content=content,
                tool_calls=tuple(tool_calls),
                usage=usage,
                finish_reason=finish_reason,
                status=status,
                delay=delay,
                model=model,
            )
        )

    def script_error(
        self,
        status: int,
        message: str | None = None,
        *,
        code: str | None = None,
        type: str | None = None,
        retry_after: float | str | None = None,
        delay: float = 0.0,
        endpoint: Endpoint = "chat",
    ) -> None:
        """Queue one OpenAI-style error (401/403/404/429/500/503...) with an optional
        ``Retry-After`` header (seconds)."""
        self.script(
            ScriptedReply(
                status=status,
                error_message=message,
                error_code=code,
                error_type=type,
                retry_after=retry_after,
                delay=delay,
            ),
            endpoint=endpoint,
        )

    def script_raw(
        self,
        body: bytes | str,
        *,
        status: int = 200,
        content_type: str = "application/json",
        endpoint: Endpoint = "chat",
    ) -> None:
        """Queue an exact response body (e.g. malformed JSON)."""
        raw = body.encode("utf-8") if isinstance(body, str) else body
        self.script(
            ScriptedReply(raw=raw, status=status, content_type=content_type), endpoint=endpoint
        )

    def pending(self, endpoint: Endpoint = "chat") -> int:
        """How many scripted replies are still queued for ``endpoint``."""
        with self._lock:
            return len(self._queues[endpoint])

    def reset(self) -> None:
        """Forget queued replies, the responder and recorded requests."""
        with self._lock:
            for queue in self._queues.values():
                queue.clear()
            self._requests.clear()
            self.responder = None

    # ----------------------------------------------------------------- inspection

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the ``/v1/chat/completions`` requests, in order."""
        return [r.json for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the ``/v1/embeddings`` requests, in order."""
        return [r.json for r in self.requests if r.path.endswith("/embeddings")]

    # ----------------------------------------------------------------- serving internals

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, endpoint: Endpoint) -> ScriptedReply | None:
        with self._lock:
            queue = self._queues[endpoint]
            return queue.popleft() if queue else None

    def _default_chat(self, body: Mapping[str, Any]) -> ScriptedReply:
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping) and fmt.get("type") in {"json_object", "json_schema"}:
            return ScriptedReply(content="{}")
        last_user = ""
        for message in reversed(body.get("messages") or []):
            if isinstance(message, Mapping) and message.get("role") == "user":
                content = message.get("content")
                last_user = content if isinstance(content, str) else json.dumps(content)
                break
        return ScriptedReply(content=f"[fake-llm] {last_user[:200]}")

    def _chat_reply(self, body: Mapping[str, Any]) -> ScriptedReply:
        scripted = self._next("chat")
        if scripted is not None:
            return scripted
        responder = self.responder
        if responder is not None:
            return _as_reply(responder(body))
        return self._default_chat(body)


def _error_body(reply: ScriptedReply) -> dict[str, Any]:
    etype, ecode = _ERROR_TYPES.get(reply.status, ("server_error", "error"))
    return {
        "error": {
            "message": reply.error_message or f"fake-llm scripted error {reply.status}",
            "type": reply.error_type or etype,
            "param": None,
            "code": reply.error_code or ecode,
        }
    }


def _usage_for(body: Mapping[str, Any], reply: ScriptedReply, completion: str) -> Any:
    if reply.usage is not _AUTO:
        return None if reply.usage is None else dict(reply.usage)
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    prompt = estimate_messages_tokens(messages)
    done = estimate_tokens(completion)
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def _make_handler(owner: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "FakeLLM/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def handle(self) -> None:
            # a client that timed out and hung up is expected in tests, not an error
            try:
                super().handle()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        # -- helpers
        def _send_json(
            self, status: int, payload: Any, headers: Mapping[str, str] | None = None
        ) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self._send_bytes(status, data, "application/json", headers)

        def _send_bytes(
            self,
            status: int,
            data: bytes,
            content_type: str,
            headers: Mapping[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _send_reply_error(self, reply: ScriptedReply) -> None:
            headers: dict[str, str] = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = str(reply.retry_after)
            self._send_json(reply.status, _error_body(reply), headers)

        def _read_json(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, json.JSONDecodeError):
                return None

        def _authorised(self) -> bool:
            if owner.api_key is None:
                return True
            return self.headers.get("Authorization") == f"Bearer {owner.api_key}"

        def _refuse_auth(self) -> None:
            self._send_reply_error(
                ScriptedReply(
                    status=401,
                    error_message="Incorrect API key provided.",
                    error_code="invalid_api_key",
                )
            )

        def _unknown_model(self, body: Mapping[str, Any]) -> bool:
            if not owner.strict_models:
                return False
            if body.get("model") in owner.models:
                return False
            self._send_reply_error(
                ScriptedReply(
                    status=404,
                    error_message=f"The model `{body.get('model')}` does not exist.",
                    error_code="model_not_found",
                )
            )
            return True

        # -- verbs
        def do_GET(self) -> None:
            owner._record(RecordedRequest(self.path, None, _headers(self)))
            if not self._authorised():
                self._refuse_auth()
                return
            if self.path.rstrip("/") != "/v1/models":
                self._send_json(404, _error_body(ScriptedReply(status=404)))
                return
            scripted = owner._next("models")
            if scripted is not None and self._maybe_scripted_failure(scripted):
                return
            data = [{"id": m, "object": "model", "owned_by": "fake-llm"} for m in owner.models]
            self._send_json(200, {"object": "list", "data": data})

        def do_POST(self) -> None:
            body = self._read_json()
            owner._record(RecordedRequest(self.path, body, _headers(self)))
            if not self._authorised():
                self._refuse_auth()
                return
            if not isinstance(body, dict):
                self._send_json(
                    400,
                    _error_body(ScriptedReply(status=400, error_message="body must be JSON")),
                )
                return
            path = self.path.rstrip("/")
            if path == "/v1/chat/completions":
                self._chat(body)
            elif path == "/v1/embeddings":
                self._embeddings(body)
            else:
                self._send_json(
                    404, _error_body(ScriptedReply(status=404, error_message=f"no {path}"))
                )

        def _maybe_scripted_failure(self, reply: ScriptedReply) -> bool:
            """Sleep the delay; send raw/error replies. True when a response was sent."""
            if reply.delay > 0:
                time.sleep(reply.delay)
            if reply.raw is not None:
                self._send_bytes(reply.status, reply.raw, reply.content_type)
                return True
            if reply.status != 200:
                self._send_reply_error(reply)
                return True
            return False

        def _chat(self, body: dict[str, Any]) -> None:
            if self._unknown_model(body):
                return
            reply = owner._chat_reply(body)
            if self._maybe_scripted_failure(reply):
                return
            tool_calls = _normalise_tool_calls(reply.tool_calls)
            content = reply.content
            if content is None and not tool_calls:
                content = ""
            finish = reply.finish_reason or ("tool_calls" if tool_calls else "stop")
            model = reply.model or str(body.get("model") or owner.model)
            usage = _usage_for(body, reply, content or "")
            if body.get("stream"):
                options = body.get("stream_options")
                include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
                self._stream(model, content, tool_calls, finish, usage if include_usage else None)
                return
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if tool_calls:
                message["tool_calls"] = tool_calls
            payload: dict[str, Any] = {
                "id": f"chatcmpl-{len(owner.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            if usage is not None:
                payload["usage"] = usage
            self._send_json(200, payload)

        def _stream(
            self,
            model: str,
            content: str | None,
            tool_calls: list[dict[str, Any]],
            finish: str,
            usage: Any,
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in _stream_chunks(model, content, tool_calls, finish, usage):
                self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _embeddings(self, body: dict[str, Any]) -> None:
            if self._unknown_model(body):
                return
            scripted = owner._next("embeddings")
            if scripted is not None and self._maybe_scripted_failure(scripted):
                return
            raw_input = body.get("input")
            texts = [raw_input] if isinstance(raw_input, str) else list(raw_input or [])
            dim = body.get("dimensions")
            size = dim if isinstance(dim, int) and dim > 0 else owner.embedding_dim
            data = [
                {"object": "embedding", "index": i, "embedding": hashed_embedding(str(t), size)}
                for i, t in enumerate(texts)
            ]
            tokens = sum(estimate_tokens(str(t)) for t in texts)
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": str(body.get("model") or owner.model),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

    return Handler


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    return {k.lower(): v for k, v in handler.headers.items()}


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return []
    step = max(1, math.ceil(len(text) / parts))
    return [text[i : i + step] for i in range(0, len(text), step)]


def _stream_chunks(
    model: str,
    content: str | None,
    tool_calls: list[dict[str, Any]],
    finish: str,
    usage: Any,
) -> Iterator[dict[str, Any]]:
    """The SSE chunk sequence of one streamed completion (before ``[DONE]``)."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in _split(content or "", 3):
        yield chunk({"content": piece})
    for index, call in enumerate(tool_calls):
        fn = call["function"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": fn["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in _split(fn["arguments"], 2):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, finish)
    if usage is not None:
        yield {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }


__all__ = [
    "Endpoint",
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedReply",
    "hashed_embedding",
]

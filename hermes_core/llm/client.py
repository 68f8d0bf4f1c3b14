"""A small synchronous OpenAI-compatible client over httpx.

It assumes nothing beyond the OpenAI wire format, so it talks to hosted endpoints and to
Ollama, vLLM, LM Studio and llama.cpp server alike: ``POST {base_url}/chat/completions``
(with or without ``stream``) and ``POST {base_url}/embeddings``. ``base_url`` includes the
version segment (``http://127.0.0.1:11434/v1``). Missing ``usage`` is tolerated.

Retries: 408/409/429/5xx responses, timeouts and transport errors are retried up to
``max_retries`` times. The wait is the server's ``Retry-After`` when present (a wait longer
than ``max_retry_after`` fails at once instead), else exponential backoff with equal jitter:
``b = min(backoff_max, backoff_base * 2**attempt)``, wait ``b/2 + uniform(0, b/2)``. The sleep
function and the random generator are injectable so tests can assert the delays.

Messages are copied before sending and keys starting with ``_`` (host-internal markers such
as ``_compressed_summary``) are stripped; the caller's dicts are never mutated.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import SecretStr

from hermes_core.llm.errors import (
    LOCAL_SERVER_HINT,
    LLMAuthError,
    LLMError,
    LLMNotFoundError,
    LLMQuotaError,
    LLMResponseError,
    LLMUnavailableError,
)
from hermes_core.llm.tokens import Usage
from hermes_core.retry import backoff_wait, parse_retry_after

if TYPE_CHECKING:
    from hermes_core.settings.models import HermesSettings

ROUTES = ("compression", "session_search", "review")
"""Auxiliary route names under ``llm.auxiliary``."""

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One non-streamed completion. ``tool_calls`` are OpenAI tool-call dicts ready to be put
    on an assistant message; ``usage`` is ``None`` when the server reported none; ``raw`` is
    the parsed response body."""

    content: str | None
    tool_calls: tuple[dict[str, Any], ...] = ()
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict)

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the transcript."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [dict(c) for c in self.tool_calls]
        return msg


@dataclass(frozen=True, slots=True)
class ChatChunk:
    """One streamed piece. ``content`` is the text delta (may be empty). The last chunk has
    ``done=True`` and carries the assembled ``tool_calls``, ``finish_reason``, the full
    ``text`` and ``usage`` (when the server sent it)."""

    content: str = ""
    done: bool = False
    text: str = ""
    tool_calls: tuple[dict[str, Any], ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""


def strip_internal_keys(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``messages`` without ``_``-prefixed keys (never mutates the input)."""
    return [{k: v for k, v in m.items() if not str(k).startswith("_")} for m in messages]


def _error_fields(response: httpx.Response) -> tuple[str, str | None]:
    """(message, code) from an OpenAI-style (or any) error body."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        text = response.text.strip()
        return (text[:300] or response.reason_phrase), None
    if isinstance(body, Mapping):
        err = body.get("error", body)
        if isinstance(err, Mapping):
            message = str(err.get("message") or err.get("detail") or body)[:300]
            code = err.get("code") or err.get("type")
            return message, str(code) if code is not None else None
        if isinstance(err, str):
            return err[:300], None
    return str(body)[:300], None


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A failed attempt that will be retried: what failed and how long the client waits."""

    attempt: int
    """1 for the first retry."""
    max_retries: int
    wait: float
    """Seconds before the next attempt."""
    status: int | None
    """The HTTP status the server answered with; None when it could not be reached."""
    reason: str


class LLMClient:
    """Synchronous OpenAI-compatible client. Cheap to build; call :meth:`close` (or use it as
    a context manager) to release the connection pool.

    ``timeout`` is seconds per request; ``max_retries`` extra attempts after the first.
    """

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr | str | None,
        model: str,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        temperature: float | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> None:
        if not base_url:
            raise ValueError("LLMClient needs a base_url, e.g. http://127.0.0.1:11434/v1")
        self.base_url = base_url.rstrip("/")
        self.api_key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self.model = model
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.temperature = temperature
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.on_retry = on_retry
        """Called before each retry's wait (a UI shows "retrying 2/3"); must not raise."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        secret = self.api_key.get_secret_value() if self.api_key else ""
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        self._http = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    # ----------------------------------------------------------------- construction

    @classmethod
    def from_settings(
        cls, settings: HermesSettings, route: str | None = None, **kwargs: Any
    ) -> LLMClient | None:
        """The client for the main model (``route=None``) or an auxiliary route.

        Each of ``base_url``/``model``/``api_key`` set on ``llm.auxiliary.<route>`` wins; unset
        ones fall back to ``llm``. The main API key is only reused when the route keeps the
        main base URL (a key is never sent to a different host). Returns ``None`` when no
        base URL or no model is configured: callers then use their deterministic fallback.
        """
        main = settings.llm
        base_url, model, api_key = main.base_url, main.model, main.api_key
        if route is not None:
            if route not in ROUTES:
                raise ValueError(f"unknown LLM route {route!r}; expected one of {ROUTES}")
            aux = getattr(main.auxiliary, route)
            if aux.base_url and aux.base_url.rstrip("/") != (main.base_url or "").rstrip("/"):
                base_url, api_key = aux.base_url, aux.api_key
            elif aux.api_key is not None:
                api_key = aux.api_key
            model = aux.model or model
        if not base_url or not model:
            return None
        kwargs.setdefault("timeout", main.timeout)
        kwargs.setdefault("max_retries", main.max_retries)
        kwargs.setdefault("temperature", main.temperature)
        return cls(base_url, api_key, model, **kwargs)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def display_url(self) -> str:
        """``base_url`` as it may be shown or logged: any password in it masked."""
        from hermes_core.security.redaction import redact_text

        return redact_text(self.base_url)

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.display_url!r}, model={self.model!r})"

    # ----------------------------------------------------------------- public calls

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        """One chat completion. Raises an :class:`LLMError` subclass on failure."""
        payload = self._chat_payload(
            messages, tools, tool_choice, response_format, temperature, max_tokens, model
        )
        response = self._post("/chat/completions", payload)
        body = self._json(response)
        return self._parse_chat(body)

    def stream_chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
        include_usage: bool = True,
    ) -> Iterator[ChatChunk]:
        """Stream a completion as :class:`ChatChunk` deltas, ending with one ``done`` chunk.

        Retries apply only until the response headers arrive; once text has been yielded a
        broken stream raises :class:`LLMUnavailableError`. ``include_usage`` asks for the
        final usage chunk (``stream_options``); servers that ignore it just send none.
        """
        payload = self._chat_payload(
            messages, tools, tool_choice, response_format, temperature, max_tokens, model
        )
        payload["stream"] = True
        if include_usage:
            payload["stream_options"] = {"include_usage": True}
        return self._stream(payload)

    def embed(
        self, texts: Sequence[str], *, model: str | None = None, batch_size: int = 64
    ) -> list[list[float]]:
        """Embeddings of ``texts`` in order (batched ``batch_size`` per request)."""
        out: list[list[float]] = []
        use_model = model or self.model
        for start in range(0, len(texts), max(1, batch_size)):
            batch = list(texts[start : start + batch_size])
            body = self._json(self._post("/embeddings", {"model": use_model, "input": batch}))
            data = body.get("data")
            if not isinstance(data, list) or len(data) != len(batch):
                raise self._response_error(
                    f"expected {len(batch)} embeddings in 'data', got "
                    f"{len(data) if isinstance(data, list) else type(data).__name__}"
                )
            items = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, Mapping) else 0)
            for item in items:
                vec = item.get("embedding") if isinstance(item, Mapping) else None
                if not isinstance(vec, list) or not all(isinstance(x, int | float) for x in vec):
                    raise self._response_error("an embedding is not a list of numbers")
                out.append([float(x) for x in vec])
        return out

    # ----------------------------------------------------------------- internals

    def _chat_payload(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        tool_choice: str | Mapping[str, Any] | None,
        response_format: Mapping[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        model: str | None,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": model or self.model,
            "messages": strip_internal_keys(messages),
        }
        if tools:
            payload["tools"] = [dict(t) for t in tools]
        if tool_choice is not None:
            payload["tool_choice"] = tool_choice
        if response_format is not None:
            payload["response_format"] = dict(response_format)
        temp = temperature if temperature is not None else self.temperature
        if temp is not None:
            payload["temperature"] = temp
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        return payload

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        return backoff_wait(
            attempt,
            retry_after,
            backoff_base=self.backoff_base,
            backoff_max=self.backoff_max,
            max_retry_after=self.max_retry_after,
            uniform=self._rng.uniform,
        )

    def _send(self, path: str, payload: Mapping[str, Any], *, stream: bool) -> httpx.Response:
        """Send with retries; return a 2xx response (streamed responses left open)."""
        url = self.base_url + path
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                request = self._http.build_request("POST", url, json=payload)
                response = self._http.send(request, stream=stream)
            except httpx.TimeoutException as exc:
                failure: LLMError = self._unavailable(f"timed out after {self.timeout:g}s", exc)
            except httpx.TransportError as exc:
                failure = self._unavailable(f"could not connect ({type(exc).__name__})", exc)
            else:
                if response.status_code < 300:
                    return response
                if stream:
                    response.read()
                response.close()
                failure = self._status_error(response, path)
                if response.status_code not in RETRYABLE_STATUS or (
                    isinstance(failure, LLMQuotaError) and failure.code == "insufficient_quota"
                ):
                    raise failure
                retry_after = parse_retry_after(response.headers.get("retry-after"))
                if retry_after is not None and retry_after > self.max_retry_after:
                    # Sleeping the capped time would only earn the same refusal.
                    raise type(failure)(
                        f"{self.base_url}{path} returned {response.status_code} and asks to "
                        f"wait {retry_after:.0f}s before retrying, longer than the "
                        f"{self.max_retry_after:g}s this client waits — try again later or "
                        "use another endpoint/model.",
                        base_url=self.base_url,
                        model=self.model,
                        status=failure.status,
                        code=failure.code,
                    )
            if attempt >= self.max_retries:
                raise failure
            wait = self._backoff(attempt, retry_after)
            self._notify_retry(attempt + 1, wait, failure)
            self._sleep(wait)
            attempt += 1

    def _notify_retry(self, attempt: int, wait: float, failure: LLMError) -> None:
        if self.on_retry is None:
            return
        if failure.status is None:
            reason = "could not connect"
        elif failure.status >= 500:
            reason = f"the server answered {failure.status} (it is failing)"
        else:
            reason = f"the server answered {failure.status}"
        try:
            self.on_retry(RetryNotice(attempt, self.max_retries, wait, failure.status, reason))
        except Exception:  # a display callback never breaks a model call
            pass

    def _post(self, path: str, payload: Mapping[str, Any]) -> httpx.Response:
        return self._send(path, payload, stream=False)

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError) as exc:
            raise self._response_error(f"body is not JSON: {response.text[:200]!r}") from exc
        if not isinstance(body, dict):
            raise self._response_error(f"body is not a JSON object: {str(body)[:200]}")
        return body

    def _parse_chat(self, body: Mapping[str, Any]) -> ChatResult:
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise self._response_error(f"no 'choices' in response: {str(body)[:200]}")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, Mapping):
            raise self._response_error("first choice has no 'message' object")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise self._response_error("'tool_calls' is not a list")
        calls = tuple(self._normalise_call(c, i) for i, c in enumerate(raw_calls))
        finish = choice.get("finish_reason")
        return ChatResult(
            content=content,
            tool_calls=calls,
            usage=Usage.from_api(body.get("usage")),
            finish_reason=str(finish) if finish is not None else None,
            model=str(body.get("model") or self.model),
            raw=body,
        )

    def _normalise_call(self, call: Any, index: int) -> dict[str, Any]:
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
            raise self._response_error(f"tool call {index} has no 'function' object")
        fn = call["function"]
        args = fn.get("arguments", "")
        if not isinstance(args, str):  # some local servers send an object
            args = json.dumps(args, ensure_ascii=False)
        return {
            "id": str(call.get("id") or f"call_{index}"),
            "type": "function",
            "function": {"name": str(fn.get("name") or ""), "arguments": args},
        }

    def _stream(self, payload: Mapping[str, Any]) -> Iterator[ChatChunk]:
        response = self._send("/chat/completions", payload, stream=True)
        text_parts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage: Usage | None = None
        model = str(payload.get("model") or self.model)
        try:
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise self._response_error(f"bad stream event: {data[:200]!r}") from exc
                if not isinstance(event, Mapping):
                    continue
                if isinstance(event.get("error"), Mapping):
                    err = event["error"]
                    raise LLMError(
                        f"stream error from {self.base_url}: {err.get('message')}",
                        base_url=self.base_url,
                        model=self.model,
                        code=str(err.get("code")) if err.get("code") else None,
                    )
                model = str(event.get("model") or model)
                usage = Usage.from_api(event.get("usage")) or usage
                for choice in event.get("choices") or []:
                    if not isinstance(choice, Mapping):
                        continue
                    delta = choice.get("delta") or {}
                    if choice.get("finish_reason"):
                        finish = str(choice["finish_reason"])
                    piece = delta.get("content") if isinstance(delta, Mapping) else None
                    if isinstance(delta, Mapping):
                        self._merge_call_deltas(calls, delta.get("tool_calls") or [])
                    if isinstance(piece, str) and piece:
                        text_parts.append(piece)
                        yield ChatChunk(content=piece, model=model)
        except httpx.TransportError as exc:
            raise self._unavailable("stream broke off", exc) from exc
        finally:
            response.close()
        ordered = tuple(
            self._normalise_call(calls[i], i) for i in sorted(calls) if calls[i].get("function")
        )
        yield ChatChunk(
            done=True,
            text="".join(text_parts),
            tool_calls=ordered,
            finish_reason=finish,
            usage=usage,
            model=model,
        )

    @staticmethod
    def _merge_call_deltas(calls: dict[int, dict[str, Any]], deltas: Any) -> None:
        if not isinstance(deltas, list):
            return
        for pos, delta in enumerate(deltas):
            if not isinstance(delta, Mapping):
                continue
            index = delta.get("index", pos)
            index = index if isinstance(index, int) else pos
            slot = calls.setdefault(index, {"function": {"name": "", "arguments": ""}})
            if delta.get("id"):
                slot["id"] = delta["id"]
            fn = delta.get("function")
            if isinstance(fn, Mapping):
                if fn.get("name"):
                    slot["function"]["name"] += str(fn["name"])
                args = fn.get("arguments")
                if isinstance(args, str):
                    slot["function"]["arguments"] += args
                elif args is not None:
                    slot["function"]["arguments"] += json.dumps(args, ensure_ascii=False)

    # ----------------------------------------------------------------- error builders

    def _response_error(self, detail: str) -> LLMResponseError:
        return LLMResponseError(
            f"malformed response from {self.base_url} (model {self.model}): {detail}. "
            "Check that llm.base_url points at an OpenAI-compatible /v1 endpoint.",
            base_url=self.base_url,
            model=self.model,
        )

    def _unavailable(self, what: str, exc: Exception) -> LLMUnavailableError:
        return LLMUnavailableError(
            f"LLM endpoint {self.base_url} {what}: {exc}. {LOCAL_SERVER_HINT} "
            "Set llm.base_url (HERMES_LLM__BASE_URL) or raise llm.timeout.",
            base_url=self.base_url,
            model=self.model,
        )

    def _status_error(self, response: httpx.Response, path: str) -> LLMError:
        status = response.status_code
        message, code = _error_fields(response)
        where = f"{self.base_url}{path}"
        common: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model,
            "status": status,
            "code": code,
        }
        if status in (401, 403):
            return LLMAuthError(
                f"{where} refused the credentials ({status}: {message}). Check llm.api_key / "
                "HERMES_LLM__API_KEY (or the auxiliary route's api_key).",
                **common,
            )
        if status == 429 or code == "insufficient_quota":
            if code == "insufficient_quota":
                hint = "the account has no quota left; add credit or use another endpoint"
            else:
                hint = (
                    f"still rate limited after {self.max_retries} retries; "
                    "wait or raise llm.max_retries"
                )
            return LLMQuotaError(f"{where} returned {status}: {message} — {hint}.", **common)
        if status == 404:
            return LLMNotFoundError(
                f"{where} returned 404 for model '{self.model}': {message}. Check llm.model "
                f"(is '{self.model}' pulled/loaded on the server?) and that llm.base_url "
                f"'{self.base_url}' ends with the API version, e.g. /v1.",
                **common,
            )
        if status >= 500:
            return LLMUnavailableError(
                f"{where} answered but is failing: {status} ({message}), still after "
                f"{self.max_retries} retries. The server is reachable; the error is on its "
                "side — check its logs (out of memory, model still loading, crashed worker) "
                "or try another model.",
                **common,
            )
        if status in RETRYABLE_STATUS:
            return LLMUnavailableError(
                f"{where} kept failing ({status}: {message}) after {self.max_retries} retries. "
                f"{LOCAL_SERVER_HINT}",
                **common,
            )
        if status in (400, 413, 422):
            return LLMError(
                f"{where} rejected the request ({status}: {message}). If the prompt is too "
                "long, set llm.context_length to the model's real window (compression then "
                "triggers in time) or lower compression.threshold; if the model lacks tool "
                "calls or response_format, use one that supports them.",
                **common,
            )
        return LLMError(f"{where} returned {status}: {message}", **common)


__all__ = [
    "ROUTES",
    "ChatChunk",
    "ChatResult",
    "LLMClient",
    "RetryNotice",
    "Usage",
    "strip_internal_keys",
]

"""Errors of the OpenAI-compatible client. Each message says what happened and what fixes it.

``LLMError`` > ``LLMAuthError`` (401/403), ``LLMQuotaError`` (429 after retries, or
``insufficient_quota``), ``LLMNotFoundError`` (404: wrong model or base URL),
``LLMUnavailableError`` (connection refused, timeouts, 5xx after retries) and
``LLMResponseError`` (a 200 whose body is not a usable OpenAI response).
"""

from __future__ import annotations

from hermes_core.errors import HermesError
from hermes_core.security.redaction import redact

LOCAL_SERVER_HINT = (
    "Is the server running? Typical base URLs: Ollama http://127.0.0.1:11434/v1, "
    "vLLM http://127.0.0.1:8000/v1, LM Studio http://127.0.0.1:1234/v1, "
    "llama.cpp server http://127.0.0.1:8080/v1."
)


class LLMError(HermesError):
    """A model call failed. ``status`` is the HTTP status (None for transport errors).

    The message is secret-redacted on construction (an endpoint may echo the key it was
    given), so it is safe to log, store in state.db or show to the model."""

    def __init__(
        self,
        message: str,
        *,
        base_url: str = "",
        model: str = "",
        status: int | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(redact(message))
        self.base_url = redact(base_url)
        self.model = model
        self.status = status
        self.code = code


class LLMAuthError(LLMError):
    """The endpoint refused the credentials (401/403)."""


class LLMQuotaError(LLMError):
    """Rate limited after every retry, or the account has no quota left."""


class LLMNotFoundError(LLMError):
    """The model or the endpoint path does not exist (404)."""


class LLMUnavailableError(LLMError):
    """The endpoint could not be reached or kept failing (connection, timeout, 5xx)."""


class LLMResponseError(LLMError):
    """The server answered 200 with a body that is not a usable OpenAI response."""


__all__ = [
    "LOCAL_SERVER_HINT",
    "LLMAuthError",
    "LLMError",
    "LLMNotFoundError",
    "LLMQuotaError",
    "LLMResponseError",
    "LLMUnavailableError",
]

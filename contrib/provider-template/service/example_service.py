"""The service variant of the provider template: a memory provider for an HTTP API, built on
:class:`hermes_core.providers.service.BackgroundRecall` (the service provider frame).

The frame brings the lazy client (timeouts, retries, circuit breaker), availability, the
background recall awaited by ``prefetch``, the outbox that keeps writes while the service is
down, ``health_check``, ``shutdown`` and the tools declared with ``@memory_tool`` (the handler's
docstring is what the model reads); this file holds only the API calls.
Copy it next to ``hermes_memory_example/provider.py`` (and point the entry point at
``ExampleServiceProvider``) when your memory lives behind an API.

The API it speaks (replace it with yours): ``POST /v1/notes {"user", "text"}`` stores a note,
``POST /v1/search {"user", "query"}`` answers ``{"results": [{"text": ...}]}``; the key is
sent as ``Authorization: Bearer <key>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core import MemoryContext, SessionInfo, ToolContext, Turn, hookimpl
from hermes_core.providers.service import (
    BackgroundRecall,
    ServiceAPI,
    service_field,
    unflagged,
)
from hermes_core.providers.service.fields import BaseURL, ServiceProviderSettings, env_field
from hermes_core.providers.service.tools import memory_tool, param, required_text
from hermes_core.tool_results import tool_ok
from pydantic import SecretStr


class ExampleServiceSettings(ServiceProviderSettings):
    """``memory.providers.example-service``: the key and URL are asked by setup, the shared
    service fields only with ``--advanced`` (each declared where you want it: the order here
    is the order of the setup prompts)."""

    api_key: SecretStr | None = env_field(
        "example-service",
        "api_key",
        None,
        "EXAMPLE_SERVICE_API_KEY",
        description="Example API key",
        url="https://example.invalid/keys",
    )
    base_url: BaseURL = env_field(
        "example-service",
        "base_url",
        "https://api.example.invalid",
        None,
        description="Example API URL",
    )
    timeout: float = service_field("timeout", 5.0, le=60)
    prefetch_wait: float = service_field("prefetch_wait")
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")


class ExampleAPI(ServiceAPI):
    """The service's endpoints over the shared ``ServiceClient`` (``self.client``)."""

    def add(self, user: str, text: str) -> None:
        self.client.post("/v1/notes", json_body={"user": user, "text": text})

    def search(self, user: str, query: str, *, deadline: float | None = None) -> list[str]:
        body = self.client.post(
            "/v1/search",
            json_body={"user": user, "query": query},
            idempotent=True,
            deadline=deadline,
        )
        return [str(hit["text"]) for hit in body["results"]]


class ExampleServiceProvider(BackgroundRecall[ExampleServiceSettings, ExampleAPI, str]):
    """Notes behind an HTTP API, one user's notes never shown to another."""

    name = "example-service"  # Settings: ExampleServiceSettings, the first type argument
    service = "Example"  # the label of recalled context and the name in messages
    api_class = ExampleAPI  # built around the ServiceClient on first use
    recall_heading = "## Example Memory"
    prompt = "# Example memory\nUse example_search to look up the user's notes."

    @staticmethod
    def user(session: SessionInfo) -> str:
        return session.user_id or "local"

    def auto_recall(self, session: SessionInfo, query: str) -> list[str]:
        return self.api().search(self.user(session), query, deadline=self.recall_wait(session))

    def format_context(self, items: Sequence[str]) -> MemoryContext | None:
        return self.recalled_context([f"- {item}" for item in items])

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        text = turn.user_text.strip()
        if not text or self._closed or not self.first_sync(session, turn):
            return
        user = self.user(session)
        self.send_later(f"turn:{session.id}:{turn.number}", lambda: self.api().add(user, text))

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        self.forget_session(session)
        if not self._closed:
            self.outbox.flush()

    @memory_tool("example_search", read_only=True, query=param("string", required=True))
    def _search(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        """Search the user's notes.

        query: What to look for.
        """
        query = required_text(args, "query", "pass what to look for as a string")
        kept, withheld = unflagged(self.api().search(self.user(ctx.session), query), str)
        return tool_ok(results=kept, withheld=withheld)


__all__ = ["ExampleAPI", "ExampleServiceProvider", "ExampleServiceSettings"]

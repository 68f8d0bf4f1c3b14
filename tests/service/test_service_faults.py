"""The service-provider fault tests run against a small, complete example provider.

``NotesProvider`` is what a service provider looks like on the shared parts: settings that
name the key and URL, one :class:`ServiceClient`, hooks and tools that catch
:class:`ServiceError`. ``notes_double`` is its loopback double, validated against a small
OpenAPI document.
"""

from __future__ import annotations

import itertools
import logging
import re
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr

from hermes_core import (
    MemoryContext,
    MemoryProvider,
    ProviderSettings,
    SessionInfo,
    ToolContext,
    ToolSpec,
    Turn,
    hookimpl,
)
from hermes_core.providers.base import setup_field
from hermes_core.providers.service import ServiceClient, ServiceError, service_settings
from hermes_core.testing.loopback import LoopbackRequest, LoopbackServer, error_reply
from hermes_core.testing.service_faults import ServiceProviderFaults
from hermes_core.tool_results import tool_error, tool_ok

log = logging.getLogger("notes-provider")


class NotesSettings(ProviderSettings):
    api_key: SecretStr | None = setup_field(
        None, description="Notes API key", env_var="NOTES_API_KEY", url="https://notes.invalid"
    )
    base_url: str = setup_field("https://api.notes.invalid", description="Notes API URL")
    timeout: float = Field(5.0, gt=0, description="Seconds per request.")
    retries: int = Field(2, ge=0, description="Retries of a failed idempotent request.")
    failure_threshold: int = Field(5, ge=1, description="Failures that pause the provider.")
    cooldown: float = Field(60.0, ge=0, description="Seconds the provider stays paused.")


class NotesProvider(MemoryProvider):
    name = "notes-example"
    Settings = NotesSettings

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        assert isinstance(settings, NotesSettings)
        self.cfg = settings
        self.client = ServiceClient(
            settings.base_url,
            settings=service_settings(
                NotesSettings, self.name, "Notes", key_field="api_key", url_field="base_url"
            ),
            api_key=settings.api_key,
            timeout=settings.timeout,
            retries=settings.retries,
            failure_threshold=settings.failure_threshold,
            cooldown=settings.cooldown,
        )

    def is_available(self) -> bool:
        return self.cfg.api_key is not None

    def unavailable_reason(self) -> str:
        return "" if self.is_available() else "set NOTES_API_KEY"

    def _search(self, user: str, query: str, deadline: float | None = None) -> list[str]:
        body = self.client.post(
            "/v1/search",
            json_body={"user": user, "query": query},
            idempotent=True,
            deadline=deadline,
        )
        return [str(hit["text"]) for hit in body["results"]]

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        try:
            hits = self._search(session.user_id or "default", query, deadline=self.cfg.timeout)
        except (ServiceError, KeyError, TypeError) as exc:
            log.warning("notes recall failed: %s", exc)
            return None
        text = "\n".join(f"- {hit}" for hit in hits)
        return MemoryContext(text, count=len(hits), label="notes") if hits else None

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        try:
            self.client.post(
                "/v1/notes",
                json_body={"user": session.user_id or "default", "text": turn.user_text},
            )
        except ServiceError as exc:
            log.warning("notes sync failed: %s", exc)

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        def search(args: Any, ctx: ToolContext) -> str:
            try:
                hits = self._search(ctx.session.user_id or "default", str(args.get("query", "")))
            except ServiceError as exc:
                return tool_error(str(exc))
            except (KeyError, TypeError) as exc:
                return tool_error(f"Notes answered an unexpected shape: {exc}")
            return tool_ok(results=hits)

        schema = {"type": "object", "properties": {"query": {"type": "string"}}}
        return [ToolSpec("notes_search", "Search notes.", schema, search, read_only=True)]

    def shutdown(self) -> None:
        self.client.close()


DOC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "notes", "version": "1"},
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "security": [{"bearer": []}],
    "paths": {
        "/v1/notes": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["user", "text"],
                                "properties": {
                                    "user": {"type": "string"},
                                    "text": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "stored"}},
            }
        },
        "/v1/search": {
            "post": {
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["user", "query"],
                                "properties": {
                                    "user": {"type": "string"},
                                    "query": {"type": "string"},
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "hits",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["results"],
                                    "properties": {
                                        "results": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "required": ["text"],
                                                "properties": {"text": {"type": "string"}},
                                            },
                                        }
                                    },
                                }
                            }
                        },
                    }
                },
            }
        },
    },
}

_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")


def _terms(text: str) -> set[str]:
    chars = _TOKEN.findall(text.lower())
    words = {c for c in chars if len(c) > 2}
    cjk = [c for c in chars if "\u4e00" <= c <= "\u9fff"]
    return words | {a + b for a, b in itertools.pairwise(cjk)}


def notes_double() -> LoopbackServer:
    server = LoopbackServer(openapi=DOC, name="notes")
    notes: list[tuple[str, str]] = []

    def store(req: LoopbackRequest) -> Any:
        if req.headers.get("authorization") != "Bearer test-key":
            return error_reply(401, "bad key")
        item = (req.json["user"], req.json["text"])
        if item not in notes:
            notes.append(item)
        from hermes_core.testing.loopback import reply

        return reply({}, status=201)

    def search(req: LoopbackRequest) -> Any:
        wanted = _terms(req.json["query"])
        hits = [t for u, t in notes if u == req.json["user"] and wanted & _terms(t)]
        return {"results": [{"text": t} for t in hits]}

    server.route("POST", "/v1/notes", store)
    server.route("POST", "/v1/search", search)
    return server


class TestNotesExampleFaults(ServiceProviderFaults):
    provider_class = NotesProvider
    key_setting = "NOTES_API_KEY"
    probe_tool = ("notes_search", {"query": "locker code"})

    def make_double(self) -> LoopbackServer:
        return notes_double()

    def service_settings(self, base_url: str) -> dict[str, Any]:
        return {
            "base_url": base_url,
            "api_key": "test-key",
            "timeout": self.prefetch_timeout,
            "retries": 0,
            "failure_threshold": self.breaker_threshold,
            "cooldown": self.breaker_cooldown,
        }

"""ExampleProvider: the smallest useful memory provider.

It stores each user message in ``$HERMES_HOME/<path>`` (a JSON list, one list per user) and
recalls the ones that share the most words with the new prompt. Chinese text is compared
character by character, so it works for both languages. Replace the storage and the scoring
with your backend; keep the shape.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

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
from hermes_core.fsutil import atomic_write_text
from pydantic import Field, SecretStr

_TOKEN = re.compile(r"[\u4e00-\u9fff]|[^\W_]+", re.UNICODE)
_STOP = frozenset(
    {"a", "an", "and", "the", "to", "of", "i", "my", "is", "are", "do", "you", "me", "what"}
    | {"which", "please", "remember", "that"}
)


def tokens(text: str) -> set[str]:
    """Lower-cased words, and single CJK characters, minus a few stopwords."""
    return {t for t in (m.group(0).lower() for m in _TOKEN.finditer(text)) if t not in _STOP}


class ExampleSettings(ProviderSettings):
    """Settings of the example provider (``memory.providers.example`` in config.yaml)."""

    path: str = Field("example-memories.json", description="File under HERMES_HOME to store in.")
    top_k: int = Field(3, ge=1, le=20, description="Memories recalled per prompt.")
    user_id: str = Field("default", description="User id when the session has none.")
    api_key: SecretStr | None = Field(
        None,
        description="API key (unused here; shows how secrets are declared)",
        json_schema_extra={"url": "https://example.invalid/keys"},
    )


class ExampleProvider(MemoryProvider):
    """Remembers user messages in a JSON file and recalls them by word overlap."""

    name = "example"
    Settings = ExampleSettings

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        assert isinstance(settings, ExampleSettings)
        self.config = settings
        self.path = self.home / settings.path
        self._lock = threading.Lock()

    # identity ---------------------------------------------------------------------------

    def is_available(self) -> bool:
        return self.path.parent.is_dir()

    def unavailable_reason(self) -> str:
        where = f"memory.providers.{self.name}.path"
        return f"{self.path.parent} does not exist; create it or set {where}"

    # storage ----------------------------------------------------------------------------

    def _load(self) -> dict[str, list[str]]:
        if not self.path.exists():
            return {}
        data = json.loads(self.path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}

    def remember(self, user_id: str, text: str) -> bool:
        """Store ``text`` for ``user_id``; False when it was already stored."""
        with self._lock:
            data = self._load()
            memories = data.setdefault(user_id, [])
            if text in memories:
                return False
            memories.append(text)
            atomic_write_text(self.path, json.dumps(data, ensure_ascii=False, indent=1))
            return True

    def recall(self, user_id: str, query: str) -> list[str]:
        wanted = tokens(query)
        scored = [(len(wanted & tokens(m)), m) for m in self._load().get(user_id, [])]
        return [m for score, m in sorted(scored, key=lambda s: -s[0]) if score][: self.config.top_k]

    def _user(self, session: SessionInfo) -> str:
        return session.user_id or self.config.user_id

    # hooks ------------------------------------------------------------------------------

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        found = self.recall(self._user(session), query)
        if not found:
            return None
        text = "\n".join(f"- {m}" for m in found)
        return MemoryContext(text, count=len(found), label=self.name)  # labelled by name

    @hookimpl
    def sync(self, session: SessionInfo, turn: Turn) -> None:
        if turn.user_text.strip():
            self.remember(self._user(session), turn.user_text.strip())

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        def handler(args: Any, ctx: ToolContext) -> str:
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                error = "query (a non-empty string) is required"
                return json.dumps({"success": False, "error": error})
            hits = self.recall(self._user(ctx.session), query)
            return json.dumps({"success": True, "results": hits}, ensure_ascii=False)

        return [
            ToolSpec(
                name=f"{self.name.replace('-', '_')}_search",
                description=f"Search what the {self.name} provider remembers about the user.",
                parameters={
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "What to look for."}},
                    "required": ["query"],
                },
                handler=handler,
                read_only=True,
            )
        ]

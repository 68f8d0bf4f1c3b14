"""Drive one provider through the real registry, calling its hooks directly.

The host's facade isolates failures (a raising provider is logged and skipped); a test wants
the opposite, so :meth:`ProviderHarness.call` invokes the provider's own implementation and
lets exceptions through.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core import recall_trace
from hermes_core.host import MemoryHost, Session
from hermes_core.providers.base import MemoryProvider
from hermes_core.testing.fakes import make_turn
from hermes_core.types import MemoryContext, SessionInfo, ToolContext, Turn


class ProviderHarness:
    """A host for ``home`` with built-ins only (no entry points) plus one activated provider."""

    def __init__(
        self,
        provider_class: type[MemoryProvider],
        home: Path,
        settings: Mapping[str, Any] | None = None,
        *,
        user_id: str = "test-user",
    ) -> None:
        self.home = home
        self.host = MemoryHost.open(home, load_entrypoints=False, activate_provider=False)
        self.provider = self.host.registry.activate_class(provider_class, dict(settings or {}))
        self.session: Session = self.host.session(source="test", user_id=user_id)
        self._turns = 0

    def call(self, hook: str, **kwargs: Any) -> Any:
        """Call the provider's own ``hook`` implementation (``None`` when it has none).

        ``session`` defaults to the harness session. Exceptions propagate.
        """
        kwargs.setdefault("session", self.session.info)
        caller = getattr(self.host.pm.hook, hook)
        for impl in caller.get_hookimpls():
            if impl.plugin is self.provider:
                return impl.function(*(kwargs[name] for name in impl.argnames))
        return None

    def implements(self, hook: str) -> bool:
        caller = getattr(self.host.pm.hook, hook)
        return any(impl.plugin is self.provider for impl in caller.get_hookimpls())

    def sync(self, user_text: str, reply: str = "Noted.") -> Turn:
        """Sync one turn straight into the provider (synchronously)."""
        self._turns += 1
        turn = make_turn(user_text, reply, session_id=self.session.id, number=self._turns)
        self.call("sync", turn=turn)
        return turn

    def prefetch(self, query: str) -> MemoryContext | None:
        result = self.call("prefetch", query=query)
        assert result is None or isinstance(result, MemoryContext), (
            f"prefetch must return MemoryContext or None, got {type(result).__name__}"
        )
        return result

    def close(self) -> None:
        self.host.close()


def tool_result(
    provider: MemoryProvider, session: SessionInfo, name: str, **args: Any
) -> dict[str, Any]:
    """Call tool ``name`` of ``provider`` (as its ``register_tools`` offers it for
    ``session``) with ``args``; the JSON object it answered."""
    register = getattr(provider, "register_tools")  # noqa: B009 - a hook, not on the base
    spec = {t.name: t for t in register(session)}[name]
    data = json.loads(spec.handler(args, ToolContext(session=session)))
    assert isinstance(data, dict), f"{name} answered {data!r}, not a JSON object"
    return data


def session_tool(session: Session, name: str, **args: Any) -> dict[str, Any]:
    """Call tool ``name`` through ``session`` (the host's path); the JSON object it answered."""
    data = json.loads(session.call_tool(name, args))
    assert isinstance(data, dict), f"{name} answered {data!r}, not a JSON object"
    return data


def traced_source(harness: ProviderHarness, query: str) -> recall_trace.TraceSource:
    """Run one turn's recall for ``query`` through the harness session (the host's path) and
    return the harness provider's block as the recall trace recorded it. Asserts the block
    was traced and that its scores, when it has any, are one per ``- `` line of its text
    (the contract of ``MemoryContext.scores``, docs/ui.md)."""
    harness.session.before_turn(query)
    turns = recall_trace.load(harness.home, harness.session.info.user_id)
    assert turns, f"no recall was traced for {query!r}"
    layer = f"memory-provider:{harness.provider.name}"
    found = [s for s in turns[-1].sources if s.layer == layer]
    assert found, f"{layer} recalled nothing for {query!r}: {turns[-1].sources!r}"
    source = found[0]
    lines = [line for line in source.text.splitlines() if line.startswith("- ")]
    assert not source.scores or len(source.scores) == len(lines), (
        f"{len(source.scores)} scores for {len(lines)} memories: {source.text!r}"
    )
    return source


__all__ = ["ProviderHarness", "session_tool", "tool_result", "traced_source"]

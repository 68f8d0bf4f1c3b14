"""Drive one provider through the real registry, calling its hooks directly.

The host's facade isolates failures (a raising provider is logged and skipped); a test wants
the opposite, so :meth:`ProviderHarness.call` invokes the provider's own implementation and
lets exceptions through.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
        self._others: list[Session] = []

    def other_user(self, user_id: str) -> Session:
        """A session of another user on the same host (closed with the harness): what the
        harness user stored must never reach it."""
        made = self.host.session(source="test", user_id=user_id)
        self._others.append(made)
        return made

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
        for other in self._others:
            other.close()
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


@dataclass(frozen=True)
class ScoreCase:
    """Recalled items for a provider's ``format_context`` and the block it must make: one
    score per ``- `` line shown (a blank item is neither shown nor scored), or no scores
    at all when any shown item lacks one (``MemoryContext.scores``, docs/ui.md)."""

    name: str
    items: tuple[tuple[str, str, float | None], ...]
    """``(id, text, score)`` of each item, in the order the service answered."""
    scores: tuple[float, ...]
    lines: tuple[str, ...]

    def check(
        self,
        format_context: Callable[[list[Any]], MemoryContext | None],
        item: Callable[[str, str, float | None], Any],
    ) -> None:
        """Build the items with ``item(id, text, score)``, format them, check the block."""
        block = format_context([item(*spec) for spec in self.items])
        assert block is not None and block.count == len(self.lines), block
        assert block.scores == self.scores, block.scores
        shown = [line for line in block.text.splitlines() if line.startswith("- ")]
        assert shown == list(self.lines), block.text


SCORE_CASES: Sequence[ScoreCase] = (
    ScoreCase(
        "scores-follow-the-lines",
        (("a", "Alice likes tea", 0.91), ("b", "  ", 0.5), ("c", "Alice 喜欢乌龙茶", 0.42)),
        (0.91, 0.42),
        ("- Alice likes tea", "- Alice 喜欢乌龙茶"),
    ),
    ScoreCase(
        "no-scores-when-one-is-missing",
        (("a", "one", 0.9), ("b", "two", None)),
        (),
        ("- one", "- two"),
    ),
)
"""Parametrise a provider's score test over these (``ids=lambda c: c.name``)."""


__all__ = [
    "SCORE_CASES",
    "ProviderHarness",
    "ScoreCase",
    "session_tool",
    "tool_result",
    "traced_source",
]

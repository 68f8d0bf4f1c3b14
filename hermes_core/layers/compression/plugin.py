"""The compression layer as a plugin (hook implementations only; logic lives in sibling modules).

When to compress is a rule of the settings, not of this layer:
:meth:`~hermes_core.settings.models.CompressionSettings.trigger_tokens` and
:meth:`~hermes_core.settings.models.CompressionSettings.should_compress`, which the Session
applies. The ``compress`` hookimpl is ``trylast`` so any plugin can replace the built-in
compressor. Per-session state (previous summary, ineffective streak, anti-thrash stop) is
keyed by ``session.id`` and dropped at ``on_session_end``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from hermes_core.layers.compression.compressor import CompressionState, compress_messages
from hermes_core.layers.compression.metrics import load_stats, record_event
from hermes_core.llm.client import LLMClient
from hermes_core.markers import hookimpl
from hermes_core.settings.models import HermesSettings
from hermes_core.types import (
    ChatMessage,
    CompressionBudget,
    CompressionResult,
    HealthCheck,
    SessionInfo,
)

log = logging.getLogger(__name__)


ClientFactory = Callable[[HermesSettings], LLMClient | None]


def _route_client(settings: HermesSettings) -> LLMClient | None:
    return LLMClient.from_settings(settings, "compression")


def _main_client(settings: HermesSettings) -> LLMClient | None:
    return LLMClient.from_settings(settings)


class CompressionLayer:
    """Hook implementations of the compression layer. One instance per host.

    ``client_factory``/``main_client_factory`` build the summariser clients from settings
    (the ``llm.auxiliary.compression`` route, then the main model for one retry); tests may
    replace them.
    """

    def __init__(
        self,
        client_factory: ClientFactory = _route_client,
        main_client_factory: ClientFactory = _main_client,
    ) -> None:
        self.client_factory = client_factory
        self.main_client_factory = main_client_factory
        self.settings: HermesSettings | None = None
        self.home: Path | None = None
        self._states: dict[str, CompressionState] = {}
        self._lock = threading.Lock()

    @hookimpl
    def configure(self, settings: HermesSettings, home: Path) -> None:
        self.settings = settings
        self.home = home

    def state(self, session_id: str) -> CompressionState:
        """The per-session compressor state (created on first use)."""
        with self._lock:
            return self._states.setdefault(session_id, CompressionState())

    @hookimpl(trylast=True)
    def compress(
        self,
        session: SessionInfo,
        messages: Sequence[ChatMessage],
        budget: CompressionBudget,
        notes: str,
    ) -> CompressionResult:
        settings = session.settings
        state = self.state(session.id)
        result = compress_messages(
            messages,
            settings=settings.compression,
            budget=budget,
            state=state,
            client_factory=lambda: self.client_factory(settings),
            fallback_client_factory=lambda: self.main_client_factory(settings),
            notes=notes or "",
        )
        if result.aborted and result.error:
            log.warning("session %s: %s", session.id, result.error)
        try:
            record_event(session.home, session.id, result)
        except Exception as exc:  # metrics must never fail a turn
            log.warning("could not record compression metrics in state.db: %s", exc)
        return result

    @hookimpl
    def on_session_end(self, session: SessionInfo) -> None:
        with self._lock:
            self._states.pop(session.id, None)

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        settings = self.settings
        checks: list[HealthCheck] = []
        if settings is not None:
            client = LLMClient.from_settings(settings, "compression")
            if client is None:
                checks.append(
                    HealthCheck(
                        "compression summariser",
                        True,
                        "no model configured: the deterministic extractive handoff sheet is used",
                        "set llm.base_url and llm.model (or llm.auxiliary.compression.*) for "
                        "LLM summaries",
                    )
                )
            else:
                checks.append(
                    HealthCheck(
                        "compression summariser", True, f"{client.model} at {client.display_url}"
                    )
                )
                client.close()
        try:
            stats = load_stats(home)
            checks.append(
                HealthCheck(
                    "compression events",
                    True,
                    f"{stats.count} compactions ({stats.fallbacks} fallback, "
                    f"{stats.aborted} aborted), {stats.tokens_saved:,} tokens saved",
                )
            )
        except Exception as exc:
            checks.append(
                HealthCheck(
                    "compression events",
                    False,
                    f"state.db unreadable: {exc}",
                    "check permissions of $HERMES_HOME/state.db",
                )
            )
        return checks


def create_plugin() -> CompressionLayer:
    """Called once per plugin manager by :func:`hermes_core.plugins.create_plugin_manager`."""
    return CompressionLayer()


__all__ = ["CompressionLayer", "create_plugin"]

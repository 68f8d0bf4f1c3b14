"""Settings of the retaindb provider (spec §4, RetainDB).

Sources, first wins: explicit init values, ``HERMES_MEMORY__PROVIDERS__RETAINDB__<FIELD>`` and
Hermes Agent's variables (``RETAINDB_API_KEY``, ``RETAINDB_BASE_URL``, ``RETAINDB_PROJECT``),
``$HERMES_HOME/.env``, ``memory.providers.retaindb`` in config.yaml, then the defaults.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import SecretStr, field_validator

from hermes_core.providers.service.fields import (
    ServiceProviderSettings,
    advanced_field,
    env_field,
    http_url,
    service_field,
)

DEFAULT_URL = "https://api.retaindb.com"
KEY_URL = "https://www.retaindb.com"
_field = partial(env_field, "retaindb")
_URL_ERROR = "{value!r} must start with http:// or https://"

MEMORY_TYPES = (
    "factual",
    "preference",
    "goal",
    "instruction",
    "event",
    "opinion",
    "relationship",
)
MemoryType = Literal[
    "factual", "preference", "goal", "instruction", "event", "opinion", "relationship"
]


class RetainDBSettings(ServiceProviderSettings):
    """Configuration of the retaindb provider (``memory.providers.retaindb``)."""

    setup_note: ClassVar[str] = (
        f"Get a RetainDB API key at {KEY_URL}; keep the API URL unless you self-host."
    )

    # -- asked by `hermes-memory memory setup retaindb`
    api_key: SecretStr | None = _field(
        "api_key", None, "RETAINDB_API_KEY", description="RetainDB API key.", url=KEY_URL
    )
    base_url: Annotated[str, http_url(message=_URL_ERROR, empty=DEFAULT_URL)] = _field(
        "base_url",
        DEFAULT_URL,
        "RETAINDB_BASE_URL",
        description="RetainDB API URL (change it only for a self-hosted RetainDB).",
    )
    project: str | None = _field(
        "project",
        None,
        "RETAINDB_PROJECT",
        description="RetainDB project; empty = hermes-<profile> for a Hermes profile "
        "(~/.hermes/profiles/<profile>), else 'default'.",
    )

    # -- advanced: defaults, not asked
    user_id: str = advanced_field(
        "local", "User for sessions that carry no user_id (the single local user).", min_length=1
    )
    agent_id: str = advanced_field("hermes", "Agent id sent with writes.", min_length=1)
    top_k: int = advanced_field(8, "Memories recalled per search (max 20).", ge=1, le=20)
    profile_in_context: int = advanced_field(
        5, "Profile memories added to automatic recall (0 = none).", ge=0, le=20
    )
    default_importance: float = advanced_field(
        0.7, "Importance of memories stored without one.", ge=0, le=1
    )
    write_mode: Literal["async", "sync"] = advanced_field(
        "async",
        "How automatic writes are committed: async (queued by RetainDB, visible "
        "at once through include_pending) or sync (committed before the call returns).",
    )
    ingest: Literal["turn", "session"] = advanced_field(
        "turn",
        "turn = send each completed turn for extraction; session = send the "
        "whole transcript once, at session end.",
    )
    search_profile: Literal["fast", "balanced", "quality"] = advanced_field(
        "fast", "RetainDB search profile."
    )
    timeout: float = service_field("timeout")
    prefetch_wait: float = service_field(
        "prefetch_wait", description="Seconds automatic recall waits for RetainDB."
    )
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        return value.strip() if value and value.strip() else None

    def key(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None

    def project_for(self, home: Path) -> str:
        """The project every call uses: ``project``, else ``hermes-<profile>`` when
        ``home`` is a Hermes profile (``.../profiles/<profile>``), else ``default``."""
        if self.project:
            return self.project
        home = Path(home)
        if home.parent.name == "profiles" and home.name:
            return f"hermes-{home.name}"
        return "default"


__all__ = ["DEFAULT_URL", "KEY_URL", "MEMORY_TYPES", "MemoryType", "RetainDBSettings"]

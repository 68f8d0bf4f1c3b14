"""Settings of the retaindb provider (spec §4, RetainDB).

Sources, first wins: explicit init values, ``HERMES_MEMORY__PROVIDERS__RETAINDB__<FIELD>`` and
Hermes Agent's variables (``RETAINDB_API_KEY``, ``RETAINDB_BASE_URL``, ``RETAINDB_PROJECT``),
``$HERMES_HOME/.env``, ``memory.providers.retaindb`` in config.yaml, then the defaults.

``hermes-memory memory setup retaindb`` asks only for the API key, the API URL and the project;
every other field keeps its default and is not written to config (`--advanced` asks them too).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from hermes_core.providers.base import ProviderSettings
from hermes_core.providers.service.fields import (
    advanced,
    breaker_cooldown_field,
    env_alias,
    failure_threshold_field,
    prefetch_wait_field,
    retries_field,
    timeout_field,
)

DEFAULT_URL = "https://api.retaindb.com"
KEY_URL = "https://www.retaindb.com"
_env = partial(env_alias, "retaindb")

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


class RetainDBSettings(ProviderSettings):
    """Configuration of the retaindb provider (``memory.providers.retaindb``)."""

    model_config = SettingsConfigDict(extra="ignore", validate_default=True, populate_by_name=True)

    setup_note: ClassVar[str] = (
        f"Get a RetainDB API key at {KEY_URL}; keep the API URL unless you self-host."
    )

    # -- asked by `hermes-memory memory setup retaindb`
    api_key: SecretStr | None = Field(
        None,
        description="RetainDB API key.",
        validation_alias=_env("api_key", "RETAINDB_API_KEY"),
        json_schema_extra={"setup": "ask", "env_var": "RETAINDB_API_KEY", "url": KEY_URL},
    )
    base_url: str = Field(
        DEFAULT_URL,
        description="RetainDB API URL (change it only for a self-hosted RetainDB).",
        validation_alias=_env("base_url", "RETAINDB_BASE_URL"),
        json_schema_extra={"setup": "ask", "env_var": "RETAINDB_BASE_URL"},
    )
    project: str | None = Field(
        None,
        description="RetainDB project; empty = hermes-<profile> for a Hermes profile "
        "(~/.hermes/profiles/<profile>), else 'default'.",
        validation_alias=_env("project", "RETAINDB_PROJECT"),
        json_schema_extra={"setup": "ask", "env_var": "RETAINDB_PROJECT"},
    )

    # -- advanced: defaults, not asked
    user_id: str = Field(
        "local",
        min_length=1,
        description="User for sessions that carry no user_id (the single local user).",
        json_schema_extra=advanced(),
    )
    agent_id: str = Field(
        "hermes",
        min_length=1,
        description="Agent id sent with writes.",
        json_schema_extra=advanced(),
    )
    top_k: int = Field(
        8,
        ge=1,
        le=20,
        description="Memories recalled per search (max 20).",
        json_schema_extra=advanced(),
    )
    profile_in_context: int = Field(
        5,
        ge=0,
        le=20,
        description="Profile memories added to automatic recall (0 = none).",
        json_schema_extra=advanced(),
    )
    default_importance: float = Field(
        0.7,
        ge=0,
        le=1,
        description="Importance of memories stored without one.",
        json_schema_extra=advanced(),
    )
    write_mode: Literal["async", "sync"] = Field(
        "async",
        description="How automatic writes are committed: async (queued by RetainDB, visible "
        "at once through include_pending) or sync (committed before the call returns).",
        json_schema_extra=advanced(),
    )
    ingest: Literal["turn", "session"] = Field(
        "turn",
        description="turn = send each completed turn for extraction; session = send the "
        "whole transcript once, at session end.",
        json_schema_extra=advanced(),
    )
    search_profile: Literal["fast", "balanced", "quality"] = Field(
        "fast", description="RetainDB search profile.", json_schema_extra=advanced()
    )
    timeout: float = timeout_field()
    prefetch_wait: float = prefetch_wait_field(
        description="Seconds automatic recall waits for RetainDB."
    )
    retries: int = retries_field()
    failure_threshold: int = failure_threshold_field()
    breaker_cooldown: float = breaker_cooldown_field()

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        value = (value or "").strip().rstrip("/") or DEFAULT_URL
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} must start with http:// or https://")
        return value

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

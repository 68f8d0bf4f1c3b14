"""Settings of the supermemory provider (spec §4, Supermemory).

Sources, first wins: init, ``HERMES_MEMORY__PROVIDERS__SUPERMEMORY__<FIELD>`` and the
Supermemory env names (``SUPERMEMORY_API_KEY``, ``SUPERMEMORY_BASE_URL``,
``SUPERMEMORY_CONTAINER_TAG``), ``$HERMES_HOME/.env``, ``memory.providers.supermemory`` in
config.yaml, then ``$HERMES_HOME/supermemory.json`` (the file Hermes Agent writes, same
keys; see the provider's ``config_values``), then the defaults. ``hermes-memory memory setup
supermemory`` asks only the key, the URL and the container tag.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from hermes_core.providers.service.fields import (
    BaseURL,
    ServiceProviderSettings,
    env_field,
    read_json_object,
    service_field,
)

CONFIG_FILE = "supermemory.json"
CLOUD_URL = "https://api.supermemory.ai"
KEY_URL = "https://app.supermemory.ai/integrations?connect=hermes"
_field = partial(env_field, "supermemory")
TAG_PATTERN = r"^[A-Za-z0-9._{}-]{1,50}$"
"""A container tag (``{identity}`` allowed): the API allows 100 characters of
``[A-Za-z0-9._-]``; 50 leaves room for the per-user suffix."""

SearchMode = Literal["hybrid", "memories", "documents"]
CaptureMode = Literal["all", "substantive"]

DEFAULT_ENTITY_CONTEXT = (
    "User-assistant conversation. Only extract things useful in future conversations: "
    "lasting personal facts, preferences, routines, tools, ongoing projects, working context, "
    "and explicit requests to remember something. Do not remember temporary intents, one-time "
    "tasks or assistant actions. When in doubt, store less."
)


class SupermemorySettings(ServiceProviderSettings):
    """Configuration of :class:`hermes_memory_supermemory.provider.SupermemoryProvider`."""

    setup_note = (
        f"Supermemory needs an API key: get one at {KEY_URL}. A self-hosted server "
        "(`npx supermemory local`) prints its key on first boot."
    )

    api_key: SecretStr | None = _field(
        "api_key", None, "SUPERMEMORY_API_KEY", description="Supermemory API key", url=KEY_URL
    )
    base_url: BaseURL = _field(
        "base_url",
        CLOUD_URL,
        "SUPERMEMORY_BASE_URL",
        description="Supermemory URL: the cloud API or your self-hosted server "
        "(e.g. http://localhost:6767)",
    )
    container_tag: str = _field(
        "container_tag",
        "hermes",
        "SUPERMEMORY_CONTAINER_TAG",
        description="Container tag of this agent's memories ({identity} = the Hermes "
        "profile); each user gets their own container under it",
        pattern=TAG_PATTERN,
    )
    auto_recall: bool = Field(True, description="Recall memories before each model call.")
    auto_capture: bool = Field(True, description="Store each completed turn.")
    max_recall_results: int = Field(
        10, ge=1, le=50, description="Memories recalled per section per turn."
    )
    profile_frequency: int = Field(
        50, ge=1, le=500, description="Include profile facts on the first turn and every N."
    )
    capture_mode: CaptureMode = Field(
        "all", description="all = capture every turn; substantive = skip trivial turns."
    )
    search_mode: SearchMode = Field(
        "hybrid", description="Search memories and documents (hybrid), or only one of them."
    )
    entity_context: str = Field(
        DEFAULT_ENTITY_CONTEXT,
        max_length=1500,
        description="Extraction guidance sent with every write (max 1500 characters).",
    )
    api_timeout: float = service_field("timeout", 5.0, le=120, description="Seconds per request.")
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")
    enable_custom_container_tags: bool = Field(
        False, description="Let the tools target the custom containers below."
    )
    custom_containers: list[str] = Field(
        default_factory=list,
        description="Extra container names the tools may target (each still per user).",
    )
    custom_container_instructions: str = Field(
        "", max_length=2000, description="When to use which custom container (system prompt)."
    )

    @field_validator("custom_containers")
    @classmethod
    def _containers(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.match(TAG_PATTERN, name):
                raise ValueError(f"custom container {name!r} must match {TAG_PATTERN}")
        return list(dict.fromkeys(value))


def read_supermemory_json(home: Path) -> dict[str, Any]:
    """Fields from ``$HERMES_HOME/supermemory.json`` (``{}`` when absent); ConfigError naming
    the file when it is not a JSON object."""
    data = read_json_object(Path(home) / CONFIG_FILE)
    return {
        k: v
        for k, v in data.items()
        if k in SupermemorySettings.model_fields and v not in (None, "")
    }


__all__ = [
    "CLOUD_URL",
    "CONFIG_FILE",
    "KEY_URL",
    "SupermemorySettings",
    "read_supermemory_json",
]

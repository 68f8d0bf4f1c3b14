"""Settings of the hindsight provider (spec §4, Hindsight).

Sources, first wins: explicit init values, ``HERMES_MEMORY__PROVIDERS__HINDSIGHT__<FIELD>``
and the Hermes Agent variables (``HINDSIGHT_API_KEY``, ``HINDSIGHT_API_URL``,
``HINDSIGHT_BANK_ID``, ``HINDSIGHT_BUDGET``, ``HINDSIGHT_MODE``, ``HINDSIGHT_TIMEOUT``),
``$HERMES_HOME/.env``, ``memory.providers.hindsight`` in config.yaml, then Hermes Agent's
``$HERMES_HOME/hindsight/config.json`` (see :func:`apply_config_file`), then the defaults.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import SecretStr, field_validator

from hermes_core.errors import ConfigError
from hermes_core.providers.service.fields import (
    ServiceProviderSettings,
    advanced_field,
    env_field,
    http_url,
    read_json_object,
    service_field,
    with_file_values,
)

CLOUD_URL = "https://api.hindsight.vectorize.io"
LOCAL_URL = "http://localhost:8888"
KEY_URL = "https://ui.hindsight.vectorize.io"
CONFIG_FILE = Path("hindsight") / "config.json"
_field = partial(env_field, "hindsight")
_URL_ERROR = "{value!r} must start with http:// or https://"

Mode = Literal["cloud", "local_external"]
Budget = Literal["low", "mid", "high"]
MemoryMode = Literal["hybrid", "context", "tools"]
TagsMatch = Literal["any", "all", "any_strict", "all_strict"]


class HindsightSettings(ServiceProviderSettings):
    """Configuration of the hindsight provider (``memory.providers.hindsight``)."""

    setup_note: ClassVar[str] = (
        f"Hindsight Cloud: get an API key at {KEY_URL}. Your own server (Docker, "
        "hindsight-api): enter its URL; the key may stay empty."
    )

    # -- asked by `hermes-memory memory setup hindsight`
    api_key: SecretStr | None = _field(
        "api_key",
        None,
        "HINDSIGHT_API_KEY",
        description="Hindsight API key (required for Hindsight Cloud; optional for your own "
        "server).",
        url=KEY_URL,
    )
    api_url: Annotated[str | None, http_url(message=_URL_ERROR, empty=None)] = _field(
        "api_url",
        None,
        "HINDSIGHT_API_URL",
        description=f"Hindsight server URL; empty = Hindsight Cloud ({CLOUD_URL}). For your "
        f"own server (Docker, hindsight-api) e.g. {LOCAL_URL}.",
    )
    bank_id: str = _field(
        "bank_id",
        "hermes",
        "HINDSIGHT_BANK_ID",
        description="Memory bank name; each user gets their own bank derived from it "
        "(see bank_id_template).",
        min_length=1,
    )

    # -- advanced: defaults, not asked
    mode: Mode = _field(
        "mode",
        "cloud",
        "HINDSIGHT_MODE",
        description="cloud = Hindsight Cloud (API key required); local_external = a "
        "Hindsight server you run (URL required, key optional). Set automatically from "
        "api_url when it is not the cloud URL.",
        setup="advanced",
    )
    bank_id_template: str = advanced_field(
        "{bank}-{user}",
        "How a session's bank is named. Placeholders: {bank} (bank_id), {user}, "
        "{profile}, {platform}, {session}; empty placeholders collapse. Whatever the "
        "template, every memory is also tagged with its user and recall filters on that tag, "
        "so two users never see each other's memories.",
    )
    user_id: str = advanced_field(
        "local", "User for sessions that carry no user_id (the single local user).", min_length=1
    )
    bank_mission: str | None = advanced_field(
        None, "Reflect mission of new banks (who the agent is, how to reason)."
    )
    bank_retain_mission: str | None = advanced_field(
        None, "Retain mission of new banks (steers what gets extracted)."
    )
    recall_budget: Budget = _field(
        "recall_budget",
        "mid",
        "HINDSIGHT_BUDGET",
        description="Recall thoroughness: low, mid or high.",
        setup="advanced",
    )
    recall_prefetch_method: Literal["recall", "reflect"] = advanced_field(
        "recall",
        "Automatic recall before each turn: recall (ranked facts) or reflect "
        "(an LLM synthesis by the server).",
    )
    recall_context_budget: int = _field(
        "recall_context_budget",
        4096,
        None,
        "recall_context_budget",
        "recall_max_tokens",
        description="Tokens one recall may return (Hermes Agent calls it recall_max_tokens).",
        setup="advanced",
        ge=64,
        le=32768,
    )
    recall_max_input_chars: int = advanced_field(
        800, "Automatic recall sends at most this many characters of the user's message.", ge=16
    )
    recall_max_results: int = advanced_field(
        8, "At most this many memories go into the prompt.", ge=1, le=50
    )
    recall_types: list[str] = advanced_field(
        ...,
        "Fact types recalled: observation (consolidated), world, experience. "
        "A comma-separated string or a list.",
        default_factory=lambda: ["observation"],
    )
    recall_tags: list[str] = advanced_field(
        ..., "Extra tags recall filters on (besides the user's own tag).", default_factory=list
    )
    auto_recall: bool = advanced_field(True, "Recall memories automatically before each turn.")
    recall_sync: bool = advanced_field(
        False,
        "False: wait at most prefetch_wait for this turn's recall, else use the "
        "one started after the previous turn. True: wait up to the host's prefetch_timeout.",
    )
    auto_retain: bool = advanced_field(True, "Retain every completed turn automatically.")
    retain_async: bool = advanced_field(True, "Let the server process retains in the background.")
    retain_every_n_turns: int = advanced_field(
        1,
        "Retain every N turns (turns in between are buffered; "
        "the rest is retained at session end).",
        ge=1,
        le=100,
    )
    retain_context: str = advanced_field(
        "conversation between Hermes Agent and the User", "Context label sent with retained turns."
    )
    retain_user_prefix: str = advanced_field(
        "User", "Label before user messages in retained turns."
    )
    retain_assistant_prefix: str = advanced_field(
        "Assistant", "Label before assistant messages in retained turns."
    )
    retain_tags: list[str] = advanced_field(
        ..., "Extra tags attached to every retained memory.", default_factory=list
    )
    retain_source: str | None = advanced_field(
        None, "Optional metadata.source of retained memories."
    )
    memory_mode: MemoryMode = advanced_field(
        "hybrid",
        "hybrid = automatic recall and tools; context = automatic recall only; tools = tools only.",
    )
    timeout: float = _field(
        "timeout",
        60.0,
        "HINDSIGHT_TIMEOUT",
        le=600,
        description="Seconds one HTTP call may take (tools, retains).",
    )
    prefetch_wait: float = service_field(
        "prefetch_wait", description="Seconds automatic recall waits for the server."
    )
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field(
        "breaker_cooldown",
        description="Seconds the provider stays paused after the failures; then one call "
        "probes the server.",
    )

    @field_validator("recall_types", "recall_tags", "retain_tags", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    return json.loads(text)
                except ValueError:
                    pass
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("recall_types")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if t not in ("observation", "world", "experience")]
        if bad:
            raise ValueError(f"unknown fact types {bad}; use observation, world, experience")
        return value

    def base_url(self) -> str:
        """The server every call goes to."""
        if self.api_url:
            return self.api_url
        return LOCAL_URL if self.effective_mode() == "local_external" else CLOUD_URL

    def effective_mode(self) -> Mode:
        """``local_external`` when ``api_url`` names a server other than the cloud."""
        if self.api_url and self.api_url.rstrip("/") != CLOUD_URL:
            return "local_external"
        return self.mode

    def key(self) -> str | None:
        return self.api_key.get_secret_value() if self.api_key else None


# Hermes Agent's config.json keys (camelCase aliases included) -> our fields.
_FILE_KEYS = {
    "apiKey": "api_key",
    "api_key": "api_key",
    "apiUrl": "api_url",
    "api_url": "api_url",
    "bankId": "bank_id",
    "bank_id": "bank_id",
    "budget": "recall_budget",
    "recall_max_tokens": "recall_context_budget",
}


def read_config_file(home: Path) -> dict[str, Any]:
    """Hermes Agent's ``$HERMES_HOME/hindsight/config.json`` as our field names (``{}``
    when absent). Raises ConfigError naming the file on invalid JSON."""
    data = read_json_object(Path(home) / CONFIG_FILE)
    out: dict[str, Any] = {}
    banks = data.get("banks")
    if isinstance(banks, dict) and isinstance(banks.get("hermes"), dict):
        legacy = banks["hermes"]
        if legacy.get("bankId"):
            out["bank_id"] = legacy["bankId"]
        if legacy.get("budget"):
            out["recall_budget"] = legacy["budget"]
    for key, value in data.items():
        name = _FILE_KEYS.get(key, key)
        if name in HindsightSettings.model_fields and value not in (None, ""):
            out[name] = value
    if out.get("mode") == "local":  # Hermes Agent's legacy alias of local_embedded
        out["mode"] = "local_embedded"
    return out


def apply_config_file(settings: HindsightSettings, home: Path) -> HindsightSettings:
    """``settings`` with Hermes Agent's config.json filling fields nobody set explicitly.

    Raises ConfigError naming the file and the field when a value is invalid (including
    ``mode: local_embedded``, which needs Hermes Agent's embedded daemon).
    """
    file_values = read_config_file(home)
    if not file_values:
        return settings
    path = Path(home) / CONFIG_FILE
    if file_values.get("mode") == "local_embedded":
        raise ConfigError(
            f"{path}: mode 'local_embedded' starts Hermes Agent's own Hindsight daemon, which "
            "hermes-core does not manage — run a Hindsight server (Docker or `hindsight-api`) "
            "and set mode 'local_external' with its api_url."
        )
    return with_file_values(settings, file_values, path)


__all__ = [
    "CLOUD_URL",
    "CONFIG_FILE",
    "KEY_URL",
    "LOCAL_URL",
    "HindsightSettings",
    "apply_config_file",
    "read_config_file",
]

"""Settings of the OpenViking provider (``memory.providers.openviking``).

Sources, first wins: explicit values, ``HERMES_MEMORY__PROVIDERS__OPENVIKING__<FIELD>`` and
the env vars Hermes Agent uses (``OPENVIKING_URL`` or legacy ``OPENVIKING_ENDPOINT``,
``OPENVIKING_API_KEY``, ``OPENVIKING_ACCOUNT``, ``OPENVIKING_USER``,
``OPENVIKING_ACTOR_PEER_ID`` or legacy ``OPENVIKING_AGENT``), ``$HERMES_HOME/.env``,
config.yaml, the defaults below.

``hermes-memory memory setup openviking`` asks the server URL, the API key and the account; the
rest keeps its defaults (``--advanced`` asks them too).
"""

from __future__ import annotations

from functools import partial
from typing import ClassVar, Literal

from pydantic import SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from hermes_core.providers.base import ProviderSettings, setup_field
from hermes_core.providers.service.fields import (
    breaker_cooldown_field,
    env_alias,
    failure_threshold_field,
    recall_max_chars_field,
    retries_field,
    timeout_field,
)

_env = partial(env_alias, "openviking")
DEFAULT_URL = "http://127.0.0.1:1933"
IDENTIFIER = r"^[A-Za-z0-9_.@-]+$"


class OpenVikingSettings(ProviderSettings):
    """Connection, identity and recall settings of the OpenViking provider."""

    model_config = SettingsConfigDict(extra="ignore", validate_default=True, populate_by_name=True)

    setup_note: ClassVar[str] = (
        "OpenViking runs as a server: `pip install openviking` then `openviking-server` "
        "(default http://127.0.0.1:1933), or use a hosted endpoint. A trusted-mode server takes "
        "its root API key here so each Hermes user gets an OpenViking user of their own."
    )

    url: str = setup_field(
        DEFAULT_URL,
        description="OpenViking server URL (self-hosted `openviking-server` or a hosted endpoint)",
        env_var="OPENVIKING_URL",
        validation_alias=_env("url", "OPENVIKING_URL", "OPENVIKING_ENDPOINT"),
    )
    api_key: SecretStr | None = setup_field(
        None,
        description="OpenViking API key (trusted mode: the server's root_api_key; blank for a "
        "local dev server without auth)",
        env_var="OPENVIKING_API_KEY",
        url="https://openviking.ai/docs",
        validation_alias=_env("api_key", "OPENVIKING_API_KEY"),
    )
    account: str = setup_field(
        "default",
        description="OpenViking account (tenant) that Hermes users live in",
        env_var="OPENVIKING_ACCOUNT",
        validation_alias=_env("account", "OPENVIKING_ACCOUNT"),
        pattern=IDENTIFIER,
        max_length=128,
    )
    user: str = setup_field(
        "default",
        description="OpenViking user for sessions that carry no user_id (a session's own "
        "user_id always wins)",
        setup="advanced",
        env_var="OPENVIKING_USER",
        validation_alias=_env("user", "OPENVIKING_USER"),
        pattern=IDENTIFIER,
        max_length=128,
    )
    actor_peer: str = setup_field(
        "hermes",
        description="Peer id of the agent in OpenViking: memories go under "
        "viking://~/peers/<actor_peer>/memories/",
        setup="advanced",
        env_var="OPENVIKING_ACTOR_PEER_ID",
        validation_alias=_env("actor_peer", "OPENVIKING_ACTOR_PEER_ID", "OPENVIKING_AGENT"),
        pattern=IDENTIFIER,
        max_length=128,
    )
    tenancy: Literal["per_user", "single_user"] = setup_field(
        "per_user",
        description="per_user = the key (trusted-mode root key, or none on a dev server) "
        "lets Hermes name the OpenViking user per request, so every Hermes user is separate; "
        "single_user = the key is ONE OpenViking user's: only sessions of `user` (or without "
        "a user_id) are served",
        setup="advanced",
    )
    resource_scope: Literal["user", "account"] = setup_field(
        "user",
        description="Where viking_add_resource puts resources: user = the user's own "
        "viking://~/resources/ (private); account = the shared viking://resources/ of the "
        "account (every user of the account can read them)",
        setup="advanced",
    )
    recall_limit: int = setup_field(
        6, description="Memories injected per turn", setup="advanced", ge=1, le=50
    )
    recall_score_threshold: float = setup_field(
        0.1,
        description="Search results scoring below this are not injected",
        setup="advanced",
        ge=0.0,
        le=1.0,
    )
    recall_max_chars: int = recall_max_chars_field()
    recall_resources: bool = setup_field(
        False,
        description="Also inject matching resources (documents), not only memories",
        setup="advanced",
    )
    commit_every_turns: int = setup_field(
        0,
        description="Commit the OpenViking session (server-side memory extraction) every N "
        "synced turns; 0 = only when the session ends",
        setup="advanced",
        ge=0,
        le=10_000,
    )
    timeout: float = timeout_field(10.0, le=600)
    retries: int = retries_field()
    failure_threshold: int = failure_threshold_field()
    breaker_cooldown: float = breaker_cooldown_field()

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(
                "must start with http:// or https:// (e.g. http://127.0.0.1:1933); "
                "set OPENVIKING_URL"
            )
        return value


__all__ = ["DEFAULT_URL", "IDENTIFIER", "OpenVikingSettings"]

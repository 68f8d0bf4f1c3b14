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
from typing import Annotated, ClassVar, Literal

from pydantic import SecretStr

from hermes_core.providers.service.fields import (
    ServiceProviderSettings,
    advanced_field,
    env_field,
    http_url,
    service_field,
)

_field = partial(env_field, "openviking")
_URL_ERROR = "must start with http:// or https:// (e.g. http://127.0.0.1:1933); set OPENVIKING_URL"
DEFAULT_URL = "http://127.0.0.1:1933"
IDENTIFIER = r"^[A-Za-z0-9_.@-]+$"


class OpenVikingSettings(ServiceProviderSettings):
    """Connection, identity and recall settings of the OpenViking provider."""

    setup_note: ClassVar[str] = (
        "OpenViking runs as a server: `pip install openviking` then `openviking-server` "
        "(default http://127.0.0.1:1933), or use a hosted endpoint. A trusted-mode server takes "
        "its root API key here so each Hermes user gets an OpenViking user of their own."
    )

    url: Annotated[str, http_url(message=_URL_ERROR)] = _field(
        "url",
        DEFAULT_URL,
        "OPENVIKING_URL",
        "OPENVIKING_ENDPOINT",
        description="OpenViking server URL (self-hosted `openviking-server` or a hosted endpoint)",
    )
    api_key: SecretStr | None = _field(
        "api_key",
        None,
        "OPENVIKING_API_KEY",
        description="OpenViking API key (trusted mode: the server's root_api_key; blank for a "
        "local dev server without auth)",
        url="https://openviking.ai/docs",
    )
    account: str = _field(
        "account",
        "default",
        "OPENVIKING_ACCOUNT",
        description="OpenViking account (tenant) that Hermes users live in",
        pattern=IDENTIFIER,
        max_length=128,
    )
    user: str = _field(
        "user",
        "default",
        "OPENVIKING_USER",
        description="OpenViking user for sessions that carry no user_id (a session's own "
        "user_id always wins)",
        setup="advanced",
        pattern=IDENTIFIER,
        max_length=128,
    )
    actor_peer: str = _field(
        "actor_peer",
        "hermes",
        "OPENVIKING_ACTOR_PEER_ID",
        "OPENVIKING_AGENT",
        description="Peer id of the agent in OpenViking: memories go under "
        "viking://~/peers/<actor_peer>/memories/",
        setup="advanced",
        pattern=IDENTIFIER,
        max_length=128,
    )
    tenancy: Literal["per_user", "single_user"] = advanced_field(
        "per_user",
        "per_user = the key (trusted-mode root key, or none on a dev server) "
        "lets Hermes name the OpenViking user per request, so every Hermes user is separate; "
        "single_user = the key is ONE OpenViking user's: only sessions of `user` (or without "
        "a user_id) are served",
    )
    resource_scope: Literal["user", "account"] = advanced_field(
        "user",
        "Where viking_add_resource puts resources: user = the user's own "
        "viking://~/resources/ (private); account = the shared viking://resources/ of the "
        "account (every user of the account can read them)",
    )
    recall_limit: int = advanced_field(6, "Memories injected per turn", ge=1, le=50)
    recall_score_threshold: float = advanced_field(
        0.1,
        "Search results scoring below this are not injected",
        ge=0.0,
        le=1.0,
    )
    recall_max_chars: int = service_field("recall_max_chars")
    recall_resources: bool = advanced_field(
        False,
        "Also inject matching resources (documents), not only memories",
    )
    commit_every_turns: int = advanced_field(
        0,
        "Commit the OpenViking session (server-side memory extraction) every N "
        "synced turns; 0 = only when the session ends",
        ge=0,
        le=10_000,
    )
    timeout: float = service_field("timeout", 10.0, le=600)
    retries: int = service_field("retries")
    failure_threshold: int = service_field("failure_threshold")
    breaker_cooldown: float = service_field("breaker_cooldown")


__all__ = ["DEFAULT_URL", "IDENTIFIER", "OpenVikingSettings"]

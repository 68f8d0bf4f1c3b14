"""Settings of the holographic provider (``memory.providers.holographic``).

Env: ``HERMES_MEMORY__PROVIDERS__HOLOGRAPHIC__<FIELD>``. ``auto_extract`` accepts the strings
``"false"``/``"0"``/``"no"``/``"off"``/``""`` as false (config files often quote booleans).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from hermes_core.providers.base import ProviderSettings

_FALSE = {"false", "0", "no", "off", "", "none", "null"}
_TRUE = {"true", "1", "yes", "on"}


class HolographicSettings(ProviderSettings):
    """Configuration of the local SQLite fact store."""

    db_path: str = Field(
        "$HERMES_HOME/memory_store.db",
        description="SQLite file of the fact store; $HERMES_HOME and ~ are expanded.",
    )
    auto_extract: bool = Field(
        False,
        description="At session end, extract stated preferences from user messages into "
        "facts (deterministic patterns, English and Chinese).",
    )
    default_trust: float = Field(0.5, ge=0, le=1, description="Trust of a newly added fact.")
    min_trust_threshold: float = Field(
        0.3, ge=0, le=1, description="Facts below this trust are not recalled."
    )
    hrr_dim: int = Field(
        1024, ge=64, le=16384, description="Dimension of the holographic (HRR) vectors."
    )
    hrr_weight: float = Field(
        0.3, ge=0, le=1, description="Weight of HRR similarity vs keyword rank in search."
    )
    hrr_enabled: bool = Field(
        True, description="Use numpy HRR vectors when numpy is installed (else keywords only)."
    )
    temporal_decay_half_life: float = Field(
        0,
        ge=0,
        description="Half-life in days of a fact's search weight; 0 disables decay.",
    )
    prefetch_limit: int = Field(5, ge=1, le=50, description="Facts injected per turn.")

    @field_validator("auto_extract", "hrr_enabled", mode="before")
    @classmethod
    def _lenient_bool(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            if text in _FALSE:
                return False
            if text in _TRUE:
                return True
        return value

    def resolved_db_path(self, home: Path) -> Path:
        """``db_path`` with ``$HERMES_HOME``/``${HERMES_HOME}`` and ``~`` expanded; relative
        paths are taken under ``home``."""
        raw = self.db_path.replace("${HERMES_HOME}", str(home)).replace("$HERMES_HOME", str(home))
        path = Path(raw).expanduser()
        return path if path.is_absolute() else Path(home) / path


__all__ = ["HolographicSettings"]

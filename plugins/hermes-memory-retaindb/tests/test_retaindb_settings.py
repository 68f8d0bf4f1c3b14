"""Settings, availability and setup (no service needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_memory_retaindb import RetainDBProvider, RetainDBSettings
from hermes_memory_retaindb.settings import DEFAULT_URL

from hermes_core.errors import ConfigError
from hermes_core.providers.base import load_provider_settings


def load(home: Path, raw: dict[str, object] | None = None) -> RetainDBSettings:
    return load_provider_settings(RetainDBSettings, "retaindb", home, raw or {})


def test_dotenv_and_config_yaml(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("RETAINDB_API_KEY=from-dotenv\n", encoding="utf-8")
    s = load(hermes_home, {"top_k": 12, "ingest": "session"})
    assert s.key() == "from-dotenv" and s.top_k == 12 and s.ingest == "session"


@pytest.mark.parametrize(
    "raw", [{"base_url": "api.retaindb.com"}, {"top_k": 50}, {"write_mode": "later"}]
)
def test_invalid_values_are_config_errors(hermes_home: Path, raw: dict[str, object]) -> None:
    with pytest.raises(ConfigError) as err:
        load(hermes_home, raw)
    assert "memory.providers.retaindb" in str(err.value)
    assert "hermes-memory memory setup retaindb" in str(err.value)


def test_availability_needs_only_the_key(hermes_home: Path) -> None:
    missing = RetainDBProvider(load(hermes_home), hermes_home)
    assert not missing.is_available()
    assert "RETAINDB_API_KEY" in missing.unavailable_reason()
    assert missing.settings.base_url == DEFAULT_URL
    ready = RetainDBProvider(load(hermes_home, {"api_key": "k"}), hermes_home)
    assert ready.is_available() and ready.unavailable_reason() == ""
    [check] = ready.health_check(hermes_home)
    assert check.ok and "project default" in check.name

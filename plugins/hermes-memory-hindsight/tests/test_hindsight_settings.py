"""Settings, availability, setup and bank naming (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hermes_memory_hindsight import HindsightProvider, HindsightSettings
from hermes_memory_hindsight.banks import render_bank_id, sanitize
from hermes_memory_hindsight.settings import CLOUD_URL

from hermes_core.errors import ConfigError
from hermes_core.providers.base import load_provider_settings
from hermes_core.testing.fakes import make_session_info


def load(home: Path, raw: dict[str, object] | None = None) -> HindsightSettings:
    return load_provider_settings(HindsightSettings, "hindsight", home, raw or {})


def test_hermes_agent_environment_variables(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HINDSIGHT_API_URL", "http://127.0.0.1:8888/")
    monkeypatch.setenv("HINDSIGHT_BUDGET", "high")
    s = load(hermes_home)
    assert (s.recall_budget, s.effective_mode()) == ("high", "local_external")


def test_hermes_agent_config_json_is_read(hermes_home: Path) -> None:
    path = hermes_home / "hindsight" / "config.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "mode": "local_external",
                "apiUrl": "http://127.0.0.1:9999",
                "apiKey": "from-file",
                "banks": {"hermes": {"bankId": "legacy", "budget": "low"}},
                "recall_types": "observation,world",
                "recall_max_tokens": 1000,
            }
        ),
        encoding="utf-8",
    )
    p = HindsightProvider(load(hermes_home, {"bank_id": "explicit"}), hermes_home)
    s = p.settings
    assert s.api_url == "http://127.0.0.1:9999" and s.key() == "from-file"
    assert s.bank_id == "explicit", "config.yaml wins over the Hermes Agent file"
    assert (s.recall_budget, s.recall_types, s.recall_context_budget) == (
        "low",
        ["observation", "world"],
        1000,
    )


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"mode": "local_embedded"}), "local_external"),
        (json.dumps({"recall_budget": "huge"}), "recall_budget"),
    ],
)
def test_bad_config_json_names_the_file_and_the_fix(
    hermes_home: Path, content: str, needle: str
) -> None:
    path = hermes_home / "hindsight" / "config.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        HindsightProvider(load(hermes_home), hermes_home)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_invalid_values_name_the_setting(hermes_home: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load(hermes_home, {"api_url": "ftp://x"})
    # (the core names an aliased field by its env variable: ..._HINDSIGHT__API_URL)
    assert "memory.providers.hindsight." in str(err.value) and "API_URL" in str(err.value)
    assert "ftp://x" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load(hermes_home, {"recall_types": "observation,dreams"})
    assert "dreams" in str(err.value)


def test_availability_needs_no_network(hermes_home: Path) -> None:
    cloud = HindsightProvider(load(hermes_home), hermes_home)
    assert not cloud.is_available()
    assert "HINDSIGHT_API_KEY" in cloud.unavailable_reason()
    assert cloud.settings.base_url() == CLOUD_URL
    local = HindsightProvider(load(hermes_home, {"api_url": "http://127.0.0.1:8888"}), hermes_home)
    assert local.is_available() and local.unavailable_reason() == ""
    keyed = HindsightProvider(load(hermes_home, {"api_key": "k"}), hermes_home)
    assert keyed.is_available()
    checks = keyed.health_check(hermes_home)
    assert checks[0].ok and CLOUD_URL in checks[0].name


@pytest.mark.parametrize(
    ("template", "user", "expected"),
    [
        ("{bank}-{user}", "alice", "hermes-alice"),
        ("{bank}-{user}", "", "hermes"),
        ("{bank}-{user}", "用户甲", "hermes-用户甲"),
        ("{bank}-{user}", "a/b c@d", "hermes-a-b-c-d"),
        ("{bank}-{platform}-{user}", "u1", "hermes-telegram-u1"),
        ("", "alice", "hermes"),
        ("{nope}-{user}", "alice", "hermes"),
        ("{user}", "../../etc", "etc"),
    ],
)
def test_bank_names(template: str, user: str, expected: str) -> None:
    assert render_bank_id(template, "hermes", user=user, platform="telegram") == expected


def test_long_user_ids_stay_distinct() -> None:
    a, b = "x" * 200 + "a", "x" * 200 + "b"
    assert sanitize(a) != sanitize(b) and len(sanitize(a)) <= 80


def test_session_user_picks_the_bank(hermes_home: Path) -> None:
    p = HindsightProvider(load(hermes_home, {"api_key": "k"}), hermes_home)
    assert p.bank(make_session_info(hermes_home, user_id="bob")) == "hermes-bob"
    assert p.bank(make_session_info(hermes_home, user_id=None)) == "hermes-local"

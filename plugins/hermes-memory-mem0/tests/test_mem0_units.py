"""Pure units: sentence capping, the circuit breaker, settings and the mem0.json file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hermes_memory_mem0 import Mem0Provider, Mem0Settings
from hermes_memory_mem0.backend import Mem0Error, Mem0Invalid, Mem0NotFound
from hermes_memory_mem0.provider import COOLDOWN, FAILURE_THRESHOLD
from hermes_memory_mem0.text import cap_at_sentence

from hermes_core.errors import ConfigError
from hermes_core.providers.base import load_provider_settings
from hermes_core.providers.service import CircuitBreaker, ServicePaused

# ----------------------------------------------------------------- cap_at_sentence


def test_cap_keeps_short_text() -> None:
    assert cap_at_sentence("  I like tea.  ", 450) == "I like tea."


def test_cap_cuts_at_last_english_sentence_boundary() -> None:
    text = "First sentence here. Second one is longer! Third goes past the limit by far."
    out = cap_at_sentence(text, 50)
    assert out == "First sentence here. Second one is longer!"
    assert len(out) <= 50


def test_cap_cuts_at_chinese_sentence_boundary() -> None:
    text = "我喜欢喝绿茶。我每天早上六点起床！" + "这句话很长" * 20
    assert cap_at_sentence(text, 30) == "我喜欢喝绿茶。我每天早上六点起床！"


def test_cap_hard_cuts_without_boundary() -> None:
    assert cap_at_sentence("a" * 100, 40) == "a" * 40


# ----------------------------------------------------------------- breaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _boom() -> None:
    raise Mem0Error("server down")


def _breaker(clock: Clock) -> CircuitBreaker:
    return CircuitBreaker("Mem0", threshold=FAILURE_THRESHOLD, cooldown=COOLDOWN, clock=clock)


def test_breaker_opens_after_five_failures_and_resumes() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(4):
        with pytest.raises(Mem0Error):
            breaker.call(_boom)
    assert breaker.state == "closed"
    with pytest.raises(Mem0Error):
        breaker.call(_boom)
    assert breaker.state == "open"
    calls = []
    with pytest.raises(ServicePaused, match="Mem0 is paused after 5 consecutive failures"):
        breaker.call(lambda: calls.append(1))
    assert calls == []  # the function was not even tried
    clock.now += 119
    assert breaker.state == "open"
    clock.now += 2
    assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state == "closed"


def test_breaker_ignores_not_found_and_validation() -> None:
    breaker = _breaker(Clock())

    def missing() -> None:
        raise Mem0NotFound("gone")

    def invalid() -> None:
        raise Mem0Invalid("bad")

    for _ in range(10):
        with pytest.raises(Mem0NotFound):
            breaker.call(missing)
        with pytest.raises(Mem0Invalid):
            breaker.call(invalid)
    assert breaker.state == "closed"
    assert breaker.failures == 0


def test_breaker_success_resets_the_count() -> None:
    breaker = _breaker(Clock())
    for _ in range(3):
        for _ in range(4):
            with pytest.raises(Mem0Error):
                breaker.call(_boom)
        breaker.call(lambda: None)
    assert breaker.state == "closed"


def test_oss_calls_count_foreign_exceptions_as_mem0_errors(tmp_path: Path) -> None:
    provider = Mem0Provider(Mem0Settings(mode="oss"), tmp_path)

    def crash() -> None:
        raise RuntimeError("disk on fire")

    with pytest.raises(Mem0Error, match="disk on fire"):
        provider._call(crash)
    assert provider.breaker is not None and provider.breaker.failures == 1
    provider.shutdown()


# ----------------------------------------------------------------- settings


def test_every_setting_has_a_description() -> None:
    for name, info in Mem0Settings.model_fields.items():
        assert info.description, name
    assert "SecretStr" in repr(Mem0Settings.model_fields["api_key"].annotation)


def test_env_fallbacks(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_API_KEY", "m0-secret")
    monkeypatch.setenv("MEM0_HOST", "http://127.0.0.1:8888")
    monkeypatch.setenv("MEM0_MODE", "host")
    monkeypatch.setenv("MEM0_USER_ID", "alice")
    monkeypatch.setenv("MEM0_AGENT_ID", "bot")
    s = load_provider_settings(Mem0Settings, "mem0", home, {})
    assert s.mode == "host"
    assert s.host == "http://127.0.0.1:8888"
    assert s.api_key is not None and s.api_key.get_secret_value() == "m0-secret"
    assert "m0-secret" not in repr(s)
    assert (s.user_id, s.agent_id) == ("alice", "bot")


def test_hermes_prefixed_env_wins_over_mem0_env(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEM0_USER_ID", "from-mem0")
    monkeypatch.setenv("HERMES_MEMORY__PROVIDERS__MEM0__USER_ID", "from-hermes")
    assert load_provider_settings(Mem0Settings, "mem0", home, {}).user_id == "from-hermes"


def test_config_yaml_block_is_read(home: Path) -> None:
    s = load_provider_settings(Mem0Settings, "mem0", home, {"top_k": 7, "sync_max_chars": 200})
    assert (s.top_k, s.sync_max_chars) == (7, 200)


def test_invalid_setting_names_the_key(home: Path) -> None:
    with pytest.raises(ConfigError, match=r"memory\.providers\.mem0\.top_k"):
        load_provider_settings(Mem0Settings, "mem0", home, {"top_k": 500})


def test_mem0_json_fills_unset_fields(home: Path) -> None:
    (home / "mem0.json").write_text(
        json.dumps(
            {
                "mode": "host",
                "host": "http://127.0.0.1:1",
                "user_id": "file-user",
                "oss": {"llm": {"base_url": "http://127.0.0.1:2/v1", "model": "m"}},
            }
        )
    )
    p = Mem0Provider(Mem0Settings(user_id="explicit"), home)
    assert p.settings.mode == "host"
    assert p.settings.host == "http://127.0.0.1:1"
    assert p.settings.user_id == "explicit"  # explicit beats the file
    assert p.settings.llm_base_url == "http://127.0.0.1:2/v1"


def test_broken_mem0_json_names_the_file(home: Path) -> None:
    (home / "mem0.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"mem0\.json"):
        Mem0Provider(Mem0Settings(), home)
    (home / "mem0.json").write_text(json.dumps({"top_k": 999}))
    with pytest.raises(ConfigError, match="top_k"):
        Mem0Provider(Mem0Settings(), home)


def test_availability_per_mode(home: Path) -> None:
    assert Mem0Provider(Mem0Settings(mode="oss"), home).is_available()
    host = Mem0Provider(Mem0Settings(mode="host"), home)
    assert not host.is_available()
    assert "MEM0_HOST" in host.unavailable_reason()
    platform = Mem0Provider(Mem0Settings(mode="platform"), home)
    assert not platform.is_available()
    assert "MEM0_API_KEY" in platform.unavailable_reason()
    assert Mem0Provider(Mem0Settings(mode="platform", api_key="k"), home).is_available()
    openai_emb = Mem0Provider(Mem0Settings(embedder="openai"), home)
    assert "embedder_base_url" in openai_emb.unavailable_reason()


def test_shutdown_is_idempotent(home: Path) -> None:
    p = Mem0Provider(Mem0Settings(), home)
    p.shutdown()
    p.shutdown()

"""The one-provider rule and everything that can go wrong when loading a provider."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from providers_for_tests import RecordingProvider, SleepyProvider

from hermes_core import (
    MemoryHost,
    ProviderConflictError,
    ProviderLoadError,
    UnknownProviderError,
)
from hermes_core.errors import DuplicateProviderError
from hermes_core.markers import hookimpl
from hermes_core.providers.discovery import installed_names, list_installed
from hermes_core.providers.registry import ProviderRegistry, load_provider_class
from hermes_core.settings import load_settings


@pytest.fixture
def registry(hermes_home: Path, plugin_manager: Any) -> ProviderRegistry:
    return ProviderRegistry(plugin_manager, load_settings(hermes_home), hermes_home)


def test_second_different_activation_raises_with_both_names(
    registry: ProviderRegistry,
) -> None:
    registry.activate_class(RecordingProvider)
    with pytest.raises(ProviderConflictError) as info:
        registry.activate_class(SleepyProvider)
    assert info.value.requested == "sleepy" and info.value.active == "recording"
    assert "'sleepy'" in str(info.value) and "'recording'" in str(info.value)
    assert "hermes-memory memory use sleepy" in str(info.value)


def test_same_activation_returns_the_same_instance(registry: ProviderRegistry) -> None:
    first = registry.activate_class(RecordingProvider)
    assert registry.activate_class(RecordingProvider) is first


def test_deactivate_then_switch(registry: ProviderRegistry) -> None:
    first = registry.activate_class(RecordingProvider)
    registry.deactivate()
    assert isinstance(first, RecordingProvider) and first.shutdowns == 1
    assert registry.activate_class(SleepyProvider).name == "sleepy"


def test_smuggled_provider_counts_as_active(registry: ProviderRegistry, hermes_home: Path) -> None:
    registry.pm.register(RecordingProvider(RecordingProvider.Settings(), hermes_home), name="x")
    with pytest.raises(ProviderConflictError):
        registry.activate_class(SleepyProvider)


def test_unknown_provider_lists_installed(
    fake_distribution: Any, registry: ProviderRegistry
) -> None:
    fake_distribution(
        "hermes-memory-recording",
        "2.1",
        providers={"recording": "providers_for_tests:RecordingProvider"},
    )
    with pytest.raises(UnknownProviderError) as info:
        registry.activate("mem1")
    message = str(info.value)
    assert "'mem1' is not installed" in message
    assert "recording (hermes-memory-recording 2.1)" in message
    assert "recording (hermes-memory-recording 2.1)" in info.value.installed
    assert info.value.hint and info.value.hint in message  # how to install it
    assert "hermes-memory install" in info.value.hint


def test_activate_by_entry_point(fake_distribution: Any, registry: ProviderRegistry) -> None:
    fake_distribution(
        "hermes-memory-recording", providers={"recording": "providers_for_tests:RecordingProvider"}
    )
    assert "recording" in installed_names()
    provider = registry.activate("recording")
    assert isinstance(provider, RecordingProvider)
    assert registry.pm.get_plugin("memory-provider:recording") is provider


def test_entry_point_to_non_provider(fake_distribution: Any) -> None:
    fake_distribution(
        "hermes-memory-broken", providers={"broken": "providers_for_tests:NotAProvider"}
    )
    with pytest.raises(ProviderLoadError) as info:
        load_provider_class("broken")
    assert "expected a MemoryProvider subclass" in str(info.value)
    assert "hermes-memory-broken 1.0" in str(info.value)


def test_entry_point_import_error_is_chained(fake_distribution: Any) -> None:
    fake_distribution(
        "hermes-memory-crashy",
        providers={"crashy": "crashy_provider:Provider"},
        modules={"crashy_provider": "import definitely_not_installed_module_xyz\n"},
    )
    with pytest.raises(ProviderLoadError) as info:
        load_provider_class("crashy")
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    assert "could not be imported" in str(info.value)


def test_entry_point_name_must_match_provider_name(fake_distribution: Any) -> None:
    fake_distribution(
        "hermes-memory-alias", providers={"alias": "providers_for_tests:RecordingProvider"}
    )
    with pytest.raises(ProviderLoadError) as info:
        load_provider_class("alias")
    assert "'recording'" in str(info.value) and "'alias'" in str(info.value)


def test_same_name_from_two_distributions(fake_distribution: Any) -> None:
    target = "providers_for_tests:RecordingProvider"
    fake_distribution("hermes-memory-recording", providers={"recording": target})
    fake_distribution("recording-fork", "0.9", providers={"recording": target})
    assert [p.distribution for p in list_installed() if p.name == "recording"] == [
        "hermes-memory-recording",
        "recording-fork",
    ]
    with pytest.raises(DuplicateProviderError) as info:
        load_provider_class("recording")
    assert "hermes-memory-recording 1.0" in str(info.value) and "recording-fork 0.9" in str(
        info.value
    )


def test_inactive_providers_are_never_imported(fake_distribution: Any, hermes_home: Path) -> None:
    fake_distribution(
        "hermes-memory-lazy",
        providers={"lazy": "lazy_provider_module:Provider"},
        modules={"lazy_provider_module": "raise RuntimeError('imported!')\n"},
    )
    assert "lazy" in installed_names()
    with MemoryHost.open(hermes_home, load_entrypoints=True) as host:
        session = host.session()
        session.before_turn("a question worth recalling")
        session.after_turn("a question worth recalling", "answer")
    assert "lazy_provider_module" not in sys.modules


def test_host_survives_a_misconfigured_provider(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  provider: nonexistent\n")
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        assert host.provider is None
        assert host.provider_status is not None and not host.provider_status.active
        assert "not installed" in host.provider_status.reason
        session = host.session()
        session.after_turn("still works", "yes")


def test_provider_settings_from_config_and_env(
    fake_distribution: Any, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_distribution(
        "hermes-memory-recording", providers={"recording": "providers_for_tests:RecordingProvider"}
    )
    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: recording\n  providers:\n"
        "    recording:\n      top_k: 3\n      mode: cloud\n"
    )
    monkeypatch.setenv("HERMES_MEMORY__PROVIDERS__RECORDING__TOP_K", "7")
    (hermes_home / ".env").write_text(
        "HERMES_MEMORY__PROVIDERS__RECORDING__API_KEY=sk-test-abcdefgh1234\n"
    )
    with MemoryHost.open(hermes_home) as host:
        provider = host.provider
        assert isinstance(provider, RecordingProvider)
        settings = provider.settings
        assert settings.top_k == 7  # type: ignore[attr-defined]  # env beats config.yaml
        assert settings.mode == "cloud"  # type: ignore[attr-defined]
        assert settings.api_key.get_secret_value() == "sk-test-abcdefgh1234"  # type: ignore[attr-defined]
        assert "sk-test" not in repr(settings)


def test_invalid_provider_settings_name_the_key(fake_distribution: Any, hermes_home: Path) -> None:
    fake_distribution(
        "hermes-memory-recording", providers={"recording": "providers_for_tests:RecordingProvider"}
    )
    (hermes_home / "config.yaml").write_text(
        "memory:\n  provider: recording\n  providers:\n    recording:\n      top_k: lots\n"
    )
    with MemoryHost.open(hermes_home) as host:
        assert host.provider is None
        assert host.provider_status is not None
        assert "memory.providers.recording.top_k" in host.provider_status.reason
        assert "hermes-memory memory setup recording" in host.provider_status.reason


def test_one_guard_for_activate_and_activate_class(
    registry: ProviderRegistry, fake_distribution: Any, hermes_home: Path
) -> None:
    # activate(name) refuses a second provider before importing anything, with the same error
    # activate_class gives; a smuggled provider blocks both.
    fake_distribution(
        "hermes-memory-lazy",
        providers={"lazy": "guard_lazy_module:Provider"},
        modules={"guard_lazy_module": "raise RuntimeError('imported!')\n"},
    )
    registry.activate_class(RecordingProvider)
    with pytest.raises(ProviderConflictError) as by_name:
        registry.activate("lazy")
    assert (by_name.value.requested, by_name.value.active) == ("lazy", "recording")
    assert "guard_lazy_module" not in sys.modules
    assert registry.activate("recording") is registry.active

    class Impostor(RecordingProvider):  # same name, another class
        pass

    with pytest.raises(ProviderConflictError):
        registry.activate_class(Impostor)
    registry.deactivate()
    registry.pm.register(SleepyProvider(SleepyProvider.Settings(), hermes_home), name="x")
    with pytest.raises(ProviderConflictError):
        registry.activate("lazy")
    assert "guard_lazy_module" not in sys.modules


def test_activate_configured_reports_and_falls_back(
    fake_distribution: Any, hermes_home: Path, plugin_manager: Any
) -> None:
    from hermes_core.providers.registry import ProviderStatus

    def registry_for(provider: str) -> ProviderRegistry:
        (hermes_home / "config.yaml").write_text(f"memory:\n  provider: '{provider}'\n")
        return ProviderRegistry(plugin_manager, load_settings(hermes_home), hermes_home)

    assert registry_for("").activate_configured() is None
    missing = registry_for("nonexistent").activate_configured()
    assert missing is not None and not missing.active and "not installed" in missing.reason
    fake_distribution(
        "hermes-memory-moody",
        providers={"moody": "moody_provider_module:Moody"},
        modules={
            "moody_provider_module": (
                "from hermes_core import MemoryProvider\n"
                "class Moody(MemoryProvider):\n"
                "    name = 'moody'\n"
                "    def is_available(self):\n"
                "        raise OSError('网络不可用 / network down')\n"
            )
        },
    )
    registry = registry_for("moody")
    status = registry.activate_configured()
    assert status == ProviderStatus(
        "moody", False, "is_available() raised OSError: 网络不可用 / network down"
    )
    assert registry.active is None  # deactivated: the built-in layers carry on alone
    assert all(name != "memory-provider:moody" for name, _ in plugin_manager.list_name_plugin())


class _WrongArgumentProvider(RecordingProvider):
    name = "wrongarg"

    @hookimpl
    def on_memory_write(self, session: Any, write: Any, entry: Any) -> None:  # type: ignore[override]
        """``entry`` is not an argument of on_memory_write."""


class _MisspelledHookProvider(RecordingProvider):
    name = "misspelled"

    @hookimpl
    def on_memry_write(self, session: Any) -> None:
        """A misspelled hook name."""


def test_wrong_hook_arguments_name_the_argument_and_the_hook(registry: ProviderRegistry) -> None:
    with pytest.raises(ProviderLoadError) as info:
        registry.activate_class(_WrongArgumentProvider)
    message = str(info.value)
    assert "unknown argument(s) entry for hook on_memory_write" in message
    assert "it takes: session, write" in message
    assert "does not know" not in message
    assert registry.active is None  # nothing half-registered
    assert registry.activate_class(RecordingProvider).name == "recording"


def test_misspelled_hook_is_named(registry: ProviderRegistry) -> None:
    with pytest.raises(ProviderLoadError) as info:
        registry.activate_class(_MisspelledHookProvider)
    assert "unknown hook on_memry_write" in str(info.value)

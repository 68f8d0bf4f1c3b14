"""Building the plugin manager: disabled plugins, the essential memory layer, entry points of
group ``hermes`` that load, and ones that are broken."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core import MemoryHost
from hermes_core.plugins import (
    BUILTIN_PLUGINS,
    ESSENTIAL_PLUGINS,
    create_plugin_manager,
    plugin_report,
)

REVIEW = "hermes_core.layers.review.plugin"
MEMORY = "hermes_core.layers.memory.plugin"


@pytest.fixture
def general_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real distribution offering three ``hermes`` entry points: one that works, one whose
    import raises, one that names a missing attribute."""
    site = tmp_path / "site"
    info = site / "hermes_extras-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-extras\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[hermes]\n"
        "greeter = extras_greeter:plugin\n"
        "broken = extras_broken:plugin\n"
        "missing = extras_greeter:no_such_attribute\n",
        encoding="utf-8",
    )
    (site / "extras_greeter.py").write_text(
        "from hermes_core import PromptBlock, hookimpl\n"
        "class Greeter:\n"
        "    @hookimpl\n"
        "    def system_prompt_block(self):\n"
        "        return PromptBlock('问候 greeter was here', order=99, source='greeter')\n"
        "plugin = Greeter()\n",
        encoding="utf-8",
    )
    (site / "extras_broken.py").write_text("raise ImportError('依赖缺失 missing dep')\n")
    monkeypatch.syspath_prepend(str(site))
    yield site
    for module in ("extras_greeter", "extras_broken"):
        sys.modules.pop(module, None)


def test_builtins_are_registered_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS", raising=False)
    pm = create_plugin_manager(load_entrypoints=False)
    for name in BUILTIN_PLUGINS:
        assert pm.get_plugin(name) is not None, name
    assert plugin_report(pm).blocked == [] and plugin_report(pm).failed == {}


def test_disabled_plugins_are_blocked_and_reported(
    monkeypatch: pytest.MonkeyPatch, hermes_home: Path
) -> None:
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", f" {REVIEW} , greeter,,")
    pm = create_plugin_manager(load_entrypoints=False)
    assert pm.get_plugin(REVIEW) is None and pm.is_blocked(REVIEW)
    assert sorted(plugin_report(pm).blocked) == sorted([REVIEW, "greeter"])
    # the host runs without the blocked layer
    with MemoryHost.open(hermes_home, pm=pm, activate_provider=False) as host:
        session = host.session()
        session.after_turn("hello 你好", "hi")


def test_the_essential_memory_layer_cannot_be_disabled(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert MEMORY in ESSENTIAL_PLUGINS
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", MEMORY)
    caplog.set_level(logging.WARNING, logger="hermes_core.plugins")
    pm = create_plugin_manager(load_entrypoints=False)
    assert pm.get_plugin(MEMORY) is not None
    assert MEMORY not in plugin_report(pm).blocked
    assert any("essential" in record.getMessage() for record in caplog.records)


def test_broken_entry_points_are_recorded_not_raised(
    general_plugins: Path, monkeypatch: pytest.MonkeyPatch, hermes_home: Path
) -> None:
    monkeypatch.delenv("HERMES_DISABLE_PLUGINS", raising=False)
    pm = create_plugin_manager(load_entrypoints=True)
    failed = plugin_report(pm).failed
    assert set(failed) == {"broken", "missing"}
    assert "依赖缺失 missing dep" in failed["broken"] and failed["broken"].startswith("ImportError")
    assert failed["missing"].startswith("AttributeError")
    assert pm.get_plugin("greeter") is not None
    for name in BUILTIN_PLUGINS:  # a broken third party costs nothing else
        assert pm.get_plugin(name) is not None
    with MemoryHost.open(hermes_home, pm=pm, activate_provider=False) as host:
        assert "问候 greeter was here" in host.session().system_prompt()


def test_a_disabled_entry_point_is_never_imported(
    general_plugins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_DISABLE_PLUGINS", "broken,greeter")
    pm = create_plugin_manager(load_entrypoints=True)
    assert "extras_broken" not in sys.modules and "extras_greeter" in sys.modules  # by "missing"
    assert set(plugin_report(pm).failed) == {"missing"}
    assert pm.get_plugin("greeter") is None

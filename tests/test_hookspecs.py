"""Every hook is documented with its exact signature and has a ``test_hook_<name>``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_core.docgen import hook_names, hook_signature, render_configuration, render_hooks

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def all_test_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py"))


def test_there_are_hooks() -> None:
    assert {"prefetch", "sync", "compress", "on_session_end", "health_check"} <= set(hook_names())


@pytest.mark.parametrize("name", hook_names())
def test_hook_documented_with_exact_signature(name: str) -> None:
    text = (DOCS / "hooks.md").read_text(encoding="utf-8")
    assert f"## `{name}`" in text
    assert hook_signature(name) in text


@pytest.mark.parametrize("name", hook_names())
def test_hook_has_a_test(name: str) -> None:
    assert re.search(rf"def test_hook_{name}\b", all_test_sources()), f"add test_hook_{name}"


def test_generated_docs_are_current() -> None:
    """Regenerate with `python -m hermes_core.docgen` when this fails."""
    assert (DOCS / "hooks.md").read_text(encoding="utf-8") == render_hooks()
    assert (DOCS / "configuration.md").read_text(encoding="utf-8") == render_configuration()


def test_every_env_var_in_configuration_doc_is_read_by_settings(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented env names really set the documented keys."""
    from hermes_core.settings import load_settings

    monkeypatch.setenv("HERMES_MEMORY__USER_CHAR_LIMIT", "777")
    monkeypatch.setenv("HERMES_COMPRESSION__THRESHOLD", "0.6")
    monkeypatch.setenv("HERMES_LLM__AUXILIARY__REVIEW__MODEL", "small-model")
    settings = load_settings(hermes_home)
    assert settings.memory.user_char_limit == 777
    assert settings.compression.threshold == 0.6
    assert settings.llm.auxiliary.review.model == "small-model"
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for var in ("HERMES_MEMORY__USER_CHAR_LIMIT", "HERMES_LLM__AUXILIARY__REVIEW__MODEL"):
        assert f"`{var}`" in text

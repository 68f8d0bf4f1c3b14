"""``hermes-memory install`` resolution and the install hints: our providers come from this
checkout,
everything else goes to pip unchanged; no hint names a package that does not exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.errors import UnknownProviderError
from hermes_core.providers import sources

ROOT = Path(__file__).resolve().parent.parent


def test_the_checkout_is_found_and_its_providers_resolve_to_their_directories() -> None:
    import hermes_core

    # Editable: the package is this checkout's own folder (a wheel in .tox/ or .venv/ under
    # the checkout is still a wheel).
    editable = Path(hermes_core.__file__).resolve().parent == ROOT / "hermes_core"
    assert sources.checkout_root() == (ROOT if editable else None)  # a wheel install: None
    got = sources.resolve(
        ["chroma", "hermes-memory-mem0[test]", "example", "requests>=2"], root=ROOT
    )
    assert [(r.origin, r.target) for r in got] == [
        ("checkout", str(ROOT / "plugins" / "hermes-memory-chroma")),
        ("checkout", str(ROOT / "plugins" / "hermes-memory-mem0") + "[test]"),
        ("checkout", str(ROOT / "contrib" / "provider-template")),
        ("registry", "requests>=2"),
    ]
    assert sources.resolve(["./plugins/x"])[0].origin == "path"


def test_outside_a_checkout_names_go_to_the_registry(tmp_path: Path) -> None:
    assert sources.provider_dir("chroma", tmp_path) is None
    assert [r.origin for r in sources.resolve(["hermes-memory-chroma"], root=tmp_path)] == [
        "registry"
    ]


def test_every_provider_names_the_core_by_its_registry_name_and_a_range() -> None:
    core = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'name = "hermes-memory-core"' in core
    projects = [
        *ROOT.glob("plugins/*/pyproject.toml"),
        ROOT / "contrib/provider-template/pyproject.toml",
    ]
    assert len(projects) >= 2
    for project in projects:
        text = project.read_text(encoding="utf-8")
        assert '"hermes-memory-core>=0.1,<0.2"' in text, project
        assert "hermes-core @" not in text and "allow-direct-references" not in text, project
    check = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "core-requirement.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize("name", ["ghost", "幽灵"])
def test_hints_never_name_a_package_that_does_not_exist(name: str) -> None:
    message = str(UnknownProviderError(name, ["chroma"], hint=sources.install_hint(name)))
    assert f"hermes-memory-{name}" not in message and "hermes-memory install <package>" in message
    for ours in sources.OUR_PROVIDERS:
        hint = sources.install_hint(ours)
        assert f"hermes-memory install hermes-memory-{ours}" in hint
        if sources.provider_dir(ours) is None:
            assert "checkout of the hermes-core repository" in hint


def test_no_hint_in_code_or_docs_names_a_provider_we_do_not_ship() -> None:
    pattern = re.compile(r"hermes-memory install (hermes-memory-[a-z0-9{}<>_-]+)")
    shipped = {f"hermes-memory-{p}" for p in sources.OUR_PROVIDERS} | {"hermes-memory-example"}
    files = [
        *ROOT.glob("hermes_core/**/*.py"),
        *ROOT.glob("docs/*.md"),
        ROOT / "README.md",
        *ROOT.glob("plugins/*/README.md"),
        *ROOT.glob("contrib/**/*.md"),
    ]
    bad = []
    for path in files:
        for found in pattern.findall(path.read_text(encoding="utf-8")):
            if found not in shipped and found.rstrip("`.,)") not in shipped:
                bad.append(f"{path.relative_to(ROOT)}: {found}")
    assert bad == []

#!/usr/bin/env python3
"""Make a provider's pyproject.toml name the core by its registry name and a version range.

Usage: python .ci/core-requirement.py [--check] [FILE ...]   (default: every plugins/*/ and
contrib/provider-template/ pyproject.toml of this checkout)

Replaces the old direct reference ``"hermes-core @ {root:parent:parent:uri}"`` (and a bare
``hermes-core`` requirement) with :data:`REQUIREMENT`, drops the comment block that explained
the direct reference, ``[tool.hatch.metadata] allow-direct-references`` and the ruff RUF200
ignore that only existed for the placeholder. ``--check`` exits 1 naming each file that still
needs it (CI runs this, so a provider merged later cannot bring the old reference back).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REQUIREMENT = "hermes-memory-core>=0.1,<0.2"
_DIRECT = re.compile(r'"hermes-core\s*(@[^"]*|[<>=!~][^"]*)?"')
_COMMENT = re.compile(
    r"(?m)^# hermes-core (is a direct reference|comes from its repository).*\n(^#.*\n)*"
)
_METADATA = re.compile(r"(?m)^\[tool\.hatch\.metadata\]\nallow-direct-references = true\n\n?")
_RUF200 = re.compile(
    r"(?m)^\[tool\.ruff\.lint\.per-file-ignores\]\n(^#.*\n)*"
    r"^\"pyproject\.toml\" = \[\"RUF200\"\]\n\n?"
)


def fixed(text: str) -> str:
    text = _DIRECT.sub(f'"{REQUIREMENT}"', text)
    text = _COMMENT.sub("", text)
    text = _METADATA.sub("", text)
    return _RUF200.sub("", text)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    names = [a for a in argv if a != "--check"]
    if not names:
        root = Path(__file__).resolve().parent.parent
        names = [
            str(p)
            for p in [
                *sorted(root.glob("plugins/*/pyproject.toml")),
                root / "contrib/provider-template/pyproject.toml",
            ]
            if p.is_file()
        ]
    for name in names:
        path = Path(name)
        text = path.read_text(encoding="utf-8")
        new = fixed(text)
        if new != text:
            stale.append(name)
            if not check:
                path.write_text(new, encoding="utf-8")
    if check and stale:
        print(
            "these providers do not name the core as "
            + REQUIREMENT
            + ": "
            + ", ".join(stale)
            + " — run `python .ci/core-requirement.py "
            + " ".join(stale)
            + "`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Our command is ``hermes-memory`` (issue 27): ``hermes`` is Hermes Agent's.

Usage: python .ci/command-name.py [--check | --write]

Finds, in every tracked text file, an invocation of OUR CLI written with the old name,
``hermes <subcommand>`` (a built-in subcommand or a provider's, e.g. ``hermes chroma``), and
with ``--write`` renames it to ``hermes-memory <subcommand>``; ``--check`` (run by the lint
env) exits 1 listing each one, so a page or hint merged later cannot bring the old name back.
A line about Hermes Agent's own command (``Hermes Agent's own `hermes …```, "prints
`Hermes Agent v…`") is left alone, as is the ``hermes-memory-cli`` distribution that
installs the short name ``hermes`` on purpose.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SUBCOMMANDS = [
    "bench",
    "chat",
    "doctor",
    "install",
    "mcp",
    "memory",
    "plugins",
    "sessions",
    "skills",
    "uninstall",
    "ui",
    "chroma",
    "notes",
    "--version",
    "-V",
    "--help",
    "-h",
]
_NAMES = "|".join(map(re.escape, SUBCOMMANDS))
OLD = re.compile(r"(?<![\w/.\-`'\"])hermes (?=(?:" + _NAMES + r")(?![\w-]))")
OLD_QUOTED = re.compile(r"(?<=[`'\"])hermes (?=(?:" + _NAMES + r")(?![\w-]))")
KEEP = re.compile(r"Hermes Agent's (own )?`+hermes |`+hermes --version`+ still prints|hermes_cli")
SUFFIXES = (".py", ".md", ".sh", ".ini", ".toml", ".txt", ".yaml", ".yml", ".cfg")
SKIP = ("contrib/hermes-memory-cli/", ".ci/command-name.py")


def tracked(root: Path) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return [
        root / name
        for name in out.split()
        if (name.endswith(SUFFIXES) or name == ".ci/run") and not name.startswith(SKIP)
    ]


def renamed(line: str) -> str:
    if KEEP.search(line):
        return line
    return OLD_QUOTED.sub("hermes-memory ", OLD.sub("hermes-memory ", line))


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    write = "--write" in argv
    found = 0
    for path in tracked(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.split("\n")
        for i, line in enumerate(lines):
            new = renamed(line)
            if new != line:
                found += 1
                lines[i] = new
                if not write:
                    print(f"{path.relative_to(root)}:{i + 1}: {line.strip()[:120]}")
        if write and "\n".join(lines) != text:
            path.write_text("\n".join(lines), encoding="utf-8")
    if found and not write:
        print(
            f"{found} line(s) call our CLI `hermes`; it is `hermes-memory` "
            "(fix: python .ci/command-name.py --write)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Turn this copy of the template into provider NAME: ``python rename.py NAME``.

Run it once, in the root of your copy (the directory holding ``pyproject.toml``). For
``python rename.py notes`` it renames the package folder ``hermes_memory_example`` to
``hermes_memory_notes`` and rewrites every text file of the copy: the distribution
(``hermes-memory-notes``), the import package (``hermes_memory_notes``, also in
``pyproject.toml``'s ``packages.find`` and ``package-data``), the classes (``NotesProvider``,
``NotesSettings``), the provider name and entry point (``notes``), its config key
(``memory.providers.notes``), its tool (``notes_search``) and its data file
(``notes-memories.json``). The recall label and the tool name come from ``Provider.name`` in
the code, so nothing else needs renaming. Standard library only; this file itself is left as
it is. NAME: lower-case letters, digits, ``-`` or ``_``, starting with a letter.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

OLD = "example"
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
SKIP_DIRS = {".git", ".venv", "venv", ".tox", "__pycache__", ".ruff_cache", ".mypy_cache", "build"}
TEXT_SUFFIXES = {".py", ".toml", ".md", ".txt", ".cfg", ".ini", ".yaml", ".yml", ".json"}


def replacements(name: str) -> list[tuple[re.Pattern[str], str]]:
    """What each occurrence of the template's name becomes, most specific first."""
    snake = name.replace("-", "_")
    camel = "".join(part.capitalize() for part in re.split(r"[-_]", name))
    return [
        (re.compile(r"hermes_memory_example"), f"hermes_memory_{snake}"),
        (re.compile(r"hermes-memory-example"), f"hermes-memory-{name}"),
        (re.compile(r"\bExample(?=[A-Z])"), camel),  # ExampleProvider, ExampleSettings, ...
        (re.compile(r'name = "example"'), f'name = "{name}"'),
        (re.compile(r"^example = ", re.MULTILINE), f"{name} = "),  # the entry point
        (re.compile(r"memory\.providers\.example\b"), f"memory.providers.{name}"),
        (re.compile(r"\bexample_search\b"), f"{snake}_search"),
        (re.compile(r"\bexample-memories\.json\b"), f"{name}-memories.json"),
        (re.compile(r"memory (use|setup) example\b"), rf"memory \1 {name}"),
    ]


def rename(root: Path, name: str) -> list[Path]:
    """Rename the template under ``root`` to ``name``; returns the files rewritten. Raises
    ValueError for a bad name or a copy that was already renamed."""
    if not NAME.fullmatch(name) or name == OLD:
        raise ValueError(
            f"{name!r} is not a provider name: use lower-case letters, digits, '-' or '_', "
            "starting with a letter (e.g. notes)"
        )
    package = root / f"hermes_memory_{OLD}"
    if not package.is_dir() or not (root / "pyproject.toml").is_file():
        raise ValueError(
            f"no {package.name}/ and pyproject.toml in {root}: run this once, in the root of "
            "a fresh copy of contrib/provider-template"
        )
    rules = replacements(name)
    changed: list[Path] = []
    this = Path(__file__).resolve()
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if SKIP_DIRS & set(parts) or any(part.endswith(".egg-info") for part in parts):
            continue  # build output and caches: rebuilt on the next install
        if path.resolve() == this:
            continue
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        text = path.read_text(encoding="utf-8")
        new = text
        for pattern, replacement in rules:
            new = pattern.sub(replacement, new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    package.rename(root / f"hermes_memory_{name.replace('-', '_')}")
    return changed


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python rename.py NAME   (e.g. python rename.py notes)", file=sys.stderr)
        return 2
    try:
        changed = rename(Path.cwd(), argv[0])
    except ValueError as exc:
        print(f"rename.py: {exc}", file=sys.stderr)
        return 1
    snake = argv[0].replace("-", "_")
    print(f"renamed the template to {argv[0]!r}: package hermes_memory_{snake}/, ", end="")
    print(f"{len(changed)} file(s) rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

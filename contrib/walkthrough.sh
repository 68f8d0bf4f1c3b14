#!/usr/bin/env bash
# Follows docs/writing-a-provider.md end to end, as a reader would, in a fresh venv:
# copy the template, rename it to "notes" with `python3 rename.py notes` (the page's only
# renaming step: no other edit), install it beside an editable core, run its tests,
# then list, configure and check it with the hermes CLI. Run by `tox -e walkthrough`.
# Exits non-zero at the first step that does not work as the doc says.
set -euo pipefail
CORE="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export HERMES_HOME="$WORK/hermes-home"
step() { printf '\n== %s\n' "$*"; }

step "1. Copy the template"
cp -r "$CORE/contrib/provider-template" "$WORK/hermes-memory-notes"
cd "$WORK/hermes-memory-notes"

step "python3 rename.py notes (the page's one renaming step; nothing else is edited)"
python3 rename.py notes
# check the page's claims about the result (reads only)
grep -q '^name = "hermes-memory-notes"' pyproject.toml
grep -q 'dependencies = \["hermes-memory-core>=0.1,<0.2"\]' pyproject.toml
grep -q '^notes = "hermes_memory_notes.provider:NotesProvider"' pyproject.toml
grep -q '^include = \["hermes_memory_notes\*"\]' pyproject.toml
test -d hermes_memory_notes && test ! -e hermes_memory_example
if grep -rIl --exclude=rename.py --exclude-dir='*.egg-info' --exclude-dir=build \
    --exclude-dir=.ruff_cache -e hermes_memory_example -e hermes-memory-example -e ExampleProvider .; then
    echo "rename.py left the template's names in the files above" >&2; exit 1
fi

step "A venv of its own; the tests pass as renamed"
python3 -m venv .venv && . .venv/bin/activate
python -m pip install -q --disable-pip-version-check -e "$CORE" -e ".[test]"
python -m pytest -q -p no:cacheprovider

step "3. Install it next to hermes-core and switch to it"
hermes-memory install -e .
python - "$CORE" <<'PY'
import sys, hermes_core, pathlib
core = pathlib.Path(sys.argv[1]).resolve()
assert pathlib.Path(hermes_core.__file__).resolve().is_relative_to(core), hermes_core.__file__
print("the core is still the editable checkout:", hermes_core.__file__)
PY
hermes-memory memory list | tee list.txt
grep -q "notes" list.txt && grep -q "hermes-memory-notes" list.txt
hermes-memory plugins > plugins.json && python -c "import json; json.load(open('plugins.json'))"
hermes-memory memory use notes --set top_k=5 | tee use.txt
grep -q "Status: available" use.txt
hermes-memory memory status | tee status.txt
grep -q "Provider: notes" status.txt && grep -q "Status: available" status.txt
if grep -q "hermes-memory-example" list.txt; then echo "the template's old name is still installed" >&2; exit 1; fi

step "4. Test it"
python -m pip install -q --disable-pip-version-check -e ".[test]" && python -m pytest -q -p no:cacheprovider
echo "walkthrough: every step of docs/writing-a-provider.md worked"

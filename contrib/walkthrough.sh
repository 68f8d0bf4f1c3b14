#!/usr/bin/env bash
# Follows docs/writing-a-provider.md end to end, as a reader would, in a fresh venv:
# copy the template, rename it to "notes", install it beside an editable core, run its tests,
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

step "Rename hermes_memory_example to hermes_memory_notes, ExampleProvider to NotesProvider"
mv hermes_memory_example hermes_memory_notes
grep -rl --include='*.py' --include='*.toml' -e example -e Example . \
    | xargs sed -i -e 's/hermes_memory_example/hermes_memory_notes/g' \
        -e 's/hermes-memory-example/hermes-memory-notes/g' \
        -e 's/ExampleProvider/NotesProvider/g' -e 's/ExampleSettings/NotesSettings/g' \
        -e 's/^example = /notes = /' -e 's/name = "example"/name = "notes"/' \
        -e 's/memory.providers.example/memory.providers.notes/g' -e 's/"example_search"/"notes_search"/g'
grep -q 'dependencies = \["hermes-memory-core>=0.1,<0.2"\]' pyproject.toml
grep -q '^notes = "hermes_memory_notes.provider:NotesProvider"' pyproject.toml

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

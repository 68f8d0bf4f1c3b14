"""Hypothesis: arbitrary frontmatter and tool arguments never raise out of the tools.

Every handler must return JSON with ``success``; a failure carries a string ``error`` and is
never the catch-all "failed unexpectedly" (that would mean an exception escaped validation).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skillkit import write_skill

from hermes_core.layers.skills.model import SkillValidationError, parse_skill_md
from hermes_core.layers.skills.tools import SkillsService, build_tool_specs
from hermes_core.types import ToolContext

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

KNOWN_KEYS = [
    "name",
    "description",
    "version",
    "license",
    "platforms",
    "required_environment_variables",
    "metadata",
    "compatibility",
]
HERMES_KEYS = [
    "tags",
    "category",
    "requires_tools",
    "requires_toolsets",
    "fallback_for_tools",
    "fallback_for_toolsets",
    "pinned",
    "config",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["linux", "macos", "solaris", "deploy-app", "API_KEY", "中文", "a" * 70]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.sampled_from(KNOWN_KEYS + HERMES_KEYS + ["hermes"]), st.text(max_size=8)),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=12,
)
frontmatters = st.dictionaries(st.sampled_from([*KNOWN_KEYS, "x", "hermes"]), values, max_size=8)


@FUZZ
@given(front=frontmatters, body=st.text(max_size=80))
def test_parse_structured_frontmatter_raises_only_validation_errors(
    front: dict[str, Any], body: str
) -> None:
    text = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n" + body
    try:
        doc = parse_skill_md(text)
    except SkillValidationError as exc:
        assert exc.field and exc.reason
    else:
        assert doc.meta.name == front["name"] and doc.body.strip()


@FUZZ
@given(
    text=st.one_of(
        st.text(max_size=300), st.text(max_size=200).map(lambda t: "---\n" + t + "\n---\nbody")
    )
)
def test_parse_raw_text_raises_only_validation_errors(text: str) -> None:
    try:
        parse_skill_md(text)
    except SkillValidationError:
        pass


ARG_KEYS = [
    "action",
    "name",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "category",
    "file_path",
    "file_content",
    "absorbed_into",
    "task",
    "limit",
    "outcome",
    "note",
]
arg_values = st.one_of(
    values,
    st.sampled_from(
        [
            "create",
            "edit",
            "patch",
            "delete",
            "write_file",
            "remove_file",
            "fuzz-skill",
            "target",
            "references/a.md",
            "../../etc/passwd",
            "/etc/passwd",
            "scripts/../../x",
            "success",
            "failure",
            "---\nname: fuzz-skill\ndescription: d\n---\nbody\n",
            "---\nname: target\ndescription: d\n---\nnew body\n",
        ]
    ),
)
tool_args = st.dictionaries(st.sampled_from(ARG_KEYS), arg_values, max_size=7)


def check(out: str) -> None:
    data = json.loads(out)
    assert isinstance(data, dict) and isinstance(data["success"], bool)
    if not data["success"]:
        assert isinstance(data["error"], str) and data["error"]
        assert "failed unexpectedly" not in data["error"], data["error"]


@FUZZ
@given(args=tool_args)
def test_tools_never_raise(
    service: SkillsService, ctx: ToolContext, home: Path, args: dict[str, Any]
) -> None:
    if not (home / "skills" / "target").exists():
        d = write_skill(home / "skills", "target")
        (d / "references").mkdir()
        (d / "references" / "a.md").write_text("alpha beta")
    for spec in build_tool_specs(service):
        check(spec.handler(args, ctx))


@FUZZ
@given(
    old=st.one_of(
        st.sampled_from(["name: target", "---", "description", "Procedure", "1."]),
        st.text(max_size=20),
    ),
    new=st.text(max_size=30),
    replace_all=st.booleans(),
)
def test_patch_never_leaves_an_invalid_skill(
    service: SkillsService, ctx: ToolContext, home: Path, old: str, new: str, replace_all: bool
) -> None:
    skill = home / "skills" / "target" / "SKILL.md"
    if not skill.exists():
        write_skill(home / "skills", "target")
    before = skill.read_text()
    out = json.loads(
        service.skill_manage(
            {
                "action": "patch",
                "name": "target",
                "old_string": old,
                "new_string": new,
                "replace_all": replace_all,
            },
            ctx,
        )
    )
    after = skill.read_text()
    assert parse_skill_md(after).meta.name == "target"
    if not out["success"]:
        assert after == before

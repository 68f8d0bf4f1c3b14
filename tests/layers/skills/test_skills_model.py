"""Every SKILL.md validation rule, with the field it names and the reason it gives."""

from __future__ import annotations

import pytest
from skillkit import skill_md

from hermes_core.layers.skills.model import (
    SkillValidationError,
    parse_description_md,
    parse_skill_md,
    validate_name,
)

BODY = "## Procedure\n1. Step.\n"


def fm(front: str, body: str = BODY) -> str:
    return f"---\n{front}\n---\n{body}"


def error_of(text: object) -> SkillValidationError:
    with pytest.raises(SkillValidationError) as info:
        parse_skill_md(text)
    return info.value


def test_full_frontmatter_parses() -> None:
    doc = parse_skill_md(
        skill_md(
            "deploy-app",
            "Deploy the app.",
            version="1.2.0",
            license="MIT",
            platforms=["linux", "MacOS"],
            required_environment_variables=[
                {"name": "DEPLOY_TOKEN", "prompt": "Token", "help": "From the console"},
                "REGION",
            ],
            metadata={
                "hermes": {
                    "tags": ["deploy", "发布"],
                    "category": "devops",
                    "requires_tools": ["terminal"],
                    "requires_toolsets": ["shell"],
                    "fallback_for_tools": ["deployer"],
                    "fallback_for_toolsets": ["cloud"],
                    "config": [{"key": "region", "default": "eu"}],
                },
                "other": {"x": 1},
            },
            compatibility="any",
            **{"allowed-tools": ["terminal"]},
        )
    )
    meta = doc.meta
    assert meta.name == "deploy-app"
    assert meta.version == "1.2.0" and meta.license == "MIT"
    assert meta.platforms == ("linux", "macos")
    assert [e.name for e in meta.required_environment_variables] == ["DEPLOY_TOKEN", "REGION"]
    assert meta.required_environment_variables[0].help == "From the console"
    assert meta.tags == ("deploy", "发布") and meta.category == "devops"
    assert meta.requires_tools == ("terminal",) and meta.requires_toolsets == ("shell",)
    assert meta.fallback_for_tools == ("deployer",)
    assert meta.fallback_for_toolsets == ("cloud",)
    assert meta.raw["allowed-tools"] == ["terminal"]
    assert doc.body.startswith("## Procedure")


def test_numeric_version_and_bom_and_crlf_are_accepted() -> None:
    text = "\ufeff---\r\nname: a\r\ndescription: d\r\nversion: 1.0\r\n---\r\nbody\r\n"
    doc = parse_skill_md(text)
    assert doc.meta.version == "1.0"
    assert doc.body.strip() == "body"


def test_chinese_description_and_body() -> None:
    doc = parse_skill_md(skill_md("zh-notes", "整理会议纪要。", "## 步骤\n1. 列出结论。\n"))
    assert doc.meta.description == "整理会议纪要。"


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        (123, "content", "must be a string, got int"),
        ("x" * 100_001, "content", "the limit is 100,000"),
        ("---\nname: a\x00\n---\nb", "content", "NUL"),
        ("", "frontmatter", "must start with a '---' line"),
        ("name: a\ndescription: b\n", "frontmatter", "must start with a '---' line"),
        ("---\nname: a\ndescription: b\n", "frontmatter", "not closed by a '---' line"),
        (fm("name: [unclosed"), "frontmatter", "invalid YAML"),
        (fm("name: a: b: c"), "frontmatter", "invalid YAML"),
        (fm(""), "frontmatter", "is empty; add at least 'name' and 'description'"),
        (fm("- a\n- b"), "frontmatter", "must be a YAML mapping of fields, got list"),
        (fm("just text"), "frontmatter", "must be a YAML mapping of fields, got str"),
        (fm("1: x\nname: a"), "frontmatter", "field names must be strings"),
        (fm("x: " + "a" * 20_001), "frontmatter", "keep it under 20000"),
        (fm("!!python/object:os.system {}"), "frontmatter", "invalid YAML"),
        (fm("description: d"), "name", "required field is missing"),
        (fm("name:\ndescription: d"), "name", "required field is missing"),
        (fm("name: 5\ndescription: d"), "name", "must be a string, got int"),
        (fm("name: ''\ndescription: d"), "name", "must not be empty"),
        (fm(f"name: {'a' * 65}\ndescription: d"), "name", "is 65 characters; the limit is 64"),
        (fm("name: My Skill\ndescription: d"), "name", "'My Skill' is not allowed"),
        (fm("name: -lead\ndescription: d"), "name", "^[a-z0-9][a-z0-9._-]*$"),
        (fm("name: a/b\ndescription: d"), "name", "is not allowed"),
        (fm("name: a"), "description", "required field is missing"),
        (fm("name: a\ndescription: [x]"), "description", "must be a string, got list"),
        (fm("name: a\ndescription: '   '"), "description", "must not be empty"),
        (
            fm(f"name: a\ndescription: {'d' * 1025}"),
            "description",
            "is 1025 characters; the limit is 1024",
        ),
        (fm("name: a\ndescription: d\nversion: [1]"), "version", "must be a string, got list"),
        (fm("name: a\ndescription: d\nlicense: 3"), "license", "must be a string, got int"),
        (
            fm("name: a\ndescription: d\nplatforms: linux"),
            "platforms",
            "must be a list of strings, got str",
        ),
        (
            fm("name: a\ndescription: d\nplatforms: [solaris]"),
            "platforms[0]",
            "'solaris' is not a known platform",
        ),
        (
            fm("name: a\ndescription: d\nplatforms: [linux, 3]"),
            "platforms[1]",
            "must be a non-empty string, got int",
        ),
        (
            fm("name: a\ndescription: d\nrequired_environment_variables: X"),
            "required_environment_variables",
            "must be a list, got str",
        ),
        (
            fm("name: a\ndescription: d\nrequired_environment_variables: [3]"),
            "required_environment_variables[0]",
            "must be a mapping with 'name'",
        ),
        (
            fm("name: a\ndescription: d\nrequired_environment_variables: [{name: 1BAD}]"),
            "required_environment_variables[0].name",
            "must be an environment variable name",
        ),
        (
            fm("name: a\ndescription: d\nrequired_environment_variables: [{name: OK, help: [1]}]"),
            "required_environment_variables[0].help",
            "must be a string, got list",
        ),
        (fm("name: a\ndescription: d\nmetadata: 3"), "metadata", "must be a mapping, got int"),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: [1]}"),
            "metadata.hermes",
            "must be a mapping, got list",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {tags: x}}"),
            "metadata.hermes.tags",
            "must be a list of strings, got str",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {tags: ['']}}"),
            "metadata.hermes.tags[0]",
            "must be a non-empty string",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {requires_tools: [1]}}"),
            "metadata.hermes.requires_tools[0]",
            "must be a non-empty string, got int",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {requires_toolsets: t}}"),
            "metadata.hermes.requires_toolsets",
            "must be a list of strings",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {fallback_for_tools: {a: 1}}}"),
            "metadata.hermes.fallback_for_tools",
            "must be a list of strings, got dict",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {fallback_for_toolsets: 1}}"),
            "metadata.hermes.fallback_for_toolsets",
            "must be a list of strings, got int",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {category: Dev Ops}}"),
            "metadata.hermes.category",
            "'Dev Ops' is not allowed",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {category: [a]}}"),
            "metadata.hermes.category",
            "must be a string, got list",
        ),
        (
            fm("name: a\ndescription: d\nmetadata: {hermes: {pinned: maybe}}"),
            "metadata.hermes.pinned",
            "must be true or false",
        ),
        (
            fm("name: a\ndescription: d", body=""),
            "body",
            "has no instructions after the frontmatter",
        ),
        (fm("name: a\ndescription: d", body="  \n\t\n"), "body", "add the procedure"),
    ],
)
def test_validation_error_names_field_and_reason(text: object, field: str, reason: str) -> None:
    error = error_of(text)
    assert error.field == field
    assert reason in error.reason
    assert str(error).startswith(f"{field}: ")


def test_description_is_stripped_and_limit_is_inclusive() -> None:
    assert parse_skill_md(fm(f"name: a\ndescription: {'d' * 1024}")).meta.description == "d" * 1024


def test_nested_category_in_metadata_is_allowed() -> None:
    doc = parse_skill_md(fm("name: a\ndescription: d\nmetadata: {hermes: {category: dev/ops}}"))
    assert doc.meta.category == "dev/ops"


@pytest.mark.parametrize("name", ["a", "0day", "x.y_z-1", "a" * 64])
def test_valid_names(name: str) -> None:
    assert validate_name(name) == name


def test_description_md_frontmatter_and_fallback() -> None:
    assert parse_description_md("---\ndescription: Ops work\n---\n") == "Ops work"
    assert parse_description_md("# 中文技能\n\nmore") == "中文技能"
    assert parse_description_md("---\n[broken\n---\n") == ""

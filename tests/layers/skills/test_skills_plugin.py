"""The skills layer inside a real MemoryHost: frozen index block, routed tools, health."""

from __future__ import annotations

import json
from pathlib import Path

from skillkit import skill_md, write_skill

from hermes_core.host import MemoryHost
from hermes_core.layers.skills.plugin import SkillsLayer, create_plugin
from hermes_core.settings.base import load_settings
from hermes_core.types import PromptOrder, SessionInfo, ToolContext


def test_index_in_system_prompt_frozen_per_session(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "deploy", "devops", description="Deploy the app.")
    host = MemoryHost.open(hermes_home, load_entrypoints=False, activate_provider=False)
    try:
        session = host.session()
        prompt = session.system_prompt()
        assert "<available_skills>" in prompt and "    - deploy: Deploy the app." in prompt
        names = {s["function"]["name"] for s in session.tool_schemas()}
        assert {
            "skills_list",
            "skill_view",
            "skill_manage",
            "skills_find",
            "skill_feedback",
        } <= names
        out = json.loads(
            session.call_tool(
                "skill_manage",
                {"action": "create", "name": "later", "content": skill_md("later", "Added later.")},
            )
        )
        assert out["success"], out
        assert session.system_prompt() == prompt  # frozen for this session
        view = json.loads(session.call_tool("skill_view", {"name": "later"}))
        assert view["success"]
        fresh = host.session()
        assert "    - later: Added later." in fresh.system_prompt()
    finally:
        host.close()


def test_block_uses_routed_tool_names_and_settings(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    write_skill(root, "needs-browser", metadata={"hermes": {"requires_tools": ["browser"]}})
    write_skill(root, "plain")
    settings = load_settings(hermes_home)
    layer = create_plugin()
    layer.configure(settings, hermes_home)
    s1 = SessionInfo(id="a", home=hermes_home, settings=settings)
    block = layer.system_prompt_block(s1, frozenset({"skills_list"}))
    assert block is not None and block.order == PromptOrder.SKILLS
    assert "needs-browser" not in block.text and "plain" in block.text
    s2 = SessionInfo(id="b", home=hermes_home, settings=settings)
    with_browser = layer.system_prompt_block(s2, frozenset({"browser"}))
    assert with_browser is not None and "needs-browser" in with_browser.text
    configured = load_settings(hermes_home, skills={"available_tools": ["browser"]})
    s3 = SessionInfo(id="c", home=hermes_home, settings=configured)
    block3 = layer.system_prompt_block(s3, frozenset())
    assert block3 is not None and "needs-browser" in block3.text
    layer.on_session_end(s1)
    assert "a" not in layer._blocks


def test_disabled_layer_contributes_nothing(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "plain")
    settings = load_settings(hermes_home, skills={"enabled": False})
    layer = SkillsLayer()
    info = SessionInfo(id="x", home=hermes_home, settings=settings)
    assert layer.system_prompt_block(info, frozenset()) is None
    assert layer.register_tools(info) is None


def test_empty_library_gives_no_block(hermes_home: Path) -> None:
    layer = SkillsLayer()
    info = SessionInfo(id="x", home=hermes_home, settings=load_settings(hermes_home))
    assert layer.system_prompt_block(info, frozenset()) is None
    assert len(layer.register_tools(info) or []) == 5


def test_health_check_reports_broken_skills_and_missing_roots(
    hermes_home: Path, tmp_path: Path
) -> None:
    root = hermes_home / "skills"
    write_skill(root, "good")
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text("---\nname: bad\n---\nbody")
    layer = SkillsLayer()
    layer.configure(
        load_settings(hermes_home, skills={"external_dirs": [str(tmp_path / "missing")]}),
        hermes_home,
    )
    checks = {c.name: c for c in layer.health_check(hermes_home)}
    assert not checks["skills.roots"].ok and "missing" in checks["skills.roots"].detail
    assert not checks["skills.library"].ok
    assert "description: required field is missing" in checks["skills.library"].detail
    assert "hermes-memory skills validate" in checks["skills.library"].fix
    assert checks["skills.pending"].ok


def test_reading_tools_follow_the_routed_tool_names(hermes_home: Path) -> None:
    write_skill(
        hermes_home / "skills",
        "needs-browser",
        metadata={"hermes": {"requires_tools": ["browser"]}},
    )
    settings = load_settings(hermes_home)
    layer = SkillsLayer()
    info = SessionInfo(id="s", home=hermes_home, settings=settings)
    specs = {spec.name: spec for spec in layer.register_tools(info) or []}
    ctx = ToolContext(session=info)
    before = json.loads(specs["skills_list"].handler({}, ctx))
    assert before["count"] == 0
    layer.system_prompt_block(info, frozenset({"browser"}))
    after = json.loads(specs["skills_list"].handler({}, ctx))
    assert [s["name"] for s in after["skills"]] == ["needs-browser"]

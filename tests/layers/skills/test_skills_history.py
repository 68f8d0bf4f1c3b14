"""Skill history (issue 19.4): patch, edit and delete keep the previous version; revert
restores one (the state before is kept too); the number kept is bounded by
``skills.history_versions``. EN and ZH skills."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from skillkit import call, skill_md, write_skill

from hermes_core.cli.main import cli
from hermes_core.layers.skills.history import HistoryError, list_versions, revert
from hermes_core.layers.skills.library import SkillRoot, load_library
from hermes_core.layers.skills.tools import SkillsService
from hermes_core.types import ToolContext


def text_of(home: Path, name: str) -> str:
    skill = load_library([SkillRoot(home / "skills")]).get(name)
    assert skill is not None, f"{name} missing"
    return skill.skill_md.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "description", "old", "new"),
    [
        ("deploy-app", "Deploy the app to production.", "carefully", "with a checklist"),
        ("meeting-minutes-zh", "把会议记录整理成纪要。", "carefully", "并列出待办事项"),
    ],
)
def test_patch_edit_delete_keep_versions_and_revert_restores_them(
    service: SkillsService,
    ctx: ToolContext,
    home: Path,
    name: str,
    description: str,
    old: str,
    new: str,
) -> None:
    write_skill(home / "skills", name, description=description)
    original = text_of(home, name)
    out = call(service.skill_manage, ctx, action="patch", name=name, old_string=old, new_string=new)
    assert out["success"] and out["version_kept"] == 1, out
    patched = text_of(home, name)
    assert new in patched
    edited = skill_md(name, description, body="## 步骤\n1. 全部重写。\n")
    out = call(service.skill_manage, ctx, action="edit", name=name, content=edited)
    assert out["version_kept"] == 2
    out = call(service.skill_manage, ctx, action="delete", name=name)
    assert out["success"] and out["version_kept"] == 3
    versions = list_versions(home / "skills", name)
    assert [(v.number, v.action) for v in versions] == [(1, "patch"), (2, "edit"), (3, "delete")]
    assert versions[0].skill_md.read_text(encoding="utf-8") == original
    # revert with no number: the newest version (the state before delete) comes back
    done = revert(home, home / "skills", name, keep=10)
    assert done.restored.number == 3 and done.kept_current is None  # nothing to keep: deleted
    assert text_of(home, name) == edited
    done = revert(home, home / "skills", name, 1, keep=10)
    assert text_of(home, name) == original
    assert done.kept_current is not None and done.kept_current.action == "revert"
    # a revert can itself be reverted
    revert(home, home / "skills", name, done.kept_current.number, keep=10)
    assert text_of(home, name) == edited


def test_history_is_bounded_by_the_setting(
    make_service: Callable[..., SkillsService], ctx: ToolContext, home: Path
) -> None:
    service = make_service(history_versions=2)
    write_skill(home / "skills", "counter", description="Counts.", body="## Steps\nv0\n")
    for i in range(5):
        call(
            service.skill_manage,
            ctx,
            action="patch",
            name="counter",
            old_string=f"v{i}",
            new_string=f"v{i + 1}",
        )
    versions = list_versions(home / "skills", "counter")
    assert [v.number for v in versions] == [4, 5]
    assert "v3" in versions[0].skill_md.read_text(encoding="utf-8")


def test_zero_keeps_no_history(
    make_service: Callable[..., SkillsService], ctx: ToolContext, home: Path
) -> None:
    service = make_service(history_versions=0)
    write_skill(home / "skills", "plain", description="Plain.")
    out = call(
        service.skill_manage,
        ctx,
        action="patch",
        name="plain",
        old_string="carefully",
        new_string="slowly",
    )
    assert out["success"] and "version_kept" not in out
    assert list_versions(home / "skills", "plain") == []
    with pytest.raises(HistoryError, match="no kept versions"):
        revert(home, home / "skills", "plain")


def test_support_files_are_part_of_a_version(
    service: SkillsService, ctx: ToolContext, home: Path
) -> None:
    directory = write_skill(home / "skills", "with-refs", description="Has references.")
    (directory / "references").mkdir()
    (directory / "references" / "api.md").write_text("接口 v1\n", encoding="utf-8")
    call(
        service.skill_manage,
        ctx,
        action="patch",
        name="with-refs",
        file_path="references/api.md",
        old_string="v1",
        new_string="v2",
    )
    assert "v2" in (directory / "references" / "api.md").read_text(encoding="utf-8")
    revert(home, home / "skills", "with-refs", keep=10)
    assert (directory / "references" / "api.md").read_text(encoding="utf-8") == "接口 v1\n"


def test_revert_errors_name_the_fix(service: SkillsService, ctx: ToolContext, home: Path) -> None:
    write_skill(home / "skills", "alpha", description="Alpha.")
    call(
        service.skill_manage,
        ctx,
        action="patch",
        name="alpha",
        old_string="carefully",
        new_string="fast",
    )
    with pytest.raises(HistoryError, match=r"no version 7; kept: 1 .*hermes-memory skills history"):
        revert(home, home / "skills", "alpha", 7)
    with pytest.raises(HistoryError, match="name"):
        list_versions(home / "skills", "../etc")


def test_cli_history_and_revert(service: SkillsService, ctx: ToolContext, home: Path) -> None:
    write_skill(home / "skills", "weekly", description="写一份本周的工作周报。")
    call(
        service.skill_manage,
        ctx,
        action="patch",
        name="weekly",
        old_string="carefully",
        new_string="每周五",
    )
    runner = CliRunner()
    result = runner.invoke(cli, ["skills", "history", "weekly", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [v["version"] for v in data["versions"]] == [1]
    assert data["versions"][0]["action"] == "patch"
    assert data["versions"][0]["description"] == "写一份本周的工作周报。"
    table = runner.invoke(cli, ["skills", "history", "weekly"])
    assert "hermes-memory skills revert weekly VERSION" in table.output
    result = runner.invoke(cli, ["skills", "revert", "weekly"])
    assert result.exit_code == 0, result.output
    assert "restored 'weekly' version 1" in result.output
    assert "每周五" not in text_of(home, "weekly")
    bad = runner.invoke(cli, ["skills", "revert", "weekly", "99"])
    assert bad.exit_code != 0 and "no version 99" in bad.output
    none = runner.invoke(cli, ["skills", "history", "nothing-here"])
    assert none.exit_code == 0 and "No kept versions" in none.output

"""Tier-0 index: format, filtering, external roots and the memory/disk cache."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from skillkit import SAMPLE_LIBRARY, call, skill_md, write_skill

from hermes_core.layers.skills.index import (
    INDEX_CLOSING,
    SNAPSHOT_FILE,
    IndexCache,
    invalidate_index_cache,
    render_index,
)
from hermes_core.layers.skills.library import SkillRoot, load_library, skill_roots
from hermes_core.layers.skills.tools import SkillsService


def test_render_format_sorted_categories_and_guidance(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "zeta", "writing", description="Write things.")
    write_skill(root, "alpha", "devops", description="Deploy\n  things.")
    write_skill(root, "beta", "devops", description="Debug things.")
    (root / "devops" / "DESCRIPTION.md").write_text("---\ndescription: Ops work\n---\n")
    text = render_index(load_library([SkillRoot(root)]), platform="linux")
    lines = text.splitlines()
    assert lines[0] == "## Skills (mandatory)"
    assert "skill_view(name)" in text and "skill_manage(action='patch')" in text
    assert "offer to save the approach as a skill" in text
    start = lines.index("<available_skills>")
    assert lines[start + 1 : start + 6] == [
        "  devops: Ops work",
        "    - alpha: Deploy things.",
        "    - beta: Debug things.",
        "  writing:",
        "    - zeta: Write things.",
    ]
    assert lines[-1] == INDEX_CLOSING


def test_empty_library_renders_nothing(home: Path) -> None:
    assert render_index(load_library([SkillRoot(home / "skills")])) == ""


def test_uncategorised_skill_uses_metadata_category_or_general(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "plain")
    write_skill(root, "tagged", metadata={"hermes": {"category": "research"}})
    text = render_index(load_library([SkillRoot(root)]), platform="linux")
    assert "  general:\n    - plain:" in text
    assert "  research:\n    - tagged:" in text


def test_platform_filter(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "mac-only", platforms=["macos"])
    write_skill(root, "win-linux", platforms=["windows", "linux"])
    write_skill(root, "anywhere")
    library = load_library([SkillRoot(root)])
    linux = render_index(library, platform="linux")
    mac = render_index(library, platform="macos")
    assert "mac-only" not in linux and "win-linux" in linux and "anywhere" in linux
    assert "mac-only" in mac and "win-linux" not in mac


def test_disabled_filter(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "keep")
    write_skill(root, "drop")
    text = render_index(load_library([SkillRoot(root)]), platform="linux", disabled=["drop"])
    assert "keep" in text and "drop" not in text


def test_requires_and_fallback_conditions(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "needs-browser", metadata={"hermes": {"requires_tools": ["browser"]}})
    write_skill(root, "no-browser", metadata={"hermes": {"fallback_for_tools": ["browser"]}})
    write_skill(root, "needs-web", metadata={"hermes": {"requires_toolsets": ["web"]}})
    write_skill(root, "no-web", metadata={"hermes": {"fallback_for_toolsets": ["web"]}})
    library = load_library([SkillRoot(root)])

    with_all = render_index(
        library, platform="linux", available_tools=["browser"], available_toolsets=["web"]
    )
    assert "needs-browser" in with_all and "needs-web" in with_all
    assert "no-browser" not in with_all and "no-web" not in with_all

    without = render_index(library, platform="linux", available_tools=[], available_toolsets=[])
    assert "needs-browser" not in without and "needs-web" not in without
    assert "no-browser" in without and "no-web" in without

    unknown = render_index(library, platform="linux")  # tool conditions not evaluated
    for name in ("needs-browser", "no-browser", "needs-web", "no-web"):
        assert name in unknown


def test_external_roots_are_added_and_local_names_win(home: Path, tmp_path: Path) -> None:
    external = tmp_path / "team-skills"
    write_skill(home / "skills", "shared", description="Local version.")
    write_skill(external, "shared", description="Team version.")
    write_skill(external, "team-only", description="Only in the team dir.")
    roots = skill_roots(home, [str(external), str(external), ""])
    assert [r.read_only for r in roots] == [False, True]
    library = load_library(roots)
    assert library.skills["shared"].meta.description == "Local version."
    assert library.skills["team-only"].root.read_only
    assert [s.meta.description for s in library.shadowed] == ["Team version."]


def test_broken_skills_are_reported_not_raised(home: Path) -> None:
    root = home / "skills"
    write_skill(root, "good")
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text("no frontmatter")
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"\xff\xfe\x00bad")
    library = load_library([SkillRoot(root)])
    assert list(library.skills) == ["good"]
    errors = {p.path.parent.name: p.error for p in library.problems}
    assert "frontmatter" in errors["bad"] and "UTF-8" in errors["binary"]


def test_hidden_dirs_and_symlinked_skill_dirs_are_skipped(home: Path, tmp_path: Path) -> None:
    root = home / "skills"
    write_skill(root / ".archive", "old")
    outside = write_skill(tmp_path / "elsewhere", "linked")
    os.symlink(outside, root / "linked")
    assert list(load_library([SkillRoot(root)]).skills) == []


def test_sample_library_renders_every_category(make_service: Callable[..., SkillsService]) -> None:
    library = load_library([SkillRoot(SAMPLE_LIBRARY)])
    assert len(library.skills) >= 20 and not library.problems
    text = render_index(library, platform="linux", available_tools=["terminal"])
    assert "homebrew-maintenance" not in text  # macos only
    assert "browser-form-automation" not in text  # requires the browser tool
    assert "web-scrape-fallback" in text
    assert "  chinese: 中文写作、办公与生活类技能" in text
    assert "    - zh-meeting-minutes: 把会议录音转写" in text


class TestCache:
    def test_memory_then_disk_then_render(self, home: Path) -> None:
        root = home / "skills"
        write_skill(root, "one")
        roots = skill_roots(home)
        cache = IndexCache(home, roots)
        first = cache.render(platform="linux")
        assert cache.last_source == "render"
        assert cache.render(platform="linux") == first and cache.last_source == "memory"
        snapshot = json.loads((home / SNAPSHOT_FILE).read_text())
        assert str(root / "one" / "SKILL.md") in snapshot["manifest"]
        # a new process has an empty memory cache: simulate by clearing memory only
        from hermes_core.layers.skills import index as index_mod

        index_mod._MEMORY.clear()
        assert IndexCache(home, roots).render(platform="linux") == first
        fresh = IndexCache(home, roots)
        index_mod._MEMORY.clear()
        fresh.render(platform="linux")
        assert fresh.last_source == "disk"

    def test_manifest_change_invalidates(self, home: Path) -> None:
        root = home / "skills"
        path = write_skill(root, "one", description="Old text.") / "SKILL.md"
        cache = IndexCache(home, skill_roots(home))
        assert "Old text." in cache.render(platform="linux")
        path.write_text(skill_md("one", "New longer text."))
        assert "New longer text." in cache.render(platform="linux")
        assert cache.last_source == "render"
        write_skill(root, "two")
        assert "two" in cache.render(platform="linux")

    def test_filters_are_part_of_the_key(self, home: Path) -> None:
        write_skill(home / "skills", "one")
        cache = IndexCache(home, skill_roots(home))
        assert "one" in cache.render(platform="linux")
        assert cache.render(platform="linux", disabled=["one"]) == ""

    def test_invalidate_clears_memory_and_disk(self, home: Path) -> None:
        write_skill(home / "skills", "one")
        cache = IndexCache(home, skill_roots(home))
        cache.render(platform="linux")
        invalidate_index_cache(home)
        assert not (home / SNAPSHOT_FILE).exists()
        cache.render(platform="linux")
        assert cache.last_source == "render"

    def test_corrupt_snapshot_is_ignored(self, home: Path) -> None:
        write_skill(home / "skills", "one")
        (home / SNAPSHOT_FILE).write_text("{not json")
        cache = IndexCache(home, skill_roots(home))
        assert "one" in cache.render(platform="linux")

    def test_skill_manage_write_invalidates(self, service: SkillsService, ctx: object) -> None:
        first = service.render_index()
        assert first == ""
        out = call(
            service.skill_manage,
            ctx,  # type: ignore[arg-type]
            action="create",
            name="fresh-skill",
            content=skill_md("fresh-skill", "Brand new."),
        )
        assert out["success"], out
        assert not (service.home / SNAPSHOT_FILE).exists()
        assert "fresh-skill: Brand new." in service.render_index()
        out = call(
            service.skill_manage,
            ctx,  # type: ignore[arg-type]
            action="patch",
            name="fresh-skill",
            old_string="Brand new.",
            new_string="Patched.",
        )
        assert out["success"], out
        assert "fresh-skill: Patched." in service.render_index()


def test_skill_md_directly_in_root_is_a_problem(home: Path) -> None:
    root = home / "skills"
    (root / "SKILL.md").write_text(skill_md("stray"))
    write_skill(root, "real")
    library = load_library([SkillRoot(root)])
    assert list(library.skills) == ["real"]
    assert "directly in the skills root" in library.problems[0].error


def test_disabled_per_platform(home: Path) -> None:
    write_skill(home / "skills", "tool")
    library = load_library([SkillRoot(home / "skills")])
    assert render_index(library, platform="linux", disabled=["macos:tool"]) != ""
    assert render_index(library, platform="macos", disabled=["macos:tool"]) == ""

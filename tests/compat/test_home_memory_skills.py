"""MEMORY.md, USER.md and skills written by Hermes Agent's own tools are read here, and what
we write is read back by Hermes Agent's own tools (same format, EN and ZH)."""

from __future__ import annotations

import json
from pathlib import Path

from home_kit import make_agent_home, run_hermes, run_hermes_agent

from hermes_core import MemoryHost


def _open(home: Path) -> MemoryHost:
    return MemoryHost.open(home, load_entrypoints=False, activate_provider=False)


def test_memory_written_by_hermes_agent_is_read_and_written_in_its_format(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    theirs = run_hermes_agent(agent_home, "memory_read")
    assert len(theirs["memory"]) == 2 and len(theirs["user"]) == 2
    memory_file = agent_home / "memories" / "MEMORY.md"
    original = memory_file.read_bytes()

    host = _open(agent_home)
    try:
        with host.session(source="cli") as s:
            prompt = s.system_prompt()
            for entry in theirs["memory"] + theirs["user"]:
                assert entry in prompt  # every entry Hermes Agent wrote is in our frozen prompt
            for target, content in (
                ("memory", "Releases are tagged vX.Y.Z."),
                ("user", "用户在上海工作，时区是 UTC+8。"),
            ):
                out = json.loads(
                    s.call_tool("memory", {"action": "add", "target": target, "content": content})
                )
                assert out["success"], out
            out = json.loads(
                s.call_tool(
                    "memory",
                    {
                        "action": "replace",
                        "target": "user",
                        "old_text": "Prefers concise",
                        "content": "Prefers concise answers with examples.",
                    },
                )
            )
            assert out["success"], out
    finally:
        host.close()

    # Hermes Agent's own MemoryStore reads what we wrote, entry for entry.
    back = run_hermes_agent(agent_home, "memory_read")
    assert back["memory"] == [*theirs["memory"], "Releases are tagged vX.Y.Z."]
    assert back["user"] == [
        "Prefers concise answers with examples.",
        "用户喜欢简洁的中文回答。",
        "用户在上海工作，时区是 UTC+8。",
    ]
    # Our append kept Hermes Agent's bytes as they were, then its delimiter, then ours.
    assert memory_file.read_bytes() == original + "\n§\nReleases are tagged vX.Y.Z.".encode()

    # And Hermes Agent can keep writing after us (no drift refusal on our file).
    run_hermes_agent(agent_home, "memory")
    again = run_hermes_agent(agent_home, "memory_read")
    assert "Releases are tagged vX.Y.Z." in again["memory"]


def test_skills_written_by_hermes_agent_are_found_and_ours_are_found_there(tmp_path: Path) -> None:
    agent_home = make_agent_home(tmp_path)
    listed = run_hermes(agent_home, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "rotate-logs" in listed.stdout

    host = _open(agent_home)
    try:
        with host.session(source="cli") as s:
            view = json.loads(s.call_tool("skill_view", {"name": "rotate-logs"}))
            assert "logrotate -f /etc/logrotate.conf" in json.dumps(view, ensure_ascii=False)
            made = json.loads(
                s.call_tool(
                    "skill_manage",
                    {
                        "action": "create",
                        "name": "backup-db",
                        "category": "devops",
                        "content": "---\nname: backup-db\ndescription: 备份数据库 (back up "
                        "the database) before a migration.\n---\n\n# Back up\n\n1. Run "
                        "`pg_dump`.\n",
                    },
                )
            )
            assert made.get("success"), made
    finally:
        host.close()

    assert (agent_home / "skills" / "devops" / "backup-db" / "SKILL.md").is_file()
    theirs = run_hermes_agent(agent_home, "skills_list")
    assert {"rotate-logs", "backup-db"} <= set(theirs["names"])
    assert theirs["views"]["backup-db"] and theirs["views"]["rotate-logs"]

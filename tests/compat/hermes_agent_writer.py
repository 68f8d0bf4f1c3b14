"""Drive Hermes Agent 0.19.0's own code to write a home (run as a script, HERMES_HOME set).

``python hermes_agent_writer.py sessions``: two sessions through its ``SessionDB`` (one with
a title, a tool call and its result, one continuing it through ``parent_session_id``; EN and
ZH text). ``memory``: entries through its ``memory`` tool (``MemoryStore``). ``skill``: a
skill through its ``skill_manage`` tool. ``check``: its own ``SessionDB`` reads the file back;
prints JSON. Nothing here imports hermes_core: every byte comes from Hermes Agent.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HOME = Path(os.environ["HERMES_HOME"])


def sessions() -> None:
    from hermes_state import SessionDB

    db = SessionDB(HOME / "state.db")
    db.create_session("ha-s1", "cli", model="gpt-test", system_prompt="You are Hermes.")
    db.set_session_title("ha-s1", "Deploy notes")
    db.append_message("ha-s1", "user", "How do I deploy the kumquat service to staging?")
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "terminal", "arguments": json.dumps({"command": "make deploy"})},
    }
    db.append_message("ha-s1", "assistant", None, tool_calls=[call], finish_reason="tool_calls")
    db.append_message(
        "ha-s1", "tool", "deployed kumquat to staging", tool_name="terminal", tool_call_id="call_1"
    )
    db.append_message("ha-s1", "assistant", "The kumquat service is on staging now.")
    db.end_session("ha-s1", "compression")
    db.create_session("ha-s2", "telegram", user_id="tg-42", parent_session_id="ha-s1")
    db.set_session_title("ha-s2", "部署笔记 #2")
    db.append_message("ha-s2", "user", "请记住：数据库备份在每天凌晨三点运行。")
    db.append_message("ha-s2", "assistant", "好的，我记住了数据库备份时间。")
    db.close()


def more() -> None:
    from hermes_state import SessionDB

    db = SessionDB(HOME / "state.db")
    db.append_message("ha-s1", "user", "And the rollback command for quince?")
    db.create_session("ha-s3", "cli")
    db.append_message("ha-s3", "user", "Where is the persimmon config stored?")
    db.close()


def hold() -> None:
    """Write a message inside an open write transaction of Hermes Agent's own connection,
    print ``ready``, commit only when a line arrives on stdin."""
    import time

    from hermes_state import SessionDB

    db = SessionDB(HOME / "state.db")
    conn = db._conn
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
        ("ha-s1", "user", "the tamarind rollout is uncommitted", time.time()),
    )
    print("ready", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    db.close()
    print(json.dumps({"committed": True}), flush=True)


def memory() -> None:
    from tools.memory_tool import MemoryStore, memory_tool

    store = MemoryStore()
    store.load_from_disk()
    for target, content in (
        ("memory", "Project uses tox; run `tox -e py311` before pushing."),
        ("memory", "Deploys go through `make deploy`.\nStaging first, then prod."),
        ("user", "Prefers concise answers."),
        ("user", "用户喜欢简洁的中文回答。"),
    ):
        out = json.loads(memory_tool(action="add", target=target, content=content, store=store))
        assert out.get("success"), out


def memory_read() -> None:
    from tools.memory_tool import MemoryStore

    store = MemoryStore()
    store.load_from_disk()
    print(json.dumps({"memory": store.memory_entries, "user": store.user_entries}))


def skill() -> None:
    from tools.skill_manager_tool import skill_manage

    content = (
        "---\nname: rotate-logs\ndescription: Rotate and compress service logs safely.\n---\n\n"
        "# Rotate logs\n\n1. Run `logrotate -f /etc/logrotate.conf`.\n2. Check disk space.\n"
    )
    out = json.loads(skill_manage("create", "rotate-logs", content=content, category="devops"))
    assert out.get("success"), out


def skills_list() -> None:
    from tools.skills_tool import skill_view, skills_list

    listed = json.loads(skills_list())
    names = sorted(s["name"] for s in listed.get("skills", []))
    views = {n: json.loads(skill_view(n)).get("success", False) for n in names}
    print(json.dumps({"names": names, "views": views}))


def check() -> None:
    from hermes_state import SessionDB

    db = SessionDB(HOME / "state.db")
    sessions = {}
    for sid in ("ha-s1", "ha-s2"):
        row = db.get_session(sid)
        sessions[sid] = {
            "title": row["title"] if row else None,
            "messages": len(db.get_messages(sid)) if row else 0,
        }
    hits = db.search_messages("kumquat")
    version = db._conn.execute("SELECT version FROM schema_version").fetchone()[0]
    db.close()
    print(json.dumps({"sessions": sessions, "hits": len(hits), "schema": version}))


if __name__ == "__main__":
    {
        "sessions": sessions,
        "more": more,
        "hold": hold,
        "memory": memory,
        "memory_read": memory_read,
        "skill": skill,
        "skills_list": skills_list,
        "check": check,
    }[sys.argv[1]]()

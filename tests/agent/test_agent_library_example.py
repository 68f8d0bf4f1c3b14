"""examples/custom_loop.py drives the same lifecycle without the reference agent."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from scripted import ScriptedModel, call

from hermes_core.layers.sessions.db import DB_FILE, SessionDB
from hermes_core.scope import ALL_USERS
from hermes_core.testing.fake_llm import FakeLLMServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_loop.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("custom_loop_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_custom_loop_writes_memory_archives_and_reviews(
    hermes_home: Path, fake_llm: FakeLLMServer, model: ScriptedModel
) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  nudge_interval: 1\n", encoding="utf-8")
    model.when(
        "short answers",
        call("memory", action="add", target="user", content="User prefers short answers."),
    )
    model.when("about me", "You like short answers.")
    model.review = lambda body: (
        call("memory", action="add", target="memory", content="MyBot runs on 周一 builds.")
        if body["messages"][-1]["role"] == "user"
        else "Saved."
    )
    replies = load_example().run_conversation(
        ["Remember that I prefer short answers.", "What do you know about me?"],
        base_url=fake_llm.base_url,
        model=fake_llm.model,
        home=hermes_home,
    )
    assert replies == ["Done (memory: success=True).", "You like short answers."]
    memories = hermes_home / "memories"
    assert "User prefers short answers." in (memories / "USER.md").read_text(encoding="utf-8")
    assert "MyBot runs on 周一 builds." in (memories / "MEMORY.md").read_text(encoding="utf-8")
    db = SessionDB(hermes_home / DB_FILE)
    try:
        (record,) = db.list_sessions(user_id=ALL_USERS)
        assert record.source == "my-bot" and record.message_count == 6
    finally:
        db.close()
    assert fake_llm.chat_requests[0]["messages"][0]["content"].startswith("You are MyBot")


def test_example_runs_as_a_script(hermes_home: Path, fake_llm: FakeLLMServer) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--base-url", fake_llm.base_url, "--model", "m", "你好吗?"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[fake-llm] 你好吗?"

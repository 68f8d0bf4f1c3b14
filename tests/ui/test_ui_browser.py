"""`hermes-memory ui` in a real browser: Playwright driving Debian's chromium (no download).

Skipped with the reason when playwright or chromium is missing locally; under CI=true their
absence is a failure (CI installs both: .ci/run and the dev extra). One browser per module.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_kit import SCRIPT, SECRET, SECRET_ZH, holographic_provider

from hermes_core import MemoryHost
from hermes_core.layers.memory.engine import MemoryEngine
from hermes_core.net import free_port
from hermes_core.providers import recall_skips
from hermes_core.settings.base import load_settings
from hermes_core.ui.app import create_app
from hermes_core.ui.guard import Guard

CHROMIUM = os.environ.get("HERMES_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _need(what: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{what} is missing in CI: .ci/run installs chromium, the dev extra playwright")
    pytest.skip(f"{what} is not installed (apt-get install chromium; pip install playwright)")


try:
    from playwright.sync_api import Browser, Page, sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]


class Server:
    """The inspector on a real uvicorn on 127.0.0.1 (a thread of this process)."""

    def __init__(self, home: Path, *, read_only: bool = False, provider: Any = None) -> None:
        import uvicorn

        self.port = free_port("127.0.0.1")
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = MemoryHost.open(home, load_entrypoints=False)
        if provider is not None:
            self.host.registry.activate_class(provider, {})
        app = create_app(self.host, Guard(home=home, read_only=read_only))
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.host.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if sync_playwright is None:
        _need("playwright")
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        _need("chromium")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    tab = context.new_page()
    tab.on("dialog", lambda dialog: dialog.accept())
    yield tab
    context.close()


@pytest.fixture
def server(ui_home: Path) -> Iterator[Server]:
    running = Server(ui_home)
    yield running
    running.stop()


PAGES = ["/", "/memory", "/sessions", "/skills", "/provider", "/trace", "/forget"]


def test_every_page_for_two_users_and_isolation(page: Page, server: Server) -> None:
    for user in ("alice", "bob"):
        for path in PAGES:
            response = page.goto(f"{server.url}{path}?u={user}")
            assert response is not None and response.status == 200, (user, path)
            assert page.locator("h1").count() == 1
            text = page.inner_text("main")
            if user == "bob" and path != "/":
                assert SECRET not in text and SECRET_ZH not in text and "Alice" not in text, path
    # the picker switches user (the page's own JavaScript)
    page.goto(f"{server.url}/memory?u=bob")
    page.select_option("#user-picker", "alice")
    page.wait_for_url("**u=alice**")
    assert SECRET in page.inner_text("main")


def test_a_stored_script_stays_inert(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/memory?u=alice")
    assert page.title() != "pwned"
    assert SCRIPT in page.inner_text("main")  # shown as text
    assert page.locator("main script").count() == 0


def test_edit_and_approve_a_memory(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/memory?u=bob")
    page.fill("table.entries-user textarea[name=new]", "Bob likes 围棋 and 象棋.")
    page.click("table.entries-user button:has-text('Save')")
    page.wait_for_load_state()
    assert "staged" in page.inner_text(".notice")  # memory.write_approval is on
    page.click("table.pending button:has-text('Approve')")
    page.wait_for_load_state()
    assert "象棋" in page.inner_text("table.entries-user")
    assert page.locator("table.pending td.empty").count() == 1


def test_forget_a_subject_shows_a_clean_proof(page: Page, server: Server, ui_home: Path) -> None:
    page.goto(f"{server.url}/forget?u=alice")
    page.fill("input[name=phrase]", SECRET)
    page.click("button:has-text('Find every match')")
    page.wait_for_load_state()
    assert "Alice leads" in page.inner_text("table.matches")
    page.click("button:has-text('Delete these')")
    page.wait_for_selector("#verdict")
    assert "zero hits" in page.inner_text("#verdict")
    hits = page.locator("table.proof td:nth-child(2)").all_inner_texts()
    assert hits[:5] == ["0"] * 5 and hits[5].startswith("0 of ")
    leftovers = [p for p in ui_home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leftovers == []


def test_provider_memories_expire_and_are_forgotten_with_proof(page: Page, ui_home: Path) -> None:
    """holographic: two users' facts, an expiry set in the page, forget with a clean proof."""
    running = Server(ui_home, provider=holographic_provider())
    try:
        store = running.host.provider.store  # type: ignore[union-attr]
        store.add("alice", "Alice is planning a trip to Zanzibar in May.")
        store.add("alice", "Alice drinks tea.")
        store.add("bob", "Bob sails to Madeira in June.")
        page.goto(f"{running.url}/provider?u=bob")
        assert "Bob sails" in page.inner_text("main") and "Alice" not in page.inner_text("main")
        page.goto(f"{running.url}/provider?u=alice")
        row = page.locator("table.provider-memories tr", has_text="Zanzibar")
        row.locator("input[type=date]").fill("2001-01-01")
        row.locator("button:has-text('Set expiry')").click()
        page.wait_for_load_state()
        assert "expired" in page.inner_text(".notice")
        assert "expired — left recall" in page.inner_text("table.provider-memories")
        assert "Recall skips per day" in page.inner_text("main")
        page.goto(f"{running.url}/forget?u=alice")
        page.fill("input[name=phrase]", "Zanzibar")
        page.click("button:has-text('Find every match')")
        page.wait_for_load_state()
        matches = page.inner_text("table.matches")
        assert "Alice is planning" in matches and "Bob" not in matches
        page.click("button:has-text('Delete these')")
        page.wait_for_selector("#verdict")
        assert "zero hits" in page.inner_text("#verdict")
        assert page.locator("table.proof td:nth-child(2)").all_inner_texts()[3] == "0"
        page.goto(f"{running.url}/provider?u=bob")
        assert "Bob sails to Madeira" in page.inner_text("main")  # bob's own fact stays
    finally:
        running.stop()


def test_read_only_refuses(page: Page, ui_home: Path) -> None:
    running = Server(ui_home, read_only=True)
    try:
        page.goto(f"{running.url}/memory?u=alice")
        assert "read-only" in page.inner_text("header")
        assert page.locator("textarea").count() == 0
        # a change sent anyway (the form of a writable server, replayed) is refused
        response = page.request.post(
            f"{running.url}/memory/add",
            form={"u": "alice", "target": "user", "content": "new fact", "csrf": "anything"},
        )
        assert response.status == 403
    finally:
        running.stop()
    engine = MemoryEngine(ui_home, load_settings(ui_home).memory, "alice")
    assert "new fact" not in engine.store("user").entries()


def test_screenshots_for_the_docs(page: Page, server: Server) -> None:
    """Writes docs/images/ui-*.png when INSPECTOR_SCREENSHOTS names a directory."""
    target = os.environ.get("INSPECTOR_SCREENSHOTS")
    if not target:
        pytest.skip("set INSPECTOR_SCREENSHOTS=docs/images to refresh the screenshots")
    out = Path(target)
    out.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1100, "height": 720})
    for name, path in (("people", "/"), ("memory", "/memory?u=alice")):
        page.goto(f"{server.url}{path}")
        page.screenshot(path=str(out / f"ui-{name}.png"))
    page.goto(f"{server.url}/forget?u=alice")
    page.fill("input[name=phrase]", SECRET_ZH)
    page.click("button:has-text('Find every match')")
    page.click("button:has-text('Delete these')")
    page.wait_for_selector("#verdict")
    page.screenshot(path=str(out / "ui-forget-proof.png"))
    running = Server(server.host.home, provider=holographic_provider())
    try:
        provider: Any = running.host.provider
        for fact in ("Alice is planning a trip to Zanzibar in May.", "Alice 喜欢喝乌龙茶。"):
            provider.store.add("alice", fact)
        with running.host.session(user_id="alice") as s:
            s.before_turn("Where is Alice going in May, Zanzibar?")
            s.before_turn("乌龙茶")
        first = provider.inspect_memories("alice")[-1]
        provider.inspect_set_expiry("alice", first.id, 978307200.0)  # 2001-01-01
        for ago in (2, 1, 1, 0):
            when = time.time() - ago * 86400
            recall_skips.record(running.host.home, "holographic", "timeout", "slow", now=when)
        page.goto(f"{running.url}/provider?u=alice")
        page.screenshot(path=str(out / "ui-provider.png"), full_page=True)
        page.goto(f"{running.url}/trace?u=alice")
        page.screenshot(path=str(out / "ui-trace.png"))
    finally:
        running.stop()

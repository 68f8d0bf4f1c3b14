"""What only server mode has: settings, a server that is down, slow, restarted or behind a
token-checking proxy, the doctor's report and the setup questions.

The rest of the suite already runs in both modes (``conftest.py``); these tests use real
processes and sockets on 127.0.0.1: the session's ``chroma run`` server, a private one they
stop and restart, a stdlib reverse proxy that checks a token, and listening sockets that
never answer or hang up at once.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from click.testing import CliRunner
from hermes_core.cli.main import cli
from hermes_core.providers import recall_skips
from hermes_core.providers.service import (
    ServiceAuthError,
    ServicePaused,
    ServiceUnavailable,
)
from hermes_core.testing.fakes import make_turn
from hermes_core.testing.harness import ProviderHarness
from hermes_core.types import SessionInfo
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from pydantic import ValidationError

from hermes_memory_chroma import server as server_mod
from hermes_memory_chroma.provider import ChromaProvider
from hermes_memory_chroma.settings import ChromaSettings
from tests.chroma_server import ChromaServer, free_port, start_chroma_server

Make = Callable[..., ChromaProvider]
SessionFor = Callable[..., SessionInfo]
TOKEN = "tok-7f3a9c2e51"


# ------------------------------------------------------------------ loopback helpers


@dataclass
class Listener:
    """A TCP socket on 127.0.0.1 that accepts and then hangs up at once (``hang=False``) or
    keeps the connection open without ever answering (``hang=True``)."""

    hang: bool
    accepted: int = 0
    sock: socket.socket = field(default_factory=socket.socket)
    held: list[socket.socket] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            if self.hang:
                self.held.append(conn)
            else:
                conn.close()

    def close(self) -> None:
        self._stop.set()
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Callable[..., Listener]]:
    made: list[Listener] = []

    def build(*, hang: bool) -> Listener:
        made.append(Listener(hang=hang))
        return made[-1]

    yield build
    for item in made:
        item.close()


@dataclass
class TokenProxy:
    """A reverse proxy in front of a chroma server that lets a request through only with
    ``Authorization: Bearer <token>`` (what the proxies documented for chroma 1.x check)."""

    upstream: str
    token: str
    seen: list[str] = field(default_factory=list)
    refused: int = 0

    def start(self) -> str:
        proxy = self
        up = urlsplit(self.upstream)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _forward(self) -> None:
                auth = self.headers.get("Authorization", "")
                proxy.seen.append(auth)
                if auth != f"Bearer {proxy.token}":
                    proxy.refused += 1
                    body = b"unauthorized"
                    self.send_response(401)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                payload = self.rfile.read(length) if length else None
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=payload, headers=headers)
                reply = conn.getresponse()
                data = reply.read()
                self.send_response(reply.status)
                for key, value in reply.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = _forward

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def token_proxy(chroma_server: ChromaServer) -> Iterator[tuple[TokenProxy, str]]:
    proxy = TokenProxy(chroma_server.url, TOKEN)
    url = proxy.start()
    yield proxy, url
    proxy.stop()


def _server_settings(url: str, **extra: Any) -> ChromaSettings:
    return ChromaSettings(mode="server", url=url, embedder="hash", **extra)


# ------------------------------------------------------------------ settings


def test_settings_default_to_embedded_and_validate_the_url() -> None:
    s = ChromaSettings()
    assert s.mode == "embedded" and s.url == "http://127.0.0.1:8000" and s.token is None
    assert ChromaSettings(url="http://10.0.0.5:8000/").url == "http://10.0.0.5:8000"
    for bad in ("127.0.0.1:8000", "ftp://host:1", "http://", "http://h:99999"):
        with pytest.raises(ValidationError, match="chroma server URL"):
            ChromaSettings(url=bad)
    with pytest.raises(ValidationError, match="token"):
        ChromaSettings(url="http://user:pw@host:8000")
    secret = ChromaSettings(mode="server", token=TOKEN)
    assert TOKEN not in repr(secret) and TOKEN not in secret.model_dump_json()


def test_token_goes_to_env_and_url_to_config(hermes_home: Path) -> None:
    """``hermes-memory memory setup chroma`` asks the mode, then the URL and token only for a
    server; the token lands in .env (0600), never in config.yaml."""
    down, enter, backspace = "\x1b[B", "\r", "\x7f"
    url = f"http://127.0.0.1:{free_port()}"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        # mode: server; url; token; user id (default); embedder (default)
        for press in (down, enter, backspace * 40, url, enter, TOKEN, enter, enter, enter):
            pipe.send_text(press)
        result = CliRunner().invoke(cli, ["memory", "setup", "chroma"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())
    block = config["memory"]["providers"]["chroma"]
    assert block == {"mode": "server", "url": url}
    env = (hermes_home / ".env").read_text()
    assert f"HERMES_MEMORY__PROVIDERS__CHROMA__TOKEN={TOKEN}" in env
    assert TOKEN not in (hermes_home / "config.yaml").read_text()
    assert (hermes_home / ".env").stat().st_mode & 0o077 == 0


def test_embedded_setup_does_not_ask_for_a_server(hermes_home: Path) -> None:
    from hermes_core.cli.prompts import asked_when, setup_fields

    fields = dict(setup_fields(ChromaSettings))
    assert list(fields) == ["mode", "url", "token", "user_id", "embedder"]
    assert not asked_when(fields["url"], {"mode": "embedded"})
    assert asked_when(fields["token"], {"mode": "server"})
    advanced = dict(setup_fields(ChromaSettings, advanced=True))
    for name in ("tenant", "database", "timeout"):  # --advanced skips them too when embedded
        assert not asked_when(advanced[name], {"mode": "embedded"})
        assert asked_when(advanced[name], {"mode": "server"})
    enter = "\r"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        for press in (enter, enter, enter):  # mode (embedded), user id, embedder
            pipe.send_text(press)
        result = CliRunner().invoke(cli, ["memory", "setup", "chroma"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "URL of the chroma server" not in result.output
    config = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert config["memory"]["provider"] == "chroma"
    assert not (config["memory"].get("providers") or {}).get("chroma")


# ------------------------------------------------------------------ a server that is down


def test_a_down_server_fails_with_the_fix_and_keeps_no_store(hermes_home: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    provider = ChromaProvider(_server_settings(url), hermes_home)
    try:
        assert provider.is_available()  # no network in is_available
        with pytest.raises(ServiceUnavailable) as caught:
            provider.store.list_memories("alice")  # opens on the outbox; reads need the server
        message = str(caught.value)
        assert url in message and "chroma run" in message
        assert "memory.providers.chroma.url" in message
        checks = {c.name: c for c in provider.health_check(hermes_home)}
        assert not checks["chroma: mode"].ok
        assert "chroma run --path" in checks["chroma: mode"].fix
        assert "chroma: store" not in checks  # nothing more to check without the server
    finally:
        provider.shutdown()


def test_a_turn_goes_on_when_the_server_is_down_and_the_skip_is_counted(
    hermes_home: Path,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    harness = ProviderHarness(
        ChromaProvider, hermes_home, {"mode": "server", "url": url, "embedder": "hash"}
    )
    try:
        block = harness.session.before_turn("Which editor do I like for Rust projects?")
        assert block == ""
        harness.session.after_turn("Which editor do I like for Rust projects?", "Helix.")
    finally:
        harness.close()
    entry = recall_skips.load(hermes_home)["chroma"]
    assert entry["failed"] >= 1 and entry["last_kind"] == "failed"
    assert "unreachable" in entry["last_detail"] and "chroma run" in entry["last_detail"]


def test_the_breaker_stops_calling_a_failing_server(
    hermes_home: Path, listener: Callable[..., Listener]
) -> None:
    refusing = listener(hang=False)  # accepts, then hangs up without an answer
    provider = ChromaProvider(_server_settings(refusing.url), hermes_home)
    try:
        errors = []
        for _ in range(server_mod.BREAKER_THRESHOLD + 3):
            with pytest.raises(ServiceUnavailable) as caught:
                provider.store.list_memories("alice")  # the store opens; the read connects
            errors.append(caught.value)
        assert refusing.accepted == server_mod.BREAKER_THRESHOLD
        assert all(isinstance(e, ServicePaused) for e in errors[server_mod.BREAKER_THRESHOLD :])
        assert "paused" in str(errors[-1])
    finally:
        provider.shutdown()


def test_a_server_that_never_answers_times_out(
    hermes_home: Path, listener: Callable[..., Listener]
) -> None:
    silent = listener(hang=True)
    provider = ChromaProvider(_server_settings(silent.url, timeout=0.5), hermes_home)
    try:
        with pytest.raises(ServiceUnavailable, match=r"no answer within 0\.5 s"):
            provider.store.list_memories("alice")
        assert silent.accepted == 2  # once at open, once for the read: no retry loop
    finally:
        provider.shutdown()


def test_a_url_that_is_not_a_chroma_server_is_named(hermes_home: Path) -> None:
    other = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)  # answers 501
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{other.server_address[1]}"
        provider = ChromaProvider(_server_settings(url), hermes_home)
        with pytest.raises(Exception, match="is not a chroma server"):
            provider.store  # noqa: B018
        provider.shutdown()
    finally:
        other.shutdown()
        other.server_close()


# ------------------------------------------------------------------ the token


def test_the_token_reaches_the_server_and_a_wrong_one_is_named(
    hermes_home: Path,
    token_proxy: tuple[TokenProxy, str],
    session_for: SessionFor,
) -> None:
    proxy, url = token_proxy
    database = "tok" + free_port().__str__()
    good = ChromaProvider(_server_settings(url, token=TOKEN, database=database), hermes_home)
    try:
        session = session_for("alice")
        good.sync(session, make_turn("I write my notes in Obsidian.", "Noted.", number=1))
        ctx = good.prefetch(session, "Where do I write my notes?")
        assert ctx is not None and "Obsidian" in ctx.text
        checks = {c.name: c for c in good.health_check(hermes_home)}
        assert checks["chroma: mode"].ok and "with a token" in checks["chroma: mode"].detail
        assert proxy.refused == 0 and set(proxy.seen) == {f"Bearer {TOKEN}"}
    finally:
        good.shutdown()

    for token in ("wrong-token-123", None):
        bad = ChromaProvider(_server_settings(url, token=token, database=database), hermes_home)
        try:
            with pytest.raises(ServiceAuthError) as caught:
                bad.prefetch(session_for("alice"), "Where do I write my notes?")
            assert "401" in str(caught.value)
            assert "HERMES_MEMORY__PROVIDERS__CHROMA__TOKEN" in str(caught.value)
            assert ("was refused" if token else "no token was given") in str(caught.value)
            assert "wrong-token-123" not in str(caught.value)
            check = {c.name: c for c in bad.health_check(hermes_home)}["chroma: mode"]
            assert not check.ok and "memory.providers.chroma.token" in check.fix
        finally:
            bad.shutdown()


# ------------------------------------------------------------------ restart, doctor


@pytest.fixture
def private_server(tmp_path: Path) -> Iterator[Callable[..., ChromaServer]]:
    """``start(port=None)``: a chroma server of this test's own on ``tmp_path/data``
    (restartable on the same port and data); stopped after the test."""
    running: list[ChromaServer] = []

    def start(port: int | None = None) -> ChromaServer:
        running.append(start_chroma_server(tmp_path / "data", tmp_path / "server.log", port=port))
        return running[-1]

    yield start
    for server in running:
        server.stop()


@dataclass
class LosableServer:
    """A provider on a private chroma server that a test stops and starts again (same port,
    same data); the provider's breaker probes again at once."""

    server: ChromaServer
    provider: ChromaProvider
    start: Callable[..., ChromaServer]

    def restart(self) -> None:
        self.server = self.start(port=int(urlsplit(self.server.url).port or 0))


@pytest.fixture
def losable(
    hermes_home: Path,
    private_server: Callable[..., ChromaServer],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[LosableServer]:
    """A :class:`LosableServer`; the provider is shut down after the test."""
    monkeypatch.setattr(server_mod, "BREAKER_COOLDOWN", 0.0)
    server = private_server()
    made = LosableServer(
        server, ChromaProvider(_server_settings(server.url), hermes_home), private_server
    )
    yield made
    made.provider.shutdown()


def test_memories_survive_a_server_restart_and_recall_resumes(
    losable: LosableServer, session_for: SessionFor
) -> None:
    provider, alice, bob = losable.provider, session_for("alice", "sa"), session_for("bob", "sb")
    provider.sync(alice, make_turn("My locker code is 4417.", "Noted.", number=1))
    provider.sync(bob, make_turn("我的储物柜密码是 9021。", "好的。", number=1))
    losable.server.stop()
    with pytest.raises(ServiceUnavailable, match="unreachable"):
        provider.prefetch(alice, "What is my locker code?")
    losable.restart()
    ctx = provider.prefetch(alice, "What is my locker code?")
    assert ctx is not None and "4417" in ctx.text and "9021" not in ctx.text
    zh = provider.prefetch(bob, "储物柜密码是多少？")
    assert zh is not None and "9021" in zh.text and "4417" not in zh.text


def test_doctor_reports_mode_and_server(
    hermes_home: Path, chroma_server: ChromaServer, make_provider: Make, chroma_mode: str
) -> None:
    provider = make_provider()
    provider.store.add("alice", "a memory to count")
    checks = {c.name: c for c in provider.health_check(hermes_home)}
    mode = checks["chroma: mode"]
    assert mode.ok
    if chroma_mode == "embedded":
        assert mode.detail == f"embedded at {hermes_home / 'chroma'}"
    else:
        assert mode.detail.startswith(f"server {chroma_server.url} (tenant default_tenant")
        assert "reachable, chroma " in mode.detail and "without a token" in mode.detail
        assert chroma_server.url in checks["chroma: store"].detail
    assert "1 active" in checks["chroma: store"].detail


def test_hermes_doctor_prints_the_server_check(
    hermes_home: Path, chroma_server: ChromaServer
) -> None:
    _use(hermes_home, {"mode": "server", "url": chroma_server.url, "embedder": "hash"})
    result = CliRunner().invoke(cli, ["doctor", "--json"], catch_exceptions=False)
    checks = {c["name"]: c for c in json.loads(result.output)}
    assert checks["chroma: mode"]["ok"], checks["chroma: mode"]
    assert chroma_server.url in checks["chroma: mode"]["detail"]


def test_two_homes_on_one_server_share_a_users_memories_and_keep_users_apart(
    tmp_path: Path, chroma_server: ChromaServer, session_for: SessionFor
) -> None:
    """Two hosts (two homes) on one server and database: what one stores the other reads
    and recalls through the vector ranking at once (live counts are asked, not cached),
    users stay apart; the keyword index is per home and the doctor reports its lag."""
    database = "shared" + str(free_port())
    homes = [tmp_path / "host-a", tmp_path / "host-b"]
    providers = [
        ChromaProvider(_server_settings(chroma_server.url, database=database), home)
        for home in homes
    ]
    a, b = (p.store for p in providers)
    try:
        a.add("alice", "Alice keeps her notes in Obsidian.")
        vector = b.embedder.embed_query("favourite editor")
        assert b.dense("alice", vector, 5)[0][0].content == "Alice keeps her notes in Obsidian."
        # written by host A after host B read alice's collection: B still finds it
        a.add("alice", "Alice's favourite editor is Helix.")
        a.add("bob", "Bob's favourite editor is Emacs.")
        found = b.list_memories("alice")
        assert {m.content for m in found} == {
            "Alice keeps her notes in Obsidian.",
            "Alice's favourite editor is Helix.",
        }
        hits = b.dense("alice", vector, 5)
        assert len(hits) == 2 and {m.user_id for m, _ in hits} == {"alice"}
        # the keyword index is per home: B's lags until it is rebuilt from the server,
        # and the doctor says so
        assert b.fts.count("alice") == 0
        drift = {c.name: c for c in providers[1].health_check(homes[1])}["chroma: keyword index"]
        assert not drift.ok and "reembed --force" in drift.fix
        assert b.rebuild_keyword_index("alice") == 2
        assert [i for i, _ in b.fts.search("alice", "Helix", 5)] == [
            m.id for m in found if "Helix" in m.content
        ]
    finally:
        for provider in providers:
            provider.shutdown()


def _use(home: Path, block: dict[str, Any]) -> None:
    (home / "config.yaml").write_text(
        yaml.safe_dump({"memory": {"provider": "chroma", "providers": {"chroma": block}}})
    )


def test_memory_status_shows_mode_and_reachability(
    hermes_home: Path, chroma_server: ChromaServer
) -> None:
    _use(hermes_home, {"mode": "server", "url": chroma_server.url, "embedder": "hash"})
    result = CliRunner().invoke(cli, ["memory", "status", "--json"], catch_exceptions=False)
    info = json.loads(result.output)["provider_status"]
    assert info["details"]["mode"] == "server"
    assert info["details"]["location"].startswith(chroma_server.url)
    assert info["details"]["server"].startswith("reachable, chroma ")
    assert [s["env_var"] for s in info["secrets"]] == ["HERMES_MEMORY__PROVIDERS__CHROMA__TOKEN"]
    table = CliRunner().invoke(cli, ["memory", "status"], catch_exceptions=False)
    assert "Mode: server" in table.output and "Server: reachable" in table.output

    down = f"http://127.0.0.1:{free_port()}"
    _use(hermes_home, {"mode": "server", "url": down, "embedder": "hash"})
    result = CliRunner().invoke(cli, ["memory", "status", "--json"], catch_exceptions=False)
    server = json.loads(result.output)["provider_status"]["details"]["server"]
    assert "unreachable" in server and "chroma run --path" in server

    _use(hermes_home, {"embedder": "hash"})  # embedded: no server, no token to miss
    result = CliRunner().invoke(cli, ["memory", "status", "--json"], catch_exceptions=False)
    info = json.loads(result.output)["provider_status"]
    assert info["details"] == {"mode": "embedded", "location": str(hermes_home / "chroma")}
    assert info["secrets"] == []


# ------------------------------------------------------------------ outbox while the server is down

ALICE_TURNS = [
    ("My locker code is 4417.", "Noted."),
    ("My bike is a green Brompton.", "Nice bike."),
    ("I am allergic to peanuts.", "I will remember that."),
]
BOB_TURNS = [
    ("我的猫叫小橘。", "好名字。"),
    ("我住在杭州西湖边。", "真不错。"),
]


def _sync_all(
    provider: ChromaProvider, session: SessionInfo, turns: list[tuple[str, str]], start: int = 1
) -> None:
    """Sync ``turns`` (user text, reply) as turns ``start``, ``start + 1``… of ``session``."""
    for number, (user_text, reply) in enumerate(turns, start=start):
        provider.sync(session, make_turn(user_text, reply, number=number))


def _contents(provider: ChromaProvider, user: str) -> list[str]:
    return [m.content for m in provider.store.list_memories(user)]


def test_turns_while_the_server_is_down_wait_in_the_outbox_and_arrive_once(
    hermes_home: Path, losable: LosableServer, session_for: SessionFor
) -> None:
    provider = losable.provider
    alice, bob = session_for("alice", "sa"), session_for("bob", "sb")
    provider.sync(alice, make_turn(*ALICE_TURNS[0], number=1))  # opens the store
    losable.server.stop()
    _sync_all(provider, alice, ALICE_TURNS[1:], start=2)  # nothing raises
    _sync_all(provider, bob, BOB_TURNS, start=1)
    with pytest.raises(ServiceUnavailable):  # recall: a skip the host counts
        provider.prefetch(alice, "What bike do I ride?")
    assert provider.outbox_waiting() == {"alice": 2, "bob": 2}
    # session end while down: nothing raises; bob's compacted chunk waits too
    provider.on_session_end(bob, [])
    assert provider.outbox_waiting() == {"alice": 2, "bob": 3}
    checks = {c.name: c for c in provider.health_check(hermes_home)}
    assert not checks["chroma: mode"].ok
    outbox = checks["chroma: outbox"]
    assert not outbox.ok and outbox.detail.startswith("5 memories of 2 user(s) wait")
    assert "chroma run" in outbox.fix
    # keyword recall sees the waiting rows at once (the keyword index is local)
    assert any(provider.store.fts.search("bob", "小橘", 5))

    losable.restart()
    ctx = provider.prefetch(alice, "What bike do I ride?")  # retries, then recalls
    assert ctx is not None and "Brompton" in ctx.text and "小橘" not in ctx.text
    assert provider.outbox_waiting() == {}
    alice_rows, bob_rows = _contents(provider, "alice"), _contents(provider, "bob")
    for user_text, reply in ALICE_TURNS:
        assert alice_rows.count(f"user: {user_text}\nassistant: {reply}") == 1
    assert not any("小橘" in c or "杭州" in c for c in alice_rows)
    assert not any("4417" in c or "Brompton" in c for c in bob_rows)
    bob_all = provider.store.list_memories("bob", include_superseded=True)
    assert sorted(m.content for m in bob_all if m.id.startswith("dlg_")) == sorted(
        f"user: {u}\nassistant: {r}" for u, r in BOB_TURNS
    )
    assert len([m for m in bob_all if m.source == "compaction-fallback"]) == 1
    assert {m.user_id for m in bob_all} == {"bob"}
    zh = provider.prefetch(bob, "我的猫叫什么名字？")
    assert zh is not None and "小橘" in zh.text and "4417" not in zh.text
    assert {c.name: c for c in provider.health_check(hermes_home)}["chroma: outbox"].ok


def test_a_process_that_starts_while_the_server_is_down_keeps_its_turns(
    hermes_home: Path,
    private_server: Callable[..., ChromaServer],
    session_for: SessionFor,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The store opens on its local outbox when the server cannot be reached at start; the
    first recall after the server is up connects and writes every row once, users apart."""
    monkeypatch.setattr(server_mod, "BREAKER_COOLDOWN", 0.0)  # probe again at once
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    provider = ChromaProvider(_server_settings(url), hermes_home)
    alice, bob = session_for("alice", "sa"), session_for("bob", "sb")
    try:
        _sync_all(provider, alice, ALICE_TURNS, start=1)  # nothing raises
        _sync_all(provider, bob, BOB_TURNS, start=1)
        with pytest.raises(ServiceUnavailable):  # recall: a skip the host counts
            provider.prefetch(alice, "What bike do I ride?")
        assert provider.outbox_waiting() == {"alice": 3, "bob": 2}
        assert any(provider.store.fts.search("bob", "小橘", 5))
        assert not any(provider.store.fts.search("alice", "小橘", 5))

        private_server(port=port)
        ctx = provider.prefetch(alice, "What bike do I ride?")  # connects, flushes, recalls
        assert ctx is not None and "Brompton" in ctx.text and "小橘" not in ctx.text
        assert provider.outbox_waiting() == {}
        alice_rows, bob_rows = _contents(provider, "alice"), _contents(provider, "bob")
        assert sorted(alice_rows) == sorted(f"user: {u}\nassistant: {r}" for u, r in ALICE_TURNS)
        assert sorted(bob_rows) == sorted(f"user: {u}\nassistant: {r}" for u, r in BOB_TURNS)
        zh = provider.prefetch(bob, "我的猫叫什么名字？")
        assert zh is not None and "小橘" in zh.text and "4417" not in zh.text
    finally:
        provider.shutdown()


def test_a_refused_token_at_start_still_raises(
    hermes_home: Path, token_proxy: tuple[TokenProxy, str]
) -> None:
    """Only an unreachable server opens the store on the outbox: a wrong token raises."""
    _proxy, url = token_proxy
    provider = ChromaProvider(_server_settings(url, token="wrong-token-1"), hermes_home)
    try:
        with pytest.raises(ServiceAuthError):
            provider.store  # noqa: B018
    finally:
        provider.shutdown()


_EXIT_WHILE_DOWN = """
import os, signal, sys, time, urllib.request
from pathlib import Path
from hermes_core.testing.fakes import make_session_info, make_turn
from hermes_memory_chroma.provider import ChromaProvider
from hermes_memory_chroma.settings import ChromaSettings

url, home, server_pid = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
provider = ChromaProvider(ChromaSettings(mode="server", url=url, embedder="hash"), home)
alice = make_session_info(home, session_id="pa", user_id="alice")
bob = make_session_info(home, session_id="pb", user_id="bob")
provider.sync(alice, make_turn("My passport number ends in 3321.", "Noted.", number=1))
os.kill(server_pid, signal.SIGTERM)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    try:
        urllib.request.urlopen(url + "/api/v2/heartbeat", timeout=1).close()
        time.sleep(0.2)
    except OSError:
        break
provider.sync(alice, make_turn("My dentist is Dr. Okafor.", "Noted.", number=2))
provider.sync(bob, make_turn("我的车牌号是浙A8812。", "记住了。", number=1))
provider.shutdown()  # the server is down: the rows stay in fts.db
os._exit(0)
"""


def test_a_process_that_exits_while_the_server_is_down_leaves_rows_the_next_one_writes(
    hermes_home: Path, private_server: Callable[..., ChromaServer]
) -> None:
    first = private_server()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _EXIT_WHILE_DOWN,
            first.url,
            str(hermes_home),
            str(first.process.pid),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    first.process.wait(timeout=30)
    later = ChromaProvider(_server_settings(first.url), hermes_home)
    try:
        assert later.outbox_waiting() == {"alice": 1, "bob": 1}
        with pytest.raises(ServiceUnavailable):
            later.store.list_memories("alice")  # the server is still down
        private_server(port=int(urlsplit(first.url).port or 0))
    finally:
        later.shutdown()
    nxt = ChromaProvider(_server_settings(first.url), hermes_home)
    try:
        checks = {c.name: c for c in nxt.health_check(hermes_home)}  # opens and writes
        assert checks["chroma: outbox"].ok, checks["chroma: outbox"]
        assert nxt.outbox_waiting() == {}
        alice_rows, bob_rows = _contents(nxt, "alice"), _contents(nxt, "bob")
        assert sorted(alice_rows) == [
            "user: My dentist is Dr. Okafor.\nassistant: Noted.",
            "user: My passport number ends in 3321.\nassistant: Noted.",
        ]
        assert bob_rows == ["user: 我的车牌号是浙A8812。\nassistant: 记住了。"]
    finally:
        nxt.shutdown()


def test_a_refused_token_is_raised_not_queued(
    hermes_home: Path, token_proxy: tuple[TokenProxy, str]
) -> None:
    """Only an unavailable server queues a write: a token the server stops accepting is an
    error the user must fix, raised as before, with nothing left waiting."""
    proxy, url = token_proxy
    database = "rot" + str(free_port())
    provider = ChromaProvider(_server_settings(url, token=TOKEN, database=database), hermes_home)
    try:
        provider.store.add("alice", "Alice's tea is oolong.")
        proxy.token = "rotated-token-9"  # the proxy now wants another token
        with pytest.raises(ServiceAuthError):
            provider.store.add("alice", "Alice's coffee is a flat white.")
        assert provider.outbox_waiting() == {}
        with pytest.raises(ValueError, match="empty"):
            provider.store.add("alice", "   ")
    finally:
        provider.shutdown()

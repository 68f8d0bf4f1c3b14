"""PostgreSQL plumbing shared by every part of hermes-core that can keep its data on a server.

Generic on purpose (no table, no layer): a layer that stores something in PostgreSQL opens
its pool here, runs its migrations here and turns connection failures into one clear error
here, so every backend behaves alike when the server is down.

* :func:`redact_url` — a connection URL (or ``key=value`` conninfo) with the password
  replaced by ``***``: the only form of a URL that may be printed or logged.
* :func:`require_driver` — imports psycopg 3 and psycopg-pool, or raises
  :class:`DatabaseUnavailable` naming ``pip install 'hermes-memory-core[postgresql]'``.
* :func:`get_pool` — one :class:`psycopg_pool.ConnectionPool` per (process, URL, options):
  created on first use, checked on checkout (a restarted server is reconnected silently),
  closed at exit. Pools are never shared across ``fork()``: a child gets its own. The pool's
  own per-attempt connection warnings are lowered to ERROR (unless that logger is configured).
* :func:`close_pool` — release one pool's connections now (the next use opens a new one).
* :func:`connection` — a pooled connection as a context manager; a server that cannot be
  reached raises :class:`DatabaseUnavailable` whose message names the redacted URL, the
  driver's own reason and the fix. Connection attempts are retried (``attempts``) first.
* :func:`migrate` — applies numbered schema steps once per database, recorded in the table
  ``hermes_schema_versions (component, version)``; concurrent callers serialise on an
  advisory lock, so many hosts starting at once apply each step exactly once.
* :func:`advisory_key` — a stable signed 64-bit key for ``pg_advisory_xact_lock`` from any
  strings (e.g. component + user + file): the same on every host and every Python run.

Contract: nothing here prints or logs a password; every failure to reach the server is a
:class:`DatabaseUnavailable` (a :class:`~hermes_core.errors.HermesError`), never a bare driver
exception.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hermes_core.errors import HermesError

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'hermes-memory-core[postgresql]'"
"""The install command for the PostgreSQL driver (psycopg 3 + psycopg-pool)."""

VERSIONS_TABLE = "hermes_schema_versions"
"""Where :func:`migrate` records the schema version of each component."""

DEFAULT_TIMEOUT = 10.0
"""Seconds to wait for a pooled connection (and the default statement timeout)."""

FIRST_WAIT = 1.0
"""Seconds :func:`connection` waits for the pool before checking the server directly."""

_PASSWORD_KV = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)
_USERINFO_PASSWORD = re.compile(r"(://[^:/?#@\s\"']*:)[^\s\"']*@")
"""``scheme://user:PASSWORD@`` found by pattern: for URLs :func:`urlsplit` rejects (an
unclosed IPv6 bracket, …) and for URLs quoted inside a driver's error message."""


class DatabaseUnavailable(HermesError):
    """The PostgreSQL server (or its driver) cannot be used; the message names the fix.

    ``url`` is the redacted URL; ``reason`` the driver's own words."""

    def __init__(self, message: str, *, url: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.reason = reason


class DriverMissing(DatabaseUnavailable):
    """psycopg (or psycopg_pool) is not installed: the fix is :data:`INSTALL_HINT`, not the
    server."""


def is_postgres_url(url: str) -> bool:
    """True for ``postgresql://…`` / ``postgres://…`` URLs (what the settings accept)."""
    return url.strip().lower().startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """``url`` with its password (URL userinfo or a ``password=`` parameter) as ``***``.

    Works on URLs and on ``key=value`` conninfo strings; text that parses as neither is
    returned with any ``password=`` value masked."""
    text = _PASSWORD_KV.sub(lambda m: m.group(1) + "***", url)
    if "://" not in text:
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return _USERINFO_PASSWORD.sub(lambda m: m.group(1) + "***@", text)
    netloc = parts.netloc
    userinfo, at, hostinfo = netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return text  # no password in the URL itself (kept byte for byte)
    user = userinfo.split(":", 1)[0]
    return urlunsplit(
        (parts.scheme, f"{user}:***@{hostinfo}", parts.path, parts.query, parts.fragment)
    )


def require_driver() -> tuple[Any, Any]:
    """``(psycopg, psycopg_pool)``, or :class:`DriverMissing` naming the install."""
    try:
        psycopg = importlib.import_module("psycopg")
        pool = importlib.import_module("psycopg_pool")
    except ImportError as exc:
        raise DriverMissing(
            f"PostgreSQL support is not installed ({exc}). Install it with `{INSTALL_HINT}`, "
            "or switch back to the embedded default in config.yaml.",
            reason=str(exc),
        ) from exc
    return psycopg, pool


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory-lock key for ``parts`` (stable across hosts and runs)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class PoolOptions:
    """How a pool connects. ``timeout``: seconds to wait for a connection (and the
    ``connect_timeout``); ``statement_timeout``: seconds any one statement may run (0 = no
    limit); ``max_size``: connections per process; ``settings``: further server settings
    given at connect time as ``-c name=value`` (e.g. ``(("search_path", "a,public"),)``;
    names and values must be plain words, commas, dots or underscores); ``configure``: called
    with each new connection (a module-level function, so equal options share one pool;
    its errors are the caller's to suppress)."""

    timeout: float = DEFAULT_TIMEOUT
    statement_timeout: float = DEFAULT_TIMEOUT
    max_size: int = 4
    application_name: str = "hermes-core"
    settings: tuple[tuple[str, str], ...] = ()
    configure: Callable[[Any], None] | None = None

    def __post_init__(self) -> None:
        for name, value in self.settings:
            if not (_SETTING_WORD.fullmatch(name) and _SETTING_WORD.fullmatch(value)):
                raise ValueError(f"PoolOptions.settings: {name!r}={value!r} is not plain words")


_SETTING_WORD = re.compile(r"[A-Za-z0-9_.,/+-]+")


_POOLS: dict[tuple[int, str, PoolOptions], Any] = {}
_POOLS_LOCK = threading.Lock()


def get_pool(url: str, options: PoolOptions | None = None) -> Any:
    """The process's :class:`psycopg_pool.ConnectionPool` for ``url`` (created on first use).

    Opening does not wait for the server: a server that is down surfaces on checkout
    (:func:`connection`), as :class:`DatabaseUnavailable`."""
    _, pool_module = require_driver()
    _quiet_pool_log()
    opts = options or PoolOptions()
    key = (os.getpid(), url, opts)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is not None:
            return pool
        for stale in [k for k in _POOLS if k[0] != key[0]]:
            _POOLS.pop(stale)  # inherited through fork(): never touch the parent's sockets
        kwargs: dict[str, Any] = {
            "connect_timeout": max(1, int(opts.timeout)),
            "application_name": opts.application_name,
            "autocommit": True,
        }
        settings = list(opts.settings)
        if opts.statement_timeout > 0:
            settings.insert(0, ("statement_timeout", str(int(opts.statement_timeout * 1000))))
        if settings:
            kwargs["options"] = " ".join(f"-c {name}={value}" for name, value in settings)
        pool = pool_module.ConnectionPool(
            url,
            min_size=0,
            max_size=max(1, opts.max_size),
            kwargs=kwargs,
            timeout=opts.timeout,
            check=pool_module.ConnectionPool.check_connection,
            configure=opts.configure,
            num_workers=1,
            open=True,
            name=f"hermes-{len(_POOLS)}",
        )
        _POOLS[key] = pool
        return pool


def _quiet_pool_log() -> None:
    """psycopg-pool logs a WARNING for every failed background connection attempt; the caller
    already gets one :class:`DatabaseUnavailable` naming the fix, so those repeats go to
    ERROR only — unless the application configured that logger itself."""
    pool_log = logging.getLogger("psycopg.pool")
    if pool_log.level == logging.NOTSET:
        pool_log.setLevel(logging.ERROR)


def close_pool(url: str, options: PoolOptions | None = None) -> None:
    """Close and forget this process's pool for ``(url, options)`` (no-op when none), so its
    idle connections are released now (e.g. before the database is dropped). The next
    :func:`get_pool` for the same key opens a new pool; a connection checked out of the old
    one keeps working until it is returned."""
    key = (os.getpid(), url, options or PoolOptions())
    with _POOLS_LOCK:
        pool = _POOLS.pop(key, None)
    if pool is not None:
        try:
            pool.close(timeout=1.0)
        except Exception as exc:  # releasing must never raise
            log.debug("closing a PostgreSQL pool failed: %s", exc)


def close_pools() -> None:
    """Close this process's pools (called at exit; safe to call any time)."""
    with _POOLS_LOCK:
        mine = [k for k in _POOLS if k[0] == os.getpid()]
        pools = [_POOLS.pop(k) for k in mine]
    for pool in pools:
        try:
            pool.close(timeout=1.0)
        except Exception as exc:  # closing at exit must never raise
            log.debug("closing a PostgreSQL pool failed: %s", exc)


atexit.register(close_pools)


def unavailable(
    url: str, exc: BaseException, *, setting: str, fallback: str = ""
) -> DatabaseUnavailable:
    """The :class:`DatabaseUnavailable` for ``exc`` raised while reaching ``url``, worded by
    what went wrong: a login refused (user, password, pg_hba), a database that does not
    exist, a URL the driver cannot use, or else a server that cannot be reached.

    ``setting`` names where the URL is configured (e.g. ``memory.url``); ``fallback`` is an
    optional last sentence (e.g. how to go back to the embedded store)."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    shown = redact_url(url)
    said = redact_text(reason, url)
    where = f"{setting} (kept in $HERMES_HOME/.env)"
    if _LOGIN_REFUSED.search(reason):
        message = (
            f"PostgreSQL at {shown} refused the login ({said}). Fix the user or password in "
            f"{where}, or let that user connect on the server, then retry."
        )
    elif _NO_DATABASE.search(reason):
        message = (
            f"PostgreSQL at {shown} has no such database ({said}). Create it on the server "
            f"(`createdb NAME`) or fix the database name in {where}, then retry."
        )
    elif _BAD_URL.search(reason):
        message = f"{setting} is not a valid connection URL: {shown} ({said}). Fix it in {where}."
    else:
        message = (
            f"PostgreSQL at {shown} is unreachable ({said}). Start the server or fix {where}, "
            "then retry."
        )
    if fallback:
        message += f" {fallback}"
    return DatabaseUnavailable(message, url=shown, reason=redact_text(reason, url))


_LOGIN_REFUSED = re.compile(
    r'authentication failed|no password supplied|pg_hba\.conf|role "[^"]*" does not exist',
    re.IGNORECASE,
)
_NO_DATABASE = re.compile(r'database "[^"]*" does not exist')
_BAD_URL = re.compile(
    r'invalid [\w ]*value|invalid connection option|missing "="|end of string reached'
    r"|invalid percent-encoded token|invalid URI",
    re.IGNORECASE,
)
"""The driver's words for a URL it cannot parse (not "invalid response to SSL negotiation")."""


def redact_text(text: str, url: str) -> str:
    """``text`` (e.g. a driver's error message) with the password of ``url`` (if any) and
    any URL or ``password=`` password in it masked wherever it occurs."""
    try:
        password = urlsplit(url).password if "://" in url else None
    except ValueError:
        password = None
    text = _PASSWORD_KV.sub(lambda m: m.group(1) + "***", text)
    text = _USERINFO_PASSWORD.sub(lambda m: m.group(1) + "***@", text)
    return text.replace(password, "***") if password else text


def _diagnose(url: str, opts: PoolOptions) -> BaseException | None:
    """The driver's own error for a direct connection to ``url`` (None: it connects)."""
    psycopg, _ = require_driver()
    try:
        with psycopg.connect(url, connect_timeout=max(1, int(opts.timeout))):
            return None
    except Exception as exc:
        return exc


@contextmanager
def connection(
    url: str,
    *,
    setting: str,
    options: PoolOptions | None = None,
    attempts: int = 2,
    fallback: str = "",
) -> Iterator[Any]:
    """A pooled connection to ``url`` (returned to the pool on exit; a transaction left open
    by the body is rolled back, one the body committed stays).

    When no pooled connection comes within :data:`FIRST_WAIT` seconds, one direct connection
    is tried: if it fails too, :class:`DatabaseUnavailable` (see :func:`unavailable`) is
    raised at once with its reason (a server that is down, a wrong password or database costs
    one connect, not ``attempts`` pool timeouts). Otherwise getting the connection is
    retried ``attempts`` times before the same error. Errors raised
    by the body propagate unchanged."""
    psycopg, pool_module = require_driver()
    opts = options or PoolOptions()
    pool = get_pool(url, opts)
    failures = (pool_module.PoolTimeout, psycopg.OperationalError)
    last: BaseException | None = None
    conn: Any = None
    try:
        conn = pool.getconn(timeout=min(opts.timeout, FIRST_WAIT))
    except failures as exc:
        # No connection at hand quickly: ask the server directly. When that fails too the
        # server is down (or refuses us): say so now instead of waiting out every attempt.
        cause = _diagnose(url, opts)
        if cause is not None:
            raise unavailable(url, cause, setting=setting, fallback=fallback) from exc
    for attempt in range(max(1, attempts) if conn is None else 0):
        try:
            conn = pool.getconn(timeout=opts.timeout)
            break
        except failures as exc:
            last = exc
            if attempt + 1 < attempts:
                time.sleep(min(0.2 * (attempt + 1), 1.0))
    if conn is None:
        assert last is not None
        cause = _diagnose(url, opts) or last
        raise unavailable(url, cause, setting=setting, fallback=fallback) from last
    try:
        yield conn
    finally:
        pool.putconn(conn)


def migrate(conn: Any, component: str, steps: Sequence[str], *, lock_key: int | None = None) -> int:
    """Bring ``component``'s schema to ``len(steps)`` on ``conn``; returns the version.

    Step ``i`` (1-based) is SQL run once per database, inside one transaction with the
    version bump, under an advisory lock (``lock_key``, default derived from ``component``)
    so concurrent hosts never race. A database newer than ``steps`` is left alone. A database
    already up to date runs no DDL and writes nothing, so a role with only table privileges
    (the owner created the schema once) can use it."""
    key = advisory_key("hermes-migrate", component) if lock_key is None else lock_key
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
        found = conn.execute("SELECT to_regclass(%s)", (VERSIONS_TABLE,)).fetchone()
        if found is None or found[0] is None:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {VERSIONS_TABLE} ("
                "component TEXT PRIMARY KEY, version INTEGER NOT NULL, "
                "updated_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
        row = conn.execute(
            f"SELECT version FROM {VERSIONS_TABLE} WHERE component = %s", (component,)
        ).fetchone()
        current = int(row[0]) if row else 0
        if current >= len(steps):
            return current  # up to date: no DDL, so a user without CREATE can use it
        for number, sql in enumerate(steps, start=1):
            if number <= current:
                continue
            conn.execute(sql)
            current = number
        conn.execute(
            f"INSERT INTO {VERSIONS_TABLE} (component, version) VALUES (%s, %s) "
            "ON CONFLICT (component) DO UPDATE SET version = GREATEST("
            f"{VERSIONS_TABLE}.version, EXCLUDED.version), updated_at = now()",
            (component, current),
        )
    return current


__all__ = [
    "DEFAULT_TIMEOUT",
    "FIRST_WAIT",
    "INSTALL_HINT",
    "VERSIONS_TABLE",
    "DatabaseUnavailable",
    "DriverMissing",
    "PoolOptions",
    "advisory_key",
    "close_pool",
    "close_pools",
    "connection",
    "get_pool",
    "is_postgres_url",
    "migrate",
    "redact_text",
    "redact_url",
    "require_driver",
    "unavailable",
]

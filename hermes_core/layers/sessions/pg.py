"""The session archive on a PostgreSQL server (``sessions.backend: postgresql``).

Same behaviour as the SQLite archive (:class:`~.archive.ArchiveBase` holds it), for fleets
that share one archive: a gateway serving many chats, several worker hosts, a team.

Contract:

* Connections come from :mod:`hermes_core.pg`, the plumbing every PostgreSQL store shares:
  its pool (one per process, URL and options; fork-safe; checked on checkout), its checkout
  (:func:`hermes_core.pg.connection`: a server that is down, a refused login or a missing
  database is diagnosed with one direct connect and worded by
  :func:`hermes_core.pg.unavailable`) and its redaction. Every statement runs under
  ``statement_timeout`` (``sessions.statement_timeout_s``, a pool option); a query cancelled
  by it raises :class:`SessionStoreBusy` naming the setting. :meth:`PostgresSessionDB.close`
  releases the pool's connections (:func:`hermes_core.pg.close_pool`).
* Writes run in a transaction committed before the method returns. A transaction that fails
  with a serialization failure, a deadlock or a lost connection *before* its ``COMMIT`` is
  retried (jittered, up to :data:`RETRY_ATTEMPTS` times); a connection lost *during*
  ``COMMIT`` raises :class:`SessionStoreError` (the outcome is unknown; a resent turn is
  recognised by its turn key).
* The server unreachable or the URL wrong raises :class:`SessionStoreUnusable` with
  :func:`hermes_core.pg.unavailable`'s message (the fix named, ``HERMES_SESSIONS__URL`` and
  the way back to SQLite added). The URL's password is never printed: messages, logs and
  ``stats`` carry :func:`hermes_core.pg.redact_url` / :func:`hermes_core.pg.redact_text`.
* PostgreSQL text cannot hold NUL characters: they are stored as U+FFFD.
* The schema and its migrations: :mod:`.pg_schema`; full-text search: :mod:`.pg_fts`.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from hermes_core.layers.sessions.archive import ArchiveBase
from hermes_core.layers.sessions.errors import (
    SessionStoreBusy,
    SessionStoreError,
    SessionStoreUnusable,
)
from hermes_core.layers.sessions.ingest import INSERT_COLUMNS, MessageRow, indexed_text
from hermes_core.layers.sessions.pg_fts import (
    BODY_WEIGHT,
    META_WEIGHT,
    Phrase,
    bm25,
    idf,
    index_words,
    phrases,
    to_tsquery_text,
)
from hermes_core.layers.sessions.pg_schema import (
    PG_SCHEMA_VERSION,
    TS_CONFIG,
    migrate,
    read_version,
)
from hermes_core.layers.sessions.records import UserScope, scope_sql
from hermes_core.layers.sessions.schema import index_batches
from hermes_core.pg import (
    DatabaseUnavailable,
    PoolOptions,
    close_pool,
    connection,
    redact_text,
    redact_url,
    require_driver,
    unavailable,
)
from hermes_core.text import like_escape

T = TypeVar("T")

URL_ENV = "HERMES_SESSIONS__URL"
SETTING = "sessions.url"
FALLBACK = (
    "It is HERMES_SESSIONS__URL=postgresql://user:password@host:5432/hermes in "
    "$HERMES_HOME/.env (or switch back with sessions.backend: sqlite in "
    "$HERMES_HOME/config.yaml)."
)
"""The last sentence of every "cannot reach the server" error (after the shared wording)."""
RETRY_ATTEMPTS = 8
RETRY_JITTER_S = (0.020, 0.150)
TOTALS_RECOUNT_S = 300.0
"""How often the index's row and token totals are counted in full (see ``_totals_now``)."""
COUNT_CACHE_S = 2.0
"""How long :meth:`PostgresSessionDB.fts_count` remembers a count (see there)."""
_IDENT = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_TSVECTOR_SQL = (
    f"setweight(to_tsvector('{TS_CONFIG}', ?), '{BODY_WEIGHT}') || "
    f"setweight(to_tsvector('{TS_CONFIG}', ?), '{META_WEIGHT}')"
)


@lru_cache(maxsize=512)
def pg_sql(sql: str) -> str:
    """Portable SQL (``?`` placeholders) in psycopg's form (``%s``, literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _param(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _params(params: Sequence[Any] | Mapping[str, Any]) -> Any:
    if isinstance(params, Mapping):
        return {k: _param(v) for k, v in params.items()}
    return [_param(v) for v in params]


class _Conn:
    """A psycopg connection that takes the archive's portable SQL (``?`` placeholders)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        return self.raw.execute(pg_sql(sql), _params(params))


def _vector(entries: Any) -> dict[str, list[tuple[int, str]]]:
    """``{lexeme: [(position, weight)]}`` from ``[[lexeme, positions, weights], …]``."""
    out: dict[str, list[tuple[int, str]]] = {}
    for lexeme, positions, weights in entries or ():
        out[str(lexeme)] = list(zip((int(p) for p in positions or ()), weights or (), strict=False))
    return out


def _local_timezone() -> str | None:
    """The IANA name of this machine's time zone (months in queries are local, as in
    SQLite's ``'localtime'``), or ``None`` when unknown."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    with contextlib.suppress(OSError):
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            return target.split("zoneinfo/", 1)[1]
    return None


def _set_local_timezone(conn: Any) -> None:
    """Each new pooled connection's ``TimeZone``: this machine's (a name the server does
    not know leaves the server's default)."""
    tz = _local_timezone()
    if tz:
        psycopg, _ = require_driver()
        with contextlib.suppress(psycopg.Error):
            conn.execute("SELECT set_config('TimeZone', %s, false)", (tz,))


class PostgresSessionDB(ArchiveBase):
    """The archive in the PostgreSQL database at ``url``. Close with :meth:`close`."""

    backend = "postgresql"
    SEQ = "s.seq"
    LIKE_CI = "ILIKE"
    UNINDEXED = ""

    def __init__(
        self,
        url: str,
        *,
        index_char_cap: int = 8192,
        redact_secrets: bool = True,
        statement_timeout_s: float = 30.0,
        pool_size: int = 8,
        schema: str | None = None,
    ) -> None:
        super().__init__()
        if schema is not None and not _IDENT.fullmatch(schema):
            raise SessionStoreUnusable(
                f"schema {schema[:80]!r} is not a plain lower-case identifier (a-z, 0-9, _)"
            )
        self.schema = schema
        try:
            psycopg, _ = require_driver()
        except DatabaseUnavailable as exc:
            raise SessionStoreUnusable(f"sessions.backend is postgresql but {exc}") from exc
        self._psycopg = psycopg
        if not isinstance(url, str) or not url.strip():
            raise SessionStoreUnusable(
                "sessions.backend is postgresql but sessions.url is empty; set "
                "HERMES_SESSIONS__URL=postgresql://user:password@host:5432/hermes in "
                "$HERMES_HOME/.env (or switch back: sessions.backend: sqlite in "
                "$HERMES_HOME/config.yaml)"
            )
        self.url = url.strip()
        self.display_url = redact_url(self.url)
        self.configured_index_char_cap = index_char_cap
        self.index_char_cap = index_char_cap
        self.redact_secrets = redact_secrets
        self.statement_timeout_s = statement_timeout_s
        self._local = threading.local()
        self._lexemes: dict[str, tuple[str, ...]] = {}
        self._totals: tuple[int, int, int, int, float] | None = None
        self._deletes = 0
        self._counts: dict[tuple[str, int, int | None], tuple[float, int]] = {}
        self._options = PoolOptions(
            timeout=max(10.0, statement_timeout_s),
            statement_timeout=max(0.001, statement_timeout_s),
            max_size=max(1, pool_size),
            application_name="hermes-core",
            settings=(("search_path", f"{schema},public"),) if schema else (),
            configure=_set_local_timezone,
        )
        try:
            with self._connection() as probe:
                if schema:
                    probe.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
                version = migrate(probe)
                self._load_meta(probe, version)
        except psycopg.Error as exc:
            raise self._open_error(exc) from exc
        if version > PG_SCHEMA_VERSION:
            self.read_only_reason = (
                f"the archive at {self.display_url} has schema {version}, newer than this "
                f"hermes-core knows ({PG_SCHEMA_VERSION}); it is opened read-only. Upgrade "
                "hermes-core (pip install -U hermes-memory-core)"
            )
        self.fts_enabled = True
        self.fts_error = None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection (:func:`hermes_core.pg.connection`); the server unreachable, a
        refused login or a missing database raise :class:`SessionStoreUnusable` with the
        shared wording and this archive's fix."""
        try:
            checkout = connection(
                self.url, setting=SETTING, options=self._options, fallback=FALLBACK
            )
            raw = checkout.__enter__()
        except DatabaseUnavailable as exc:
            raise SessionStoreUnusable(str(exc)) from exc
        try:
            yield raw
        except BaseException as exc:
            if not checkout.__exit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            checkout.__exit__(None, None, None)

    def _open_error(self, exc: Exception) -> SessionStoreUnusable:
        """Why the archive could not be opened, with the fix (password masked)."""
        detail = redact_text(str(exc).strip(), self.url)
        errors = self._psycopg.errors
        if isinstance(exc, errors.InsufficientPrivilege):
            return SessionStoreUnusable(
                f"cannot prepare the archive in {self.display_url}: {detail}; give the user of "
                "sessions.url the right to create tables there (GRANT CREATE ON SCHEMA "
                "public …), or start hermes once as the database's owner"
            )
        if isinstance(exc, self._psycopg.OperationalError):
            return SessionStoreUnusable(str(self._unavailable(exc)))
        return SessionStoreUnusable(
            f"cannot prepare the archive in {self.display_url}: {detail}; fix it on the server "
            f"or in {SETTING} ({URL_ENV} in $HERMES_HOME/.env)"
        )

    def _unavailable(self, exc: BaseException) -> DatabaseUnavailable:
        return unavailable(self.url, exc, setting=SETTING, fallback=FALLBACK)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> PostgresSessionDB:
        """Open the archive at ``url`` (see :class:`PostgresSessionDB`)."""
        return cls(url, **kwargs)

    def _load_meta(self, conn: Any, version: int) -> None:
        """The cap the index was built with: recorded on first use, changed by
        :meth:`reindex` (as on SQLite, so both backends index the same text)."""
        if version <= PG_SCHEMA_VERSION:
            conn.execute(
                "INSERT INTO state_meta(key, value) VALUES ('fts_char_cap', %s) "
                "ON CONFLICT (key) DO NOTHING",
                (str(int(self.configured_index_char_cap)),),
            )
        row = conn.execute("SELECT value FROM state_meta WHERE key='fts_char_cap'").fetchone()
        with contextlib.suppress(TypeError, ValueError):
            if row:
                self.index_char_cap = int(row[0])

    @property
    def location(self) -> str:
        """The redacted URL (never the password)."""
        return self.display_url

    # -- connections ---------------------------------------------------------------

    def drop_schema(self) -> None:
        """Close the pool and drop this archive's own schema with everything in it (only for
        an archive opened with ``schema=``: benchmarks and tests)."""
        if not self.schema:
            raise SessionStoreError("drop_schema() needs an archive opened with schema=")
        with self._connection() as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        self.close()

    def close(self) -> None:
        """Release the pool's connections (idempotent; see :func:`hermes_core.pg.close_pool`:
        another archive object on the same URL and options opens a new pool on next use)."""
        options = getattr(self, "_options", None)
        if options is not None:
            close_pool(self.url, options)

    def _error(self, exc: Exception) -> Exception:
        """The archive's error for a psycopg/pool failure (message redacted, fix named)."""
        errors = self._psycopg.errors
        if isinstance(exc, errors.QueryCanceled):
            return SessionStoreBusy(
                f"a query on {self.display_url} ran longer than sessions.statement_timeout_s "
                f"({self.statement_timeout_s:g}s); raise it (sessions.statement_timeout_s in "
                "$HERMES_HOME/config.yaml, or HERMES_SESSIONS__STATEMENT_TIMEOUT_S=120) or "
                "check the server's load"
            )
        if isinstance(exc, self._psycopg.OperationalError):
            return SessionStoreUnusable(str(self._unavailable(exc)))
        return SessionStoreError(f"PostgreSQL error: {redact_text(str(exc).strip(), self.url)}")

    def _retryable(self, exc: BaseException) -> bool:
        errors = self._psycopg.errors
        if isinstance(exc, errors.SerializationFailure | errors.DeadlockDetected):
            return True
        if isinstance(exc, errors.QueryCanceled):
            return False
        return isinstance(exc, self._psycopg.OperationalError)

    def _run(self, fn: Callable[[Any], T], *, write: bool) -> T:
        """``fn(conn)`` on a pooled connection (in a transaction when ``write``), retried on
        serialization failures, deadlocks and lost connections before the commit."""
        attempt = 0
        while True:
            attempt += 1
            committing = False
            try:
                with self._connection() as raw:
                    if not write:
                        return fn(_Conn(raw))
                    raw.execute("BEGIN")
                    try:
                        result = fn(_Conn(raw))
                    except BaseException:
                        with contextlib.suppress(Exception):
                            raw.execute("ROLLBACK")
                        raise
                    committing = True
                    raw.execute("COMMIT")
                    return result
            except SessionStoreError:
                raise
            except Exception as exc:
                if not isinstance(exc, self._psycopg.Error):
                    raise
                if committing and isinstance(exc, self._psycopg.OperationalError):
                    raise SessionStoreError(
                        f"the connection to {self.display_url} was lost while committing; the "
                        "write may or may not be stored (a resent turn is recognised by its key)"
                    ) from exc
                if not self._retryable(exc) or attempt >= RETRY_ATTEMPTS:
                    raise self._error(exc) from exc
                time.sleep(random.uniform(*RETRY_JITTER_S) * attempt)

    def read(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Any]:
        """Run a read-only query (portable SQL, ``?`` placeholders); returns all rows."""
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is not None:
            return list(conn.execute(sql, params).fetchall())
        return self._run(lambda c: list(c.execute(sql, params).fetchall()), write=False)

    def write(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(conn)`` in a transaction committed before returning (retried as described
        in the module docstring; ``fn`` must be safe to run again)."""
        self._check_writable()
        self._counts.clear()
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is not None:
            return fn(conn)  # inside transaction(): committed (or not) with the rest
        try:
            return self._run(fn, write=True)
        finally:
            self._counts.clear()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Group this thread's writes into one transaction, committed when the block ends,
        rolled back when it raises, never committed if the process dies first."""
        self._check_writable()
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        pooled = self._connection()
        raw = pooled.__enter__()
        try:
            try:
                raw.execute("BEGIN")
            except self._psycopg.Error as exc:
                raise self._error(exc) from exc
            self._local.conn = _Conn(raw)
            try:
                yield
                raw.execute("COMMIT")
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    raw.execute("ROLLBACK")
                if isinstance(exc, self._psycopg.Error):
                    raise self._error(exc) from exc
                raise
            finally:
                self._local.conn = None
                self._counts.clear()
        finally:
            pooled.__exit__(None, None, None)

    def has_table(self, name: str) -> bool:
        """Whether the database has a table (or view) called ``name``."""
        rows = self.read("SELECT to_regclass(?) IS NOT NULL", (name,))
        return bool(rows and rows[0][0])

    def schema_version(self) -> int:
        """The schema version recorded in the database."""
        return int(self._run(lambda c: read_version(c.raw), write=False))

    # -- messages and the index ------------------------------------------------------

    def _insert_messages(
        self, conn: Any, rows: Sequence[MessageRow], turn_key: str | None
    ) -> list[int]:
        ids: list[int] = []
        marks = ",".join("?" * (len(INSERT_COLUMNS.split(",")) + 1))
        sql = (
            f"INSERT INTO messages({INSERT_COLUMNS}, turn_key, fts, fts_len) "
            f"VALUES ({marks}, {_TSVECTOR_SQL}, ?) RETURNING id"
        )
        for position, row in enumerate(rows):
            body, meta = index_words(row.body), index_words(row.meta)
            got = conn.execute(
                sql,
                (
                    *row.values,
                    turn_key if position == 0 else None,
                    " ".join(body),
                    " ".join(meta),
                    len(body) + len(meta),
                ),
            ).fetchone()
            ids.append(int(got[0]))
        return ids

    def _index_message(self, conn: Any, message_id: int, body: str, meta: str) -> None:
        body_words, meta_words = index_words(body), index_words(meta)
        conn.execute(
            f"UPDATE messages SET fts = {_TSVECTOR_SQL}, fts_len = ? WHERE id = ?",
            (
                " ".join(body_words),
                " ".join(meta_words),
                len(body_words) + len(meta_words),
                message_id,
            ),
        )

    def _after_import(self, conn: Any) -> None:
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('messages', 'id'), "
            "GREATEST((SELECT MAX(id) FROM messages), 1))"
        )

    def delete_sessions(self, session_ids: Sequence[str]) -> int:
        """Delete sessions with their messages (the index lives in the message rows);
        children keep their dangling ``parent_session_id``. Returns messages removed."""
        ids = list(session_ids)
        if not ids:
            return 0

        def do(conn: Any) -> int:
            removed = 0
            for start in range(0, len(ids), 200):
                chunk = ids[start : start + 200]
                marks = ",".join("?" * len(chunk))
                removed += conn.execute(
                    f"DELETE FROM messages WHERE session_id IN ({marks})", chunk
                ).rowcount
                conn.execute(f"DELETE FROM sessions WHERE id IN ({marks})", chunk)
            return removed

        removed = self.write(do)
        self._speakers.clear()
        self._deletes += 1
        return removed

    def reindex(self) -> int:
        """Rebuild every message's index entry with the configured ``index_char_cap``."""

        def do(conn: Any) -> int:
            count = 0
            for rows in index_batches(conn):
                for row in rows:
                    rowid, body_text, meta_text = indexed_text(row, self.configured_index_char_cap)
                    body, meta = index_words(body_text), index_words(meta_text)
                    conn.execute(
                        f"UPDATE messages SET fts = {_TSVECTOR_SQL}, fts_len = ? WHERE id = ?",
                        (" ".join(body), " ".join(meta), len(body) + len(meta), rowid),
                    )
                count += len(rows)
            conn.execute(
                "INSERT INTO state_meta(key, value) VALUES ('fts_char_cap', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(int(self.configured_index_char_cap)),),
            )
            return count

        count = self.write(do)
        self.index_char_cap = self.configured_index_char_cap
        return count

    def stats(self, *, user_id: UserScope) -> dict[str, Any]:
        """Counts of ``user_id``'s scope, the tables' size on the server and the schema."""
        scope, p = scope_sql(user_id)
        sessions = self.read(f"SELECT COUNT(*) FROM sessions WHERE {scope}", p)[0][0]
        messages, compacted = self.read(
            "SELECT COUNT(*), COALESCE(SUM(compacted), 0) FROM messages WHERE session_id IN "
            f"(SELECT id FROM sessions WHERE {scope})",
            p,
        )[0]
        by_source = {
            r[0]: int(r[1])
            for r in self.read(
                f"SELECT source, COUNT(*) FROM sessions WHERE {scope} GROUP BY source", p
            )
        }
        tokens = self.read(
            "SELECT COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0), "
            f"COALESCE(SUM(tool_call_count),0) FROM sessions WHERE {scope}",
            p,
        )[0]
        size = self.read(
            "SELECT pg_total_relation_size('sessions') + pg_total_relation_size('messages')"
        )[0][0]
        return {
            "backend": self.backend,
            "path": self.display_url,
            "schema_version": self.schema_version(),
            "read_only": self.read_only_reason,
            "fts": self.fts_enabled,
            "index_char_cap": self.index_char_cap,
            "sessions": int(sessions),
            "messages": int(messages),
            "compacted_messages": int(compacted),
            "by_source": by_source,
            "input_tokens": int(tokens[0]),
            "output_tokens": int(tokens[1]),
            "tool_calls": int(tokens[2]),
            "size_bytes": int(size or 0),
        }

    # -- full-text search (the same semantics as FTS5: see pg_fts) ---------------------

    def fts_count(self, match: str, floor: int = 0, cap: int | None = None) -> int:
        """Messages matching the FTS5 expression ``match`` with ids above ``floor`` (at most
        ``cap`` when given).

        One ranking asks for the same counts several times (window probe, IDF, coverage):
        they are remembered for :data:`COUNT_CACHE_S` seconds and forgotten at every write
        of this object; another host's rows of the last instant may be missing from an IDF
        estimate, never from the results."""
        query = to_tsquery_text(match)
        if query is None:
            return 0
        key = (query, int(floor), cap)
        now = time.monotonic()
        cached = self._counts.get(key)
        if cached is not None and now - cached[0] < COUNT_CACHE_S:
            return cached[1]
        where = f"WHERE fts @@ to_tsquery('{TS_CONFIG}', ?) AND id > ?"
        if cap is None:
            count = int(self.read(f"SELECT COUNT(*) FROM messages {where}", (query, floor))[0][0])
        else:
            count = int(
                self.read(
                    f"SELECT COUNT(*) FROM (SELECT 1 FROM messages {where} LIMIT ?) AS m",
                    (query, floor, int(cap)),
                )[0][0]
            )
        if len(self._counts) > 1024:
            self._counts.clear()
        self._counts[key] = (now, count)
        return count

    def fts_rowids(self, match: str, floor: int = 0) -> list[int]:
        """Ids of the messages matching ``match`` above ``floor``."""
        query = to_tsquery_text(match)
        if query is None:
            return []
        rows = self.read(
            f"SELECT id FROM messages WHERE fts @@ to_tsquery('{TS_CONFIG}', ?) AND id > ?",
            (query, floor),
        )
        return [int(r[0]) for r in rows]

    def fts_window_rows(
        self, match: str, floor: int, where: str, params: Sequence[Any]
    ) -> list[tuple[Any, ...]]:
        """Rows ``(id, session_id, 0, timestamp, token_count)`` of the matches above
        ``floor`` passing ``where``."""
        query = to_tsquery_text(match)
        if query is None:
            return []
        rows = self.read(
            "SELECT m.id, m.session_id, 0, m.timestamp, m.token_count FROM messages m "
            "JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.fts @@ to_tsquery('{TS_CONFIG}', ?) AND m.id > ? AND {where}",
            [query, floor, *params],
        )
        return [tuple(r) for r in rows]

    def _totals_now(self) -> tuple[int, float]:
        """``(rows, average tokens per row)`` of the index (FTS5's N and avgdl).

        Counted in full once (and again after this object deletes sessions, or every
        :data:`TOTALS_RECOUNT_S` seconds); in between, only the messages added since are
        read (an index range scan), so a search after each turn does not rescan a large
        archive. Rows another process deletes, or commits late under a lower id, are
        counted at the next full count: they only nudge IDF estimates meanwhile."""
        newest = int(self.read("SELECT COALESCE(MAX(id), 0) FROM messages")[0][0])
        cached = self._totals
        now = time.monotonic()
        if cached is None or cached[1] != self._deletes or now - cached[4] > TOTALS_RECOUNT_S:
            count, tokens = self.read(
                "SELECT COUNT(*), COALESCE(SUM(fts_len), 0) FROM messages WHERE id <= ?",
                (newest,),
            )[0]
            self._totals = (newest, self._deletes, int(count), int(tokens), now)
        elif cached[0] != newest:
            count, tokens = self.read(
                "SELECT COUNT(*), COALESCE(SUM(fts_len), 0) FROM messages WHERE id > ? AND id <= ?",
                (cached[0], newest),
            )[0]
            self._totals = (
                newest,
                self._deletes,
                cached[2] + int(count),
                cached[3] + int(tokens),
                cached[4],
            )
        totals = self._totals
        assert totals is not None
        rows, tokens = totals[2], totals[3]
        return rows, (tokens / rows if rows else 0.0)

    def _lexemes_of(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The stemmed lexemes of each word (as the index stores them), cached."""
        missing = [w for w in dict.fromkeys(words) if w not in self._lexemes]
        if missing:
            rows = self.read(
                "SELECT w, ARRAY(SELECT lexeme FROM unnest(to_tsvector("
                f"'{TS_CONFIG}', w)) ORDER BY lexeme) FROM unnest(?::text[]) AS w",
                (missing,),
            )
            for word, lexemes in rows:
                self._lexemes[str(word)] = tuple(lexemes or ())
        return [self._lexemes.get(w, ()) for w in words]

    def _phrase_terms(
        self, found: Sequence[Phrase], rows: int
    ) -> list[tuple[list[str], bool, float]]:
        out: list[tuple[list[str], bool, float]] = []
        for phrase in found:
            lexemes = [
                lex[0] if lex else w
                for w, lex in zip(phrase.words, self._lexemes_of(phrase.words), strict=True)
            ]
            single = '"' + " ".join(phrase.words) + '"' + ("*" if phrase.prefix else "")
            out.append((lexemes, phrase.prefix, idf(rows, self.fts_count(single))))
        return out

    def fts_ranked(
        self, match: str, where: str, params: Sequence[Any], limit: int
    ) -> tuple[list[tuple[Any, ...]], int | None]:
        """The best ``limit`` rows passing ``where`` by FTS5's ``bm25()`` (computed from the
        positions of the query's lexemes in each row's ``tsvector``, see
        :func:`~.pg_fts.bm25`) and the number of matches. Only those lexemes travel: the
        server unnests each matching row's vector and keeps the query's entries."""
        query = to_tsquery_text(match)
        if query is None:
            return [], 0
        count, avgdl = self._totals_now()
        terms = self._phrase_terms(phrases(match), count)
        exact: set[str] = set()
        starts: set[str] = set()
        for lexemes, prefix, _ in terms:
            if not lexemes:
                continue
            exact.update(lexemes[:-1])
            if prefix:
                starts.add(like_escape(lexemes[-1]) + "%")
            else:
                exact.add(lexemes[-1])
        rows = self.read(
            "SELECT m.id, m.session_id, m.timestamp, m.token_count, m.fts_len, "
            "(SELECT json_agg(json_build_array(u.lexeme, u.positions, u.weights)) "
            "FROM unnest(m.fts) u WHERE u.lexeme = ANY(?::text[]) "
            "OR u.lexeme LIKE ANY(?::text[])) "
            "FROM messages m JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.fts @@ to_tsquery('{TS_CONFIG}', ?) AND {where}",
            [sorted(exact), sorted(starts), query, *params],
        )
        total = self.fts_count(match)
        scored = [
            (
                int(r[0]),
                str(r[1]),
                bm25(_vector(r[5]), int(r[4] or 0), avgdl, terms),
                float(r[2]),
                r[3],
            )
            for r in rows
        ]
        scored.sort(key=lambda r: (r[2], r[0]))
        return [tuple(r) for r in scored[: int(limit)]], total

    def month_sql(self, column: str) -> str:
        """SQL for the local-time month (1-12) of an epoch-seconds ``column``."""
        return f"CAST(EXTRACT(MONTH FROM to_timestamp({column})) AS INTEGER)"


__all__ = ["URL_ENV", "PostgresSessionDB", "pg_sql", "redact_url"]

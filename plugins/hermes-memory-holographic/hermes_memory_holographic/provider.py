"""The holographic memory provider: a local fact store the model curates with tools.

* ``fact_store`` (add, search, probe, related, reason, contradict, update, remove, list) and
  ``fact_feedback`` (helpful +0.05 / unhelpful −0.10 trust);
* ``prefetch``: the top facts above ``min_trust_threshold`` as ``## Holographic Memory`` and
  ``- [trust] content`` lines;
* ``on_memory_write`` mirrors built-in adds (user → ``user_pref``, memory → ``general``);
* ``on_session_end`` extracts stated preferences only when ``auto_extract`` is on;
* per-turn ``sync`` is deliberately absent (facts are curated, not transcribed);
* the inspector's capabilities (``hermes-memory ui``, ``hermes-memory memory forget``): list, delete
  and forget a whole user (:class:`~hermes_core.providers.inspect.InspectableProvider`), and
  expiry dates (:class:`~hermes_core.providers.inspect.ExpiringProvider`; an expired fact
  stays listed but leaves ``prefetch``). Facts are edited in place, so there is no
  superseded version to show.

Every call is scoped by ``user_id = session.user_id or "default"``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core import (
    ChatMessage,
    HealthCheck,
    MemoryContext,
    MemoryProvider,
    MemoryWrite,
    ProviderSettings,
    SessionInfo,
    ToolContext,
    ToolSpec,
    hookimpl,
)
from hermes_core.providers.expiry import ExpiryLedger, drop_expired
from hermes_core.providers.inspect import ProviderMemory
from hermes_memory_holographic import hrr as hrr_mod
from hermes_memory_holographic.settings import HolographicSettings
from hermes_memory_holographic.store import CATEGORIES, Fact, FactStore, FactStoreError

log = logging.getLogger(__name__)

DEFAULT_USER = "default"
HEADING = "## Holographic Memory"
LABEL = "Holographic"
ACTIONS = ("add", "search", "probe", "related", "reason", "contradict", "update", "remove", "list")

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")
_PREF_EN = re.compile(
    r"\b(?:I\s+(?:really\s+)?(?:like|love|prefer|enjoy|hate|dislike|always|never|usually|"
    r"use|am|work|live)\b|my\s+[\w\s]{1,30}?\s+(?:is|are)\b)",
    re.IGNORECASE,
)
_PREF_ZH = re.compile(
    r"我(?:很|最|更|也|不|一直|总是|从不|通常)?(?:喜欢|爱|讨厌|习惯|偏好|住在|在.{1,12}工作|是)|我的.{1,10}(?:是|叫)"
)


def _json(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def _fail(message: str) -> str:
    return _json({"success": False, "error": message})


def _text_of(message: ChatMessage) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def extract_preferences(messages: Sequence[ChatMessage]) -> list[str]:
    """Sentences of user messages that state a preference or a personal fact (EN + ZH)."""
    out: list[str] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        for match in _SENTENCE.finditer(_text_of(message)):
            sentence = match.group(0).strip()
            if 6 <= len(sentence) <= 300 and (
                _PREF_EN.search(sentence) or _PREF_ZH.search(sentence)
            ):
                out.append(sentence)
    return list(dict.fromkeys(out))


class HolographicProvider(MemoryProvider):
    """Local SQLite + FTS5 fact store with trust scores and optional HRR vectors."""

    name = "holographic"
    Settings = HolographicSettings

    def __init__(self, settings: ProviderSettings, home: Path) -> None:
        super().__init__(settings, home)
        if not isinstance(settings, HolographicSettings):
            settings = HolographicSettings.model_validate(settings.model_dump())
        self.settings: HolographicSettings = settings
        self._store: FactStore | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.expiry = ExpiryLedger(home, self.name)

    # ------------------------------------------------------------ availability

    def is_available(self) -> bool:
        return not self.unavailable_reason()

    def unavailable_reason(self) -> str:
        try:
            db = sqlite3.connect(":memory:")
            try:
                db.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            finally:
                db.close()
        except sqlite3.Error:
            return "this Python's SQLite lacks FTS5: install a Python built with FTS5"
        return ""

    @property
    def db_path(self) -> Path:
        return self.settings.resolved_db_path(self.home)

    @property
    def store(self) -> FactStore:
        """The fact store, opened on first use."""
        with self._lock:
            if self._closed:
                raise FactStoreError("the holographic provider is shut down")
            if self._store is None:
                s = self.settings
                self._store = FactStore(
                    self.db_path,
                    default_trust=s.default_trust,
                    hrr_dim=s.hrr_dim,
                    hrr_weight=s.hrr_weight,
                    use_hrr=s.hrr_enabled,
                    half_life_days=s.temporal_decay_half_life,
                )
            return self._store

    def warm_up(self) -> None:
        """Open the fact store ahead of the first recall (the host calls it in the
        background when the first session opens)."""
        if not self._closed:
            self.store  # noqa: B018 - opening is the point

    def user_id(self, session: SessionInfo) -> str:
        return session.user_id or DEFAULT_USER

    def shutdown(self) -> None:
        with self._lock:
            store, self._store = self._store, None
            self._closed = True
        if store is not None:
            store.close()

    def bench_retriever(self, workdir: Path) -> Any:
        """A ``hermes-memory bench locomo --retriever provider`` retriever over a fresh fact store
        under ``workdir`` (one fact per turn)."""
        from hermes_memory_holographic.bench import HolographicBenchRetriever

        return HolographicBenchRetriever(workdir, hrr_dim=self.settings.hrr_dim)

    # ------------------------------------------------------------ hooks

    @hookimpl
    def prefetch(self, session: SessionInfo, query: str) -> MemoryContext | None:
        if not isinstance(query, str) or not query.strip() or self._closed:
            return None
        uid = self.user_id(session)
        try:
            facts = self.store.search(
                uid,
                query,
                min_trust=self.settings.min_trust_threshold,
                limit=self.settings.prefetch_limit,
            )
        except FactStoreError:
            return None
        facts = drop_expired(facts, self.expiry.expired(uid), lambda f: f.id)
        if not facts:
            return None
        self.store.mark_retrieved(uid, [f.id for f in facts])
        lines = [HEADING, *(f"- [{f.trust:.2f}] {f.content}" for f in facts)]
        return MemoryContext(
            text="\n".join(lines),
            count=len(facts),
            label=LABEL,
            scores=tuple(f.score for f in facts if f.score is not None),
        )

    # ------------------------------------------------------------ the inspector

    def inspect_users(self) -> list[str]:
        """User ids with facts (``hermes-memory ui``'s People page)."""
        return self.store.users()

    def inspect_memories(self, user_id: str) -> list[ProviderMemory]:
        """Every fact of ``user_id`` (any trust), newest change first, with its expiry.
        ``""`` (the no-user scope) is the ``default`` user, as in ``prefetch``."""
        user_id = user_id or DEFAULT_USER
        dates = self.expiry.expiries(user_id)
        return [
            ProviderMemory(
                id=str(f.id),
                text=f.content,
                created_at=f.created_at,
                kind=f.category,
                source=f"trust {f.trust:.2f}" + (f", tags {', '.join(f.tags)}" if f.tags else ""),
                expires_at=dates.get(str(f.id)),
            )
            for f in self.store.all_facts(user_id)
        ]

    def inspect_forget(self, user_id: str, memory_ids: Sequence[str]) -> int:
        """Delete these facts of ``user_id`` (index rows, vectors, orphaned entities and
        expiry dates too); returns how many existed."""
        user_id = user_id or DEFAULT_USER
        ids = [int(i) for i in memory_ids if str(i).isdigit()]
        removed = self.store.remove_many(user_id, ids)
        self.expiry.forget(user_id, [str(f.id) for f in removed])
        return len(removed)

    def inspect_forget_user(self, user_id: str) -> int:
        """Delete every fact of ``user_id`` and their expiry dates."""
        user_id = user_id or DEFAULT_USER
        count = self.store.remove_user(user_id)
        self.expiry.forget_user(user_id)
        return count

    def inspect_compact(self) -> None:
        """Before a forget proof: merge the full-text index so deleted facts' terms leave
        the file (the host then checkpoints and vacuums every SQLite file of the home)."""
        self.store.optimize_index()

    def inspect_set_expiry(self, user_id: str, memory_id: str, expires_at: float | None) -> bool:
        """Give one fact of ``user_id`` an expiry date, or clear it (``None``)."""
        user_id = user_id or DEFAULT_USER
        if not memory_id.isdigit() or self.store.get(user_id, int(memory_id)) is None:
            return False
        self.expiry.set_date(user_id, memory_id, expires_at)
        return True

    @hookimpl
    def on_memory_write(self, session: SessionInfo, write: MemoryWrite) -> None:
        if write.action != "add" or not write.content.strip():
            return
        category = "user_pref" if write.target == "user" else "general"
        self.store.add(self.user_id(session), write.content, category=category)

    @hookimpl
    def on_session_end(self, session: SessionInfo, messages: Sequence[ChatMessage]) -> None:
        if not self.settings.auto_extract:
            return
        uid = self.user_id(session)
        for sentence in extract_preferences(messages):
            try:
                self.store.add(uid, sentence, category="user_pref", tags=["auto"])
            except FactStoreError as exc:
                log.debug("auto-extract skipped a sentence: %s", exc)

    @hookimpl
    def register_tools(self, session: SessionInfo) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="fact_store",
                description=(
                    "Long-term fact memory. Actions: add (content, category, tags, entities), "
                    "search (query), probe (entity: all facts about it), related (entity: "
                    "facts one hop away), reason (entities: facts tying them together), "
                    "contradict (find conflicting facts), update (fact_id + content/"
                    "trust_delta/tags/category), remove (fact_id), list. Facts below "
                    "min_trust are hidden."
                ),
                parameters={
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": list(ACTIONS)},
                        "content": {"type": "string", "description": "Fact text (add/update)."},
                        "query": {"type": "string", "description": "What to search for."},
                        "entity": {"type": "string", "description": "A name (probe/related)."},
                        "entities": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "Names (reason: two or more; add: extra links).",
                        },
                        "fact_id": {"type": "integer", "description": "Fact id (update/remove)."},
                        "category": {"type": "string", "enum": list(CATEGORIES)},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "trust_delta": {"type": "number", "description": "Trust change (update)."},
                        "min_trust": {
                            "type": "number",
                            "minimum": 0,
                            "maximum": 1,
                            "description": "Hide facts below this trust (default 0.3).",
                        },
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    },
                    "required": ["action"],
                },
                handler=self._fact_store,
                toolset="memory",
            ),
            ToolSpec(
                name="fact_feedback",
                description="Tell the store whether a recalled fact was helpful (+0.05 trust) "
                "or unhelpful/wrong (−0.10 trust).",
                parameters={
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["helpful", "unhelpful"]},
                        "fact_id": {"type": "integer"},
                    },
                    "required": ["action", "fact_id"],
                },
                handler=self._fact_feedback,
                toolset="memory",
            ),
        ]

    @hookimpl
    def health_check(self, home: Path) -> list[HealthCheck]:
        checks = []
        reason = self.unavailable_reason()
        checks.append(HealthCheck("holographic sqlite fts5", not reason, reason or "ok", reason))
        parent = self.db_path.parent
        probe = parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        writable = probe.is_dir() and os.access(probe, os.W_OK)
        checks.append(
            HealthCheck(
                "holographic store",
                writable,
                str(self.db_path),
                "" if writable else f"make {parent} a writable directory",
            )
        )
        numpy_ok = hrr_mod.available()
        checks.append(
            HealthCheck(
                "holographic HRR vectors",
                True,
                "numpy available" if numpy_ok else "numpy missing: keyword fallback in use",
                "" if numpy_ok else "pip install 'hermes-memory-holographic[hrr]'",
            )
        )
        return checks

    # ------------------------------------------------------------ tool handlers

    def _guard(self, fn: Callable[[], dict[str, Any]]) -> str:
        try:
            return _json({"success": True, **fn()})
        except FactStoreError as exc:
            return _fail(str(exc))
        except Exception as exc:  # a handler never raises
            log.exception("holographic tool failed")
            return _fail(f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _int(args: Mapping[str, Any], name: str, default: int | None, lo: int, hi: int) -> int:
        value = args.get(name, default)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if value is None or isinstance(value, bool) or not isinstance(value, int):
            raise FactStoreError(f"'{name}' must be an integer")
        if not lo <= value <= hi:
            raise FactStoreError(f"'{name}' must be between {lo} and {hi}")
        return value

    def _min_trust(self, args: Mapping[str, Any]) -> float:
        value = args.get("min_trust", self.settings.min_trust_threshold)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise FactStoreError("'min_trust' must be a number between 0 and 1")
        if not 0 <= value <= 1:
            raise FactStoreError("'min_trust' must be between 0 and 1")
        return float(value)

    @staticmethod
    def _str(args: Mapping[str, Any], name: str) -> str | None:
        value = args.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise FactStoreError(f"'{name}' must be a string")
        return value

    @staticmethod
    def _facts(facts: Sequence[Fact]) -> dict[str, Any]:
        return {"count": len(facts), "facts": [f.as_json() for f in facts]}

    def _fact_store(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        if not isinstance(args, Mapping):
            return _fail("arguments must be a JSON object")
        action = args.get("action")
        if action not in ACTIONS:
            return _fail(f"'action' must be one of {', '.join(ACTIONS)}")
        uid = self.user_id(ctx.session)

        def run() -> dict[str, Any]:
            store = self.store
            limit = self._int(args, "limit", 10, 1, 100)
            if action == "add":
                fact, created = store.add(
                    uid,
                    self._str(args, "content") or "",
                    category=self._str(args, "category"),
                    tags=args.get("tags"),
                    entities=args.get("entities"),
                )
                return {"fact_id": fact.id, "created": created, "fact": fact.as_json()}
            if action == "search":
                query = self._str(args, "query") or self._str(args, "content") or ""
                return self._facts(
                    store.search(
                        uid,
                        query,
                        min_trust=self._min_trust(args),
                        limit=limit,
                        category=self._str(args, "category"),
                    )
                )
            if action in ("probe", "related"):
                lookup = store.probe if action == "probe" else store.related
                entity = self._str(args, "entity") or ""
                return self._facts(
                    lookup(uid, entity, min_trust=self._min_trust(args), limit=limit)
                )
            if action == "reason":
                entities = args.get("entities")
                if not isinstance(entities, list):
                    raise FactStoreError("'entities' must be a list of two or more names")
                return self._facts(
                    store.reason(uid, entities, min_trust=self._min_trust(args), limit=limit)
                )
            if action == "contradict":
                pairs = store.contradict(uid, entity=self._str(args, "entity"), limit=limit)
                return {
                    "count": len(pairs),
                    "contradictions": [
                        {"a": a.as_json(), "b": b.as_json(), "reason": why} for a, b, why in pairs
                    ],
                }
            if action == "update":
                fact_id = self._int(args, "fact_id", None, 1, 2**62)
                delta = args.get("trust_delta")
                if delta is not None and (
                    isinstance(delta, bool) or not isinstance(delta, int | float)
                ):
                    raise FactStoreError("'trust_delta' must be a number, e.g. 0.1 or -0.2")
                if all(args.get(k) is None for k in ("content", "trust_delta", "tags", "category")):
                    raise FactStoreError("update needs content, trust_delta, tags or category")
                fact = store.update(
                    uid,
                    fact_id,
                    content=self._str(args, "content"),
                    trust_delta=delta,
                    tags=args.get("tags"),
                    category=self._str(args, "category"),
                )
                return {"fact": fact.as_json()}
            if action == "remove":
                fact = store.remove(uid, self._int(args, "fact_id", None, 1, 2**62))
                return {"removed": fact.as_json()}
            min_trust = self._min_trust(args) if "min_trust" in args else 0.0
            return self._facts(
                store.list_facts(
                    uid, category=self._str(args, "category"), min_trust=min_trust, limit=limit
                )
            )

        return self._guard(run)

    def _fact_feedback(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        if not isinstance(args, Mapping):
            return _fail("arguments must be a JSON object")
        action = args.get("action")
        if action not in ("helpful", "unhelpful"):
            return _fail("'action' must be 'helpful' or 'unhelpful'")

        def run() -> dict[str, Any]:
            fact_id = self._int(args, "fact_id", None, 1, 2**62)
            fact = self.store.feedback(self.user_id(ctx.session), fact_id, action == "helpful")
            return {"fact_id": fact.id, "trust": round(fact.trust, 3)}

        return self._guard(run)


__all__ = ["HEADING", "HolographicProvider", "extract_preferences"]

"""A loopback double of the Hindsight HTTP API (1.1.0), validated against its OpenAPI document.

Serves the routes the provider uses, behaving like a Hindsight server in chunks mode (no LLM
extraction): each retained item becomes one ``world`` fact with the item's text and tags;
an item whose ``document_id`` already exists in the bank replaces that document's facts
(``update_mode: replace``, the API's default). Recall filters by ``types`` and ``tags`` /
``tags_match`` as the API documents and ranks facts by shared words (each CJK character
counts as a word); reflect answers with the best matching facts (a real server would ask its
LLM). Every request and 2xx response is checked against ``api/hindsight-openapi-1.1.0.json``.
Optionally ``api_key`` makes every route answer 401 to any other bearer token.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_core.testing.loopback import LoopbackRequest, LoopbackServer, error_reply

OPENAPI = Path(__file__).parent / "api" / "hindsight-openapi-1.1.0.json"
_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+", re.UNICODE)
_STOP = {"the", "a", "an", "is", "my", "i", "do", "what", "which", "me", "you", "of", "to"}

BANK = "/v1/default/banks/{bank_id}"


def words(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)} - _STOP


@dataclass
class StoredFact:
    id: str
    text: str
    document_id: str
    tags: list[str]
    context: str | None
    metadata: dict[str, str]
    mentioned_at: str
    type: str = "world"


@dataclass
class Bank:
    facts: dict[str, StoredFact] = field(default_factory=dict)
    mission: str = ""


def _tags_ok(fact_tags: Sequence[str], wanted: Sequence[str], mode: str) -> bool:
    if not wanted:
        return mode != "exact" or not fact_tags
    have = set(fact_tags)
    if mode == "exact":
        return have == set(wanted)
    if not have:
        return mode in ("any", "all")
    if mode in ("any", "any_strict"):
        return bool(have & set(wanted))
    return set(wanted) <= have


class HindsightDouble:
    """State behind the routes; ``server`` is the (not yet started) LoopbackServer."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.banks: dict[str, Bank] = {}
        self._lock = threading.Lock()
        self.server = LoopbackServer(openapi=OPENAPI, name="hindsight")
        s = self.server
        s.route("POST", f"{BANK}/memories", self._guard(self.retain))
        s.route("POST", f"{BANK}/memories/recall", self._guard(self.recall))
        s.route("POST", f"{BANK}/reflect", self._guard(self.reflect))
        s.route("PUT", BANK, self._guard(self.put_bank))
        s.route("DELETE", f"{BANK}/documents/{{document_id}}", self._guard(self.delete_document))

    def _guard(self, handler: Any) -> Any:
        def run(req: LoopbackRequest) -> Any:
            wanted = f"Bearer {self.api_key}"
            if self.api_key is not None and req.headers.get("authorization") != wanted:
                return error_reply(401, "Invalid API key")
            with self._lock:
                return handler(req)

        return run

    def bank(self, name: str) -> Bank:
        return self.banks.setdefault(name, Bank())

    def facts(self, bank: str | None = None) -> list[StoredFact]:
        banks = [self.banks[bank]] if bank else list(self.banks.values())
        return [f for b in banks if b for f in b.facts.values()]

    # -- routes

    def retain(self, req: LoopbackRequest) -> Any:
        bank = self.bank(req.path_params["bank_id"])
        body = req.json
        now = datetime.now(UTC).isoformat()
        for item in body["items"]:
            doc = item.get("document_id") or str(uuid.uuid4())
            if item.get("update_mode", "replace") != "append":
                for key in [k for k, f in bank.facts.items() if f.document_id == doc]:
                    del bank.facts[key]
            fid = str(uuid.uuid4())
            bank.facts[fid] = StoredFact(
                id=fid,
                text=item["content"],
                document_id=doc,
                tags=list(item.get("tags") or []),
                context=item.get("context"),
                metadata=dict(item.get("metadata") or {}),
                mentioned_at=now,
            )
        run_async = bool(body.get("async", False))
        return {
            "success": True,
            "bank_id": req.path_params["bank_id"],
            "items_count": len(body["items"]),
            "async": run_async,
            "operation_id": str(uuid.uuid4()) if run_async else None,
        }

    def _ranked(self, req: LoopbackRequest) -> list[tuple[float, StoredFact]]:
        """Matching facts, best first, each with its share of the query's words (the
        ``scores.final`` the double reports)."""
        body = req.json
        bank = self.banks.get(req.path_params["bank_id"])
        if bank is None:
            return []
        types = body.get("types") or ["world", "experience", "observation"]
        wanted = body.get("tags") or []
        mode = body.get("tags_match", "any")
        query = words(body["query"])
        scored = []
        for fact in bank.facts.values():
            if fact.type not in types or not _tags_ok(fact.tags, wanted, mode):
                continue
            score = len(query & words(fact.text)) / max(1, len(query))
            if score:
                scored.append((score, fact.mentioned_at, fact))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [(score, f) for score, _, f in scored]

    def recall(self, req: LoopbackRequest) -> Any:
        budget = int(req.json.get("max_tokens", 4096))
        out, used = [], 0
        for final, fact in self._ranked(req):
            cost = max(1, len(fact.text) // 4)
            if used + cost > budget:
                break
            used += cost
            out.append(
                {
                    "id": fact.id,
                    "text": fact.text,
                    "type": fact.type,
                    "context": fact.context,
                    "mentioned_at": fact.mentioned_at,
                    "document_id": fact.document_id,
                    "metadata": fact.metadata,
                    "tags": fact.tags,
                    "scores": {"final": final},
                }
            )
        return {"results": out}

    def reflect(self, req: LoopbackRequest) -> Any:
        best = self._ranked(req)[:3]
        if not best:
            return {"text": "I don't have any memories about that."}
        return {"text": "Based on what I remember: " + " ".join(f.text for _, f in best)}

    def put_bank(self, req: LoopbackRequest) -> Any:
        name = req.path_params["bank_id"]
        bank = self.bank(name)
        bank.mission = req.json.get("reflect_mission") or bank.mission
        return {
            "bank_id": name,
            "name": name,
            "disposition": {"skepticism": 3, "literalism": 3, "empathy": 3},
            "mission": bank.mission,
        }

    def delete_document(self, req: LoopbackRequest) -> Any:
        bank = self.banks.get(req.path_params["bank_id"])
        doc = req.path_params["document_id"]
        keys = [k for k, f in bank.facts.items() if f.document_id == doc] if bank else []
        if not keys:
            return error_reply(404, "Document not found")
        for key in keys:
            del bank.facts[key]  # type: ignore[union-attr]
        return {
            "success": True,
            "message": f"Document {doc} deleted",
            "document_id": doc,
            "memory_units_deleted": len(keys),
        }


def hindsight_double(api_key: str | None = None) -> tuple[HindsightDouble, LoopbackServer]:
    double = HindsightDouble(api_key)
    return double, double.server


__all__ = ["OPENAPI", "HindsightDouble", "hindsight_double", "words"]

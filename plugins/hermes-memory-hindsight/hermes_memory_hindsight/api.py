"""The part of Hindsight's HTTP API this provider uses (API ``/v1/default/...``, documented in
Hindsight's OpenAPI document, a copy of which the tests validate every call against).

Routes: ``POST /v1/default/banks/{bank_id}/memories`` (retain),
``POST .../memories/recall``, ``POST .../reflect``, ``PUT /v1/default/banks/{bank_id}``
(create or update a bank's missions) and ``DELETE .../documents/{document_id}``.

Transport, retries, timeouts and the circuit breaker are the shared
:class:`~hermes_core.providers.service.ServiceClient`'s; this module builds request bodies and
checks the shape of answers (a 2xx body that is not the documented shape raises
:class:`~hermes_core.providers.service.ServiceBadResponse`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hermes_core.providers.service import ServiceAPI, ServiceBadResponse, given


@dataclass(frozen=True)
class Fact:
    """One recalled memory."""

    id: str
    text: str
    type: str | None = None
    tags: tuple[str, ...] = ()
    document_id: str | None = None
    mentioned_at: str | None = None
    score: float | None = None
    """The API's ``scores.final`` (the value results are ranked by); None when not sent."""

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            **given(type=self.type, mentioned_at=self.mentioned_at),
        }


def _final_score(scores: Any) -> float | None:
    """``RecallResult.scores.final`` as a float, or None when absent or not a number."""
    if not isinstance(scores, dict):
        return None
    final = scores.get("final")
    if isinstance(final, bool) or not isinstance(final, int | float):
        return None
    return float(final)


def _bank_path(bank: str, *rest: str) -> str:
    parts = [quote(bank, safe="")] + [quote(p, safe="") for p in rest]
    return "/v1/default/banks/" + "/".join(parts)


class HindsightAPI(ServiceAPI):
    """Typed calls over one :class:`ServiceClient`."""

    def retain(
        self,
        bank: str,
        items: Sequence[Mapping[str, Any]],
        *,
        run_async: bool,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """Store ``items`` (``content`` plus optional ``context``, ``document_id``, ``tags``,
        ``metadata``, ``timestamp``). Items with a ``document_id`` replace that document, so
        re-sending one is harmless; that makes the call safe to retry."""
        body = {"items": [dict(i) for i in items], "async": run_async}
        answer = self.client.post(
            _bank_path(bank, "memories"),
            json_body=body,
            deadline=deadline,
            idempotent=all(i.get("document_id") for i in items),
        )
        if not isinstance(answer, dict) or "success" not in answer:
            raise self._bad("retain", answer)
        return answer

    def recall(
        self,
        bank: str,
        query: str,
        *,
        tags: Sequence[str],
        budget: str,
        max_tokens: int,
        types: Sequence[str] | None = None,
        deadline: float | None = None,
        timeout: float | None = None,
    ) -> list[Fact]:
        """Facts of ``bank`` relevant to ``query`` that carry every tag in ``tags``
        (``all_strict``: untagged memories never match)."""
        body: dict[str, Any] = {
            "query": query,
            "budget": budget,
            "max_tokens": max_tokens,
            "tags": list(tags),
            "tags_match": "all_strict",
            **given(types=list(types or ())),
        }
        answer = self.client.post(
            _bank_path(bank, "memories", "recall"),
            json_body=body,
            deadline=deadline,
            timeout=timeout,
            idempotent=True,
        )
        results = answer.get("results") if isinstance(answer, dict) else None
        if not isinstance(results, list):
            raise self._bad("recall", answer)
        facts: list[Fact] = []
        for item in results:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise self._bad("recall", answer)
            raw_tags = item.get("tags") or ()
            facts.append(
                Fact(
                    id=str(item.get("id", "")),
                    text=item["text"],
                    type=item.get("type") if isinstance(item.get("type"), str) else None,
                    tags=tuple(t for t in raw_tags if isinstance(t, str)),
                    document_id=item.get("document_id"),
                    mentioned_at=item.get("mentioned_at"),
                    score=_final_score(item.get("scores")),
                )
            )
        return facts

    def reflect(
        self,
        bank: str,
        query: str,
        *,
        tags: Sequence[str],
        budget: str,
        deadline: float | None = None,
        timeout: float | None = None,
    ) -> str:
        """The server's synthesis over ``bank``'s memories carrying every tag in ``tags``."""
        body = {"query": query, "budget": budget, "tags": list(tags), "tags_match": "all_strict"}
        answer = self.client.post(
            _bank_path(bank, "reflect"),
            json_body=body,
            deadline=deadline,
            timeout=timeout,
            idempotent=True,
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
            raise self._bad("reflect", answer)
        return str(answer["text"])

    def put_bank(
        self, bank: str, *, reflect_mission: str | None, retain_mission: str | None
    ) -> None:
        """Create ``bank`` (or update its missions)."""
        body = given(reflect_mission=reflect_mission, retain_mission=retain_mission)
        self.client.put(_bank_path(bank), json_body=body)

    def delete_document(self, bank: str, document_id: str) -> None:
        """Forget one document and the memories extracted from it."""
        self.client.delete(_bank_path(bank, "documents", document_id))

    def _bad(self, what: str, answer: Any) -> ServiceBadResponse:
        preview = repr(answer)[:120]
        return ServiceBadResponse(
            f"Hindsight answered {what} with an unexpected body ({preview}); is "
            f"{self.client.base_url} a Hindsight server?",
            service=self.client.service,
        )


__all__ = ["Fact", "HindsightAPI"]

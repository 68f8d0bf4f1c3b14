"""The service variant (service/example_service.py) against a loopback double
of its API: the fault tests and the service frame's checks every service provider passes,
plus a round trip in English and Chinese."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

from hermes_core.testing.harness import ProviderHarness
from hermes_core.testing.loopback import LoopbackRequest, LoopbackServer, error_reply, reply
from hermes_core.testing.service_faults import ServiceProviderFaults
from hermes_core.testing.service_frame import ServiceFrameChecks

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from example_service import ExampleServiceProvider

KEY = "test-key"


def example_double() -> LoopbackServer:
    """The example API: notes per user, a search matching any shared word (or CJK pair)."""
    server = LoopbackServer(name="example")
    notes: list[tuple[str, str]] = []

    def terms(text: str) -> set[str]:
        words = {w for w in text.lower().split() if len(w) > 2}
        cjk = [c for c in text if "\u4e00" <= c <= "\u9fff"]
        return words | {a + b for a, b in itertools.pairwise(cjk)}

    def store(req: LoopbackRequest) -> Any:
        if req.headers.get("authorization") != f"Bearer {KEY}":
            return error_reply(401, "bad key")
        item = (req.json["user"], req.json["text"])
        if item not in notes:
            notes.append(item)
        return reply({}, status=201)

    def search(req: LoopbackRequest) -> Any:
        if req.headers.get("authorization") != f"Bearer {KEY}":
            return error_reply(401, "bad key")
        wanted = terms(req.json["query"])
        hits = [t for u, t in notes if u == req.json["user"] and wanted & terms(t)]
        return {"results": [{"text": t} for t in hits]}

    server.route("POST", "/v1/notes", store)
    server.route("POST", "/v1/search", search)
    return server


class TestExampleServiceVariant(ServiceProviderFaults, ServiceFrameChecks):
    provider_class = ExampleServiceProvider
    key_setting = "EXAMPLE_SERVICE_API_KEY"
    probe_tool = ("example_search", {"query": "locker code"})
    setup_asks = ("api_key", "base_url")  # what `hermes-memory memory setup` asks, in order

    def make_double(self) -> LoopbackServer:
        return example_double()

    def service_settings(self, base_url: str) -> dict[str, Any]:
        return {
            "base_url": base_url,
            "api_key": KEY,
            "retries": 0,
            "prefetch_wait": 0.5,
            "failure_threshold": self.breaker_threshold,
            "breaker_cooldown": self.breaker_cooldown,
        }

    def test_round_trip_in_english_and_chinese(self, service_harness: ProviderHarness) -> None:
        service_harness.sync("My locker code is 4417.")
        service_harness.sync("我的猫叫墨墨。")
        found = service_harness.prefetch("what is my locker code")
        assert found is not None and "4417" in found.text
        found_zh = service_harness.prefetch("我的猫叫什么")
        assert found_zh is not None and "墨墨" in found_zh.text

    def test_without_a_key_it_says_which_setting(self, hermes_home: Path) -> None:
        harness = ProviderHarness(ExampleServiceProvider, hermes_home, {})
        try:
            reason = harness.provider.unavailable_reason()
            assert "EXAMPLE_SERVICE_API_KEY" in reason and "hermes-memory memory setup" in reason
        finally:
            harness.close()

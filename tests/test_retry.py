"""hermes_core.retry: the one Retry-After parser and backoff rule of both HTTP clients."""

from __future__ import annotations

from hermes_core.llm.client import LLMClient
from hermes_core.providers.service.client import ServiceClient
from hermes_core.retry import backoff_wait, parse_retry_after


def test_retry_after_forms() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" -3 ") == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412470.0) == 10.0
    assert parse_retry_after("明天") is None and parse_retry_after(None) is None


def test_backoff_rule() -> None:
    limits = {"backoff_base": 0.5, "backoff_max": 3.0, "max_retry_after": 60.0}
    assert backoff_wait(0, None, uniform=lambda a, b: b, **limits) == 0.5
    assert backoff_wait(0, None, uniform=lambda a, b: a, **limits) == 0.25
    assert backoff_wait(9, None, uniform=lambda a, b: b, **limits) == 3.0
    assert backoff_wait(0, 90.0, **limits) == 60.0


def test_both_clients_use_it() -> None:
    import hermes_core.llm.client as llm
    import hermes_core.providers.service.client as service

    assert llm.backoff_wait is service.backoff_wait is backoff_wait
    assert llm.parse_retry_after is service.parse_retry_after is parse_retry_after
    assert LLMClient and ServiceClient

"""``ProviderContract``: the checks every external memory provider must pass.

Subclass it in your provider's tests and set the class attributes::

    from hermes_core.testing.contract import ProviderContract
    from hermes_memory_example.provider import ExampleProvider

    class TestExampleContract(ProviderContract):
        provider_class = ExampleProvider
        settings = {"path": "memories.json"}

Every ``test_*`` method below then runs against your provider, in a fresh ``HERMES_HOME``.
Override the ``roundtrip_*`` attributes when your provider needs a different fact to recall
(for example an extraction model that rewrites text).
"""

from __future__ import annotations

import socket
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from pydantic import SecretStr

from hermes_core.llm.tokens import estimate_tokens
from hermes_core.providers.base import MemoryProvider
from hermes_core.providers.discovery import list_installed
from hermes_core.testing.harness import ProviderHarness
from hermes_core.tool_results import check_result_shape, reports_failure
from hermes_core.types import MemoryContext, MemoryWrite, ToolContext, ToolSpec

_SECRETISH = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "credential", "credentials"}
)
"""Name parts (split on ``_``) that mark a secret: ``api_key``, ``auth_token`` — but not
``context_tokens`` or ``max_tokens`` (token counts)."""


def _literal(annotation: object) -> tuple[object, ...]:
    """The values of a ``Literal[...]`` (also inside ``X | None``), else ()."""
    import typing

    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return ()


class _NetworkAttempt(AssertionError):
    pass


def _is_secret_annotation(annotation: Any) -> bool:
    if annotation is SecretStr:
        return True
    return any(_is_secret_annotation(arg) for arg in typing.get_args(annotation))


class ProviderContract:
    """Base test class; pytest collects the subclass (name it ``Test...``)."""

    provider_class: ClassVar[type[MemoryProvider]]
    settings: ClassVar[dict[str, Any]] = {}
    prefetch_token_budget: ClassVar[int] = 4000
    """A prefetch result larger than this (estimated tokens) fails the contract."""

    remember_via: ClassVar[Literal["sync", "memory_write"]] = "sync"
    """How the round-trip tests store a fact: a synced turn, or — for curated stores whose
    ``sync`` deliberately does nothing — a mirrored built-in memory write."""

    roundtrip_user: ClassVar[str] = (
        "Please remember that my favourite editor is Helix and I deploy with Ansible."
    )
    roundtrip_query: ClassVar[str] = "Which editor do I like?"
    roundtrip_expect: ClassVar[str] = "Helix"
    roundtrip_user_zh: ClassVar[str] = "请记住：我最喜欢的饮料是乌龙茶，不加糖。"
    roundtrip_query_zh: ClassVar[str] = "我喜欢喝什么饮料？"
    roundtrip_expect_zh: ClassVar[str] = "乌龙茶"

    # -- fixtures

    @pytest.fixture
    def harness(self, hermes_home: Path) -> Iterator[ProviderHarness]:
        made = ProviderHarness(self.provider_class, hermes_home, self.settings)
        yield made
        made.close()

    @pytest.fixture
    def no_network(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """Every socket connect or DNS lookup is recorded and refused."""
        attempts: list[str] = []

        def refuse(kind: str) -> Callable[..., Any]:
            def blocked(*args: Any, **kwargs: Any) -> Any:
                attempts.append(f"{kind}{args[1:2] or args[:1]}")
                raise _NetworkAttempt(f"network call during is_available(): {kind} {args}")

            return blocked

        monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
        monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
        monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
        monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
        return attempts

    # -- identity and packaging

    def test_entry_point_name_matches_provider_name(self) -> None:
        name = self.provider_class.name
        assert name, "MemoryProvider.name must be set"
        installed = [p for p in list_installed() if p.name == name and not p.source]
        assert installed, (
            f"no entry point named {name!r} in group hermes.memory_providers; install the "
            "package (pip install -e .) and check [project.entry-points] in pyproject.toml"
        )
        assert len(installed) == 1, f"{name!r} is offered by {installed}"
        loaded = installed[0].entry_point().load()
        assert loaded is self.provider_class, (
            f"entry point {name!r} loads {loaded!r}, expected {self.provider_class!r}"
        )

    def test_check_pending_passes(self, harness: ProviderHarness) -> None:
        harness.host.pm.check_pending()  # raises on a misspelled hook name

    def test_hook_arguments_have_no_defaults(self, harness: ProviderHarness) -> None:
        from hermes_core.plugins import defaulted_hook_arguments

        problems = defaulted_hook_arguments(harness.host.pm, harness.provider)
        assert not problems, f"pluggy never passes arguments with defaults: {problems}"

    def test_is_available_makes_no_network_call(
        self, harness: ProviderHarness, no_network: list[str]
    ) -> None:
        available = harness.provider.is_available()
        assert isinstance(available, bool)
        assert no_network == []
        if not available:
            assert harness.provider.unavailable_reason(), "unavailable needs a reason"

    # -- settings

    def test_every_settings_field_has_a_description(self) -> None:
        missing = [
            name
            for name, info in self.provider_class.Settings.model_fields.items()
            if not (info.description or "").strip()
        ]
        assert not missing, f"settings fields without description=: {missing}"

    def test_secrets_are_secretstr(self) -> None:
        wrong = [
            name
            for name, info in self.provider_class.Settings.model_fields.items()
            if _SECRETISH & set(name.lower().split("_"))
            and not _is_secret_annotation(info.annotation)
        ]
        assert not wrong, f"secret-looking fields must be SecretStr: {wrong}"

    def test_setup_accepts_the_defaults(self, hermes_home: Path) -> None:
        """`hermes-memory memory setup <name>` with Enter on every prompt activates the provider."""
        import yaml
        from click.testing import CliRunner
        from prompt_toolkit.application import create_app_session
        from prompt_toolkit.input import create_pipe_input
        from prompt_toolkit.output import DummyOutput

        from hermes_core.cli.main import cli
        from hermes_core.cli.prompts import setup_fields

        name = self.provider_class.name
        prompts = len(setup_fields(self.provider_class.Settings))
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            pipe.send_text("\r" * prompts)
            result = CliRunner().invoke(cli, ["memory", "setup", name])
        assert result.exit_code == 0, result.output
        config = yaml.safe_load((hermes_home / "config.yaml").read_text(encoding="utf-8"))
        assert config["memory"]["provider"] == name
        assert f"Memory provider: {name}" in result.output
        written = (config["memory"].get("providers") or {}).get(name) or {}
        defaults = {
            key: info.get_default(call_default_factory=True)
            for key, info in self.provider_class.Settings.model_fields.items()
        }
        same = [key for key, value in written.items() if value == defaults.get(key)]
        assert not same, f"setup wrote values equal to their defaults: {same}"

    def test_setup_asks_only_a_few_questions(self) -> None:
        """First-time setup asks what a user must answer (key, URL, scope), not every knob:
        mark those fields with ``setup_field(...)``/``json_schema_extra={"setup": "ask"}``."""
        from hermes_core.cli.prompts import setup_fields

        asked = [name for name, _ in setup_fields(self.provider_class.Settings)]
        assert len(asked) <= 5, f"setup asks {len(asked)} questions: {asked}"

    def test_a_setup_question_names_only_the_choices_it_offers(self) -> None:
        """A choice question whose description lists values the picker hides (test-only
        ones) promises what it cannot give: name the offered values only."""
        import re
        import typing

        from hermes_core.cli.prompts import choices_of, setup_fields

        for name, info in setup_fields(self.provider_class.Settings, advanced=True):
            offered = choices_of(info)
            if offered is None:
                continue
            args = (info.annotation, *typing.get_args(info.annotation))
            values = {str(value) for arg in args for value in _literal(arg)}
            hidden = values - set(offered)
            text = info.description or ""
            named = [v for v in hidden if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text)]
            assert not named, f"{name}: the question names {named}, which it does not offer"

    # -- behaviour

    def remember(self, harness: ProviderHarness, text: str, reply: str = "Got it.") -> None:
        """Store ``text`` the way this provider learns (see :attr:`remember_via`)."""
        if self.remember_via == "memory_write":
            write = MemoryWrite(action="add", target="user", content=text)
            harness.call("on_memory_write", write=write)
        else:
            harness.sync(text, reply)
        harness.host.flush(10)

    def test_prefetch_returns_none_or_context_within_budget(self, harness: ProviderHarness) -> None:
        result = harness.prefetch("What do you remember about me?")
        if result is not None:
            assert isinstance(result, MemoryContext)
            assert estimate_tokens(result.text) <= self.prefetch_token_budget
            assert "<memory-context>" not in result.text, "the host adds the fence, not you"

    def test_sync_then_prefetch_round_trips(self, harness: ProviderHarness) -> None:
        self.remember(harness, self.roundtrip_user)
        result = harness.prefetch(self.roundtrip_query)
        assert result is not None, "prefetch recalled nothing after sync"
        assert self.roundtrip_expect in result.text
        assert estimate_tokens(result.text) <= self.prefetch_token_budget

    def test_sync_then_prefetch_round_trips_in_chinese(self, harness: ProviderHarness) -> None:
        self.remember(harness, self.roundtrip_user_zh, "好的，记住了。")
        result = harness.prefetch(self.roundtrip_query_zh)
        assert result is not None, "prefetch recalled nothing after a Chinese sync"
        assert self.roundtrip_expect_zh in result.text

    def test_repeated_sync_is_harmless(self, harness: ProviderHarness) -> None:
        for _ in range(3):
            self.remember(harness, self.roundtrip_user)
        result = harness.prefetch(self.roundtrip_query)
        assert result is not None and self.roundtrip_expect in result.text
        assert result.text.count(self.roundtrip_expect) <= 3, "repeated sync duplicated memories"

    def tool_specs(self, harness: ProviderHarness) -> list[ToolSpec]:
        return list(harness.call("register_tools") or [])

    def test_tool_failures_say_success_false(self, harness: ProviderHarness) -> None:
        """Missing or malformed required arguments fail in the one shape, so MCP clients
        see an error (``hermes_core.tool_results``)."""
        check_tool_failures(self.tool_specs(harness), ToolContext(session=harness.session.info))

    def test_tool_results_have_the_one_shape(self, harness: ProviderHarness) -> None:
        """Every tool's answer to plain arguments (each required one ``"x"``), before and
        after shutdown, is a JSON object; an ``error`` in it always says
        ``"success": false``."""
        specs = self.tool_specs(harness)
        ctx = ToolContext(session=harness.session.info)
        for closed in (False, True):
            if closed:
                harness.provider.shutdown()
            for spec in specs:
                args = {str(name): "x" for name in spec.parameters.get("required") or []}
                check_result_shape(spec.handler(args, ctx), tool=spec.name)

    def test_survives_double_shutdown(self, harness: ProviderHarness) -> None:
        harness.provider.shutdown()
        harness.provider.shutdown()

    def test_raising_nothing_through_the_host(self, harness: ProviderHarness) -> None:
        """A full turn through the Session API (facade, redaction, worker) works."""
        session = harness.session
        session.before_turn(self.roundtrip_query)
        session.after_turn(self.roundtrip_user, "Got it.")
        assert harness.host.flush(10)
        session.close()


def failing_arguments(spec: ToolSpec) -> list[dict[str, Any]]:
    """Arguments every handler must refuse: none at all when the tool requires some, and each
    required parameter given as a nested list (no schema type accepts it)."""
    required = [str(name) for name in spec.parameters.get("required") or []]
    if not required:
        return []
    out: list[dict[str, Any]] = [{}]
    for name in required:
        out.append({other: "x" for other in required} | {name: [[{"bad": None}]]})
    return out


def check_tool_failures(specs: list[ToolSpec], ctx: ToolContext) -> int:
    """Call each tool with :func:`failing_arguments`; every answer must be a failure in the
    one shape (``"success": false`` and an ``error``). Returns how many calls were checked."""
    calls = 0
    for spec in specs:
        for args in failing_arguments(spec):
            result = spec.handler(args, ctx)
            check_result_shape(result, tool=spec.name)
            assert reports_failure(result), f"{spec.name}{args} did not fail: {result[:200]}"
            calls += 1
    return calls


class RetrieverContract:
    """Checks for a provider's ``bench_retriever(workdir)`` (``hermes-memory bench locomo``).

    Subclass it and set ``provider_class`` (and ``settings``); the provider is built with its
    validated settings in a fresh ``HERMES_HOME``. A tiny bilingual conversation is indexed
    and searched through the :class:`~hermes_core.bench.retrievers.Retriever` protocol and
    :func:`~hermes_core.bench.locomo.run_benchmark`.
    """

    provider_class: ClassVar[type[MemoryProvider]]
    settings: ClassVar[dict[str, Any]] = {}

    @pytest.fixture
    def retriever(self, hermes_home: Path, tmp_path: Path) -> Iterator[Any]:
        from hermes_core.bench.retrievers import Retriever
        from hermes_core.providers.base import load_provider_settings

        cls = self.provider_class
        settings = load_provider_settings(cls.Settings, cls.name, hermes_home, self.settings)
        made = cls(settings, hermes_home).bench_retriever(tmp_path / "bench")  # type: ignore[attr-defined]
        assert isinstance(made, Retriever), "bench_retriever must return a Retriever"
        yield made
        made.close()
        made.close()  # closing twice is harmless

    def test_finds_the_right_turn_in_english_and_chinese(self, retriever: Any) -> None:
        retriever.reset()
        retriever.index("conv-x", _bench_sessions())
        assert retriever.search("What is the name of Ana's cat?", 1).turns[0].turn_id == "D1:1"
        top = retriever.search("西湖划船", 1).turns[0]
        assert (top.session_id, top.turn_id) == ("D2", "D2:1")

    def test_reset_forgets_the_previous_conversation(self, retriever: Any) -> None:
        retriever.reset()
        retriever.index("conv-x", _bench_sessions())
        retriever.reset()
        retriever.index("conv-y", _bench_sessions()[:1])
        hits = retriever.search("bike wheels and the cat", 5).turns
        assert hits and {t.session_id for t in hits} == {"D1"}

    def test_scores_through_run_benchmark(self, retriever: Any) -> None:
        from hermes_core.bench.locomo import BenchConversation, BenchQuestion, run_benchmark

        question = BenchQuestion(
            "What kind of wheels does Ben's bike have?", 4, ("D2:2",), ("D2",), qid="q1"
        )
        conversation = BenchConversation(
            conversation_id="c1", sessions=list(_bench_sessions()), questions=[question]
        )
        report = run_benchmark([conversation], retriever, ks=(1, 5))
        assert report.scores["1-4"]["turn"]["recall_all@5"] == 1.0
        assert report.search_ms and report.index_seconds > 0


def _bench_sessions() -> tuple[Any, ...]:
    from hermes_core.bench.retrievers import BenchSession, BenchTurn

    return (
        BenchSession(
            "D1",
            1_700_000_000.0,
            (
                BenchTurn("D1:1", "Ana", "I adopted a grey cat called Pixel last week."),
                BenchTurn("D1:2", "Ben", "The quarterly tax forms are due on Friday."),
            ),
        ),
        BenchSession(
            "D2",
            1_700_100_000.0,
            (
                BenchTurn("D2:1", "Ana", "我周末去杭州西湖划船了。"),
                BenchTurn("D2:2", "Ben", "My new bike has carbon wheels."),
            ),
        ),
    )


__all__ = ["ProviderContract", "RetrieverContract"]

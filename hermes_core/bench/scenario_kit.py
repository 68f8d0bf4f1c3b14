"""Building blocks of the compression scenarios: a transcript builder that records where
each fact was said, and deterministic bulk (logs, listings, test runs, web pages, chatter)
so a scenario's compacted span is the size of a real one.

A :class:`Scenario` is a transcript with a *head* (system prompt + first exchange, kept
verbatim by the compressor), a *middle* (what gets compacted) and a *tail* (the last
exchange). Facts and distractors are declared next to the text that contains them and are
checked to occur in the middle only, so a scenario cannot score a fact the compressor never
had to keep.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core.types import ChatMessage

Language = Literal["en", "zh"]
Domain = Literal["coding", "ops", "research", "chat"]
Where = Literal["user", "assistant", "tool"]

HEAD_MESSAGES = 3
"""system + first user message + first reply: the compressor's ``protect_first_n``."""


@dataclass(frozen=True, slots=True)
class Fact:
    """Something the user would call critical. Kept when every needle is in the sheet
    (whitespace-insensitive, case-insensitive for Latin letters)."""

    id: str
    needles: tuple[str, ...]
    where: Where
    form: str
    """How it was written ("port in a psql error line", "deadline as a weekday"...)."""


@dataclass(frozen=True, slots=True)
class Distractor:
    """Looks like a fact (a number, a path, an error) but is noise or was superseded."""

    needle: str
    why: str


@dataclass(frozen=True)
class Scenario:
    """One benchmark transcript with its facts, distractors and a scripted LLM summary."""

    id: str
    language: Language
    domain: Domain
    title: str
    messages: tuple[ChatMessage, ...]
    facts: tuple[Fact, ...]
    distractors: tuple[Distractor, ...]
    llm_summary: str

    @property
    def head(self) -> list[ChatMessage]:
        return [dict(m) for m in self.messages[:HEAD_MESSAGES]]


def normalise(text: str) -> str:
    """Whitespace-collapsed, lower-cased text for needle matching."""
    return " ".join(text.split()).lower()


def message_text(message: ChatMessage) -> str:
    """Content plus tool-call arguments of one message."""
    parts = [str(message.get("content") or "")]
    for call in message.get("tool_calls") or []:
        parts.append(str(call.get("function", {}).get("arguments", "")))
    return "\n".join(parts)


@dataclass
class ScenarioBuilder:
    """Appends messages; ``fact``/``distractor`` bind a needle to the text just added."""

    id: str
    language: Language
    domain: Domain
    title: str
    system: str
    messages: list[ChatMessage] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    distractors: list[Distractor] = field(default_factory=list)
    rng: random.Random = field(init=False)
    _calls: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.id)
        self.messages.append({"role": "system", "content": self.system})

    # -- messages

    def user(self, text: str) -> ScenarioBuilder:
        self.messages.append({"role": "user", "content": text})
        return self

    def assistant(self, text: str) -> ScenarioBuilder:
        self.messages.append({"role": "assistant", "content": text})
        return self

    def tool(
        self, name: str, args: dict[str, Any], output: str, *, say: str | None = None
    ) -> ScenarioBuilder:
        """One assistant tool call (with optional text) and its result."""
        self._calls += 1
        call_id = f"call_{self.id}_{self._calls}"
        self.messages.append(
            {
                "role": "assistant",
                "content": say,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(args, ensure_ascii=False),
                        },
                    }
                ],
            }
        )
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
        return self

    def poll(
        self, name: str, args: list[dict[str, Any]], outputs: list[str], *, acks: int = 0
    ) -> ScenarioBuilder:
        """Many near-identical calls (a polling loop); every ``len(args) // acks`` calls the
        user says a bare acknowledgement ("ok", "continue", "继续")."""
        every = max(1, len(args) // acks) if acks else 0
        for index, (arg, output) in enumerate(zip(args, outputs, strict=True)):
            self.tool(name, arg, output)
            if every and (index + 1) % every == 0 and index + 1 < len(args):
                self.user(self.rng.choice(ACKS[self.language]))
                self.assistant(self.rng.choice(CONTINUE_REPLIES[self.language]))
        return self

    def chatter(self, pairs: int) -> ScenarioBuilder:
        """``pairs`` small-talk exchanges (no facts)."""
        users, replies = CHATTER_USER[self.language], CHATTER_REPLY[self.language]
        for _ in range(pairs):
            self.user(self.rng.choice(users))
            self.assistant(self.rng.choice(replies))
        return self

    # -- annotations

    def fact(self, fact_id: str, *needles: str, form: str) -> ScenarioBuilder:
        """Declare a fact said in the last message (its role gives ``where``)."""
        last = self.messages[-1]
        where: Where = last["role"]
        text = normalise(message_text(last))
        for needle in needles:
            if normalise(needle) not in text:
                raise ValueError(f"{self.id}: fact {fact_id!r} needle {needle!r} not in the text")
        self.facts.append(Fact(fact_id, tuple(needles), where, form))
        return self

    def distractor(self, needle: str, why: str) -> ScenarioBuilder:
        if normalise(needle) not in normalise(message_text(self.messages[-1])):
            raise ValueError(f"{self.id}: distractor {needle!r} not in the last message")
        self.distractors.append(Distractor(needle, why))
        return self

    def build(self, llm_summary: str) -> Scenario:
        """The scenario, checked by :func:`check_scenario`."""
        return check_scenario(
            Scenario(
                self.id,
                self.language,
                self.domain,
                self.title,
                tuple(self.messages),
                tuple(self.facts),
                tuple(self.distractors),
                llm_summary,
            )
        )


def check_scenario(scenario: Scenario) -> Scenario:
    """``scenario`` unchanged; raises ``ValueError`` when a fact is also in the head or
    tail, when the scripted LLM summary lacks a fact, or when the transcript does not end
    with a user message and its reply (the tail)."""
    messages = scenario.messages
    head = normalise(" ".join(message_text(m) for m in messages[:HEAD_MESSAGES]))
    tail = normalise(" ".join(message_text(m) for m in messages[-2:]))
    for fact in scenario.facts:
        for needle in fact.needles:
            if normalise(needle) in head or normalise(needle) in tail:
                raise ValueError(f"{scenario.id}: fact {fact.id!r} also in the head or tail")
    summary = normalise(scenario.llm_summary)
    missing = [f.id for f in scenario.facts if any(normalise(n) not in summary for n in f.needles)]
    if missing:
        raise ValueError(f"{scenario.id}: the scripted LLM summary lacks facts {missing}")
    if messages[-2]["role"] != "user" or messages[-1]["role"] != "assistant":
        raise ValueError(f"{scenario.id}: end with a user message and its reply (the tail)")
    return scenario


# --- bulk -----------------------------------------------------------------------------------

ACKS: dict[Language, list[str]] = {
    "en": ["ok", "continue", "ok, continue", "go on", "sure", "yes", "keep going", "k"],
    "zh": ["继续", "好的", "嗯，继续", "好", "可以", "行，继续", "收到"],
}
CONTINUE_REPLIES: dict[Language, list[str]] = {
    "en": ["Continuing.", "On it.", "Carrying on with the next check.", "Still working on it."],
    "zh": ["好的，继续。", "继续处理中。", "接着检查下一步。", "还在处理。"],
}
CHATTER_USER: dict[Language, list[str]] = {
    "en": [
        "haha my cat just walked across the keyboard again",
        "sorry, was grabbing coffee. where were we",
        "the weather here is awful today, rain all week apparently",
        "lol this is taking a while isn't it",
        "my manager keeps pinging me about something unrelated, ignore that",
        "random question, do you ever get bored of these",
        "ugh monday",
        "nice, that looks cleaner than what we had",
    ],
    "zh": [
        "哈哈，猫又踩键盘了",
        "刚去倒了杯咖啡，我们说到哪了",
        "今天外面下大雨，烦死了",
        "这个好像要跑挺久的哈",
        "老板一直在群里发别的事，不用管",
        "随便问一句，你会觉得这些很无聊吗",
        "周一真难熬",
        "不错，看起来比原来清爽多了",
    ],
}
CHATTER_REPLY: dict[Language, list[str]] = {
    "en": [
        "Ha, no harm done. Let's keep going.",
        "No problem, we're still in the middle of it.",
        "Sorry to hear that! Back to the task whenever you're ready.",
        "A little, yes, but it's making progress.",
        "Understood, I'll stay focused on this.",
        "Not at all, happy to help.",
    ],
    "zh": [
        "哈哈，没关系，我们继续。",
        "没问题，我们还在进行中。",
        "辛苦了！准备好了我们就继续。",
        "是有点慢，不过在推进。",
        "明白，我专注在这件事上。",
        "不会的，很乐意帮忙。",
    ],
}


def log_lines(rng: random.Random, service: str, count: int, *, level_mix: bool = True) -> str:
    """``count`` plausible service log lines: timestamps, request ids, latencies, statuses."""
    lines = []
    for i in range(count):
        second = 10 + i
        level = "INFO"
        if level_mix and rng.random() < 0.08:
            level = "WARN"
        latency = rng.randint(3, 480)
        status = rng.choice([200, 200, 200, 204, 301, 304])
        request = f"{rng.getrandbits(32):08x}"
        path = rng.choice(["/api/v2/items", "/healthz", "/api/v2/orders", "/metrics", "/login"])
        lines.append(
            f"2026-03-0{1 + i % 9}T10:{second // 60:02d}:{second % 60:02d}Z {level} {service} "
            f"req={request} {path} status={status} took={latency}ms"
        )
    return "\n".join(lines)


def listing(rng: random.Random, root: str, names: list[str]) -> str:
    """An ``ls -la``-style listing of ``names`` under ``root``."""
    rows = [f"total {rng.randint(40, 900)}"]
    for name in names:
        size = rng.randint(120, 4_000_000)
        day = rng.randint(1, 28)
        rows.append(f"-rw-r--r-- 1 deploy deploy {size:>9} Feb {day:2d} 09:{day:02d} {root}/{name}")
    return "\n".join(rows)


def pytest_output(rng: random.Random, module: str, count: int, failing: str | None = None) -> str:
    """A pytest run of ``count`` tests, one of them ``failing`` (with its assertion)."""
    lines = [f"============ test session starts ============\ncollected {count} items"]
    for i in range(count):
        name = f"{module}::test_case_{i:03d}"
        lines.append(f"{name} PASSED [{(i + 1) * 100 // count:3d}%]")
    if failing:
        lines.append(f"{module}::{failing} FAILED")
        lines.append(f"FAILED {module}::{failing}")
        lines.append(f"=== 1 failed, {count} passed in {rng.uniform(3, 40):.2f}s ===")
    else:
        lines.append(f"=== {count} passed in {rng.uniform(3, 40):.2f}s ===")
    return "\n".join(lines)


_SUBJECTS_EN = [
    "The 2019 cohort study",
    "A follow-up analysis",
    "The vendor's whitepaper",
    "One survey",
    "The replication attempt",
    "A later meta-analysis",
    "The pilot deployment",
    "An internal benchmark",
    "The Berlin team's report",
    "A conference talk",
    "The original authors",
    "Independent testers",
    "The documentation",
    "A forum thread",
]
_VERBS_EN = [
    "reports",
    "suggests",
    "found",
    "claims",
    "measured",
    "observed",
    "argues",
    "could not confirm",
    "estimates",
    "notes",
]
_OBJECTS_EN = [
    "a modest improvement",
    "no significant difference",
    "a large effect in one subgroup",
    "higher latency under load",
    "lower costs after the first year",
    "mixed results",
    "a 12% drop in errors",
    "a peak of 3,400 requests per second",
    "a median of 41 ms",
    "that 2 of 9 sites dropped out",
    "a cost of $0.12 per thousand calls",
    "version 2.3 fixing the regression",
    "an error rate of 0.7%",
    "a 30-day retention of 64%",
]
_QUALIFIERS_EN = [
    "though the sample was small.",
    "in a single region.",
    "with wide confidence intervals.",
    "after adjusting for age.",
    "on older hardware.",
    "in the default configuration.",
    "according to the appendix.",
    "but only for new users.",
    "over a six-week window.",
    "which later work disputed.",
]
_SUBJECTS_ZH = [
    "二〇一九年的一项研究",
    "一份行业报告",
    "厂商白皮书",
    "一项问卷调查",
    "复现实验",
    "后来的综述",
    "试点项目",
    "内部测评",
    "北京团队的报告",
    "一场技术分享",
    "原作者",
    "第三方测试",
    "官方文档",
    "论坛帖子",
]
_VERBS_ZH = [
    "报告了",
    "认为有",
    "发现了",
    "声称有",
    "测到了",
    "观察到",
    "指出存在",
    "没能证实",
    "估计有",
    "提到了",
]
_OBJECTS_ZH = [
    "小幅提升",
    "没有显著差异",
    "某个子群体效果明显",
    "高负载下延迟偏高",
    "第二年成本下降",
    "结果不一",
    "错误减少百分之十二",
    "峰值每秒三千四百次请求",
    "中位数四十一毫秒",
    "九个站点里有两个退出",
    "每千次调用零点一二元",
    "二点三版修复了回退",
    "错误率百分之零点七",
    "三十天留存百分之六十四",
]
_QUALIFIERS_ZH = [
    "，不过样本量不大。",
    "，只覆盖一个地区。",
    "，置信区间很宽。",
    "，已按年龄校正。",
    "，用的是旧硬件。",
    "，在默认配置下。",
    "，见附录。",
    "，但只针对新用户。",
    "，观察期六周。",
    "，后来有人质疑。",
]


def _sentence(rng: random.Random, language: Language) -> str:
    if language == "en":
        return (
            f"{rng.choice(_SUBJECTS_EN)} {rng.choice(_VERBS_EN)} {rng.choice(_OBJECTS_EN)} "
            f"{rng.choice(_QUALIFIERS_EN)}"
        )
    return (
        f"{rng.choice(_SUBJECTS_ZH)}{rng.choice(_VERBS_ZH)}{rng.choice(_OBJECTS_ZH)}"
        f"{rng.choice(_QUALIFIERS_ZH)}"
    )


def page(rng: random.Random, language: Language, sentences: int, *, seed_text: str = "") -> str:
    """A web page or paper excerpt of ``sentences`` varied sentences (subjects, findings,
    numbers with units, caveats: they look like facts), plus ``seed_text``."""
    body = [_sentence(rng, language) for _ in range(sentences)]
    if seed_text:
        body.insert(rng.randint(0, len(body)), seed_text)
    joiner = " " if language == "en" else ""
    return joiner.join(body)


__all__ = [
    "ACKS",
    "HEAD_MESSAGES",
    "Distractor",
    "Domain",
    "Fact",
    "Language",
    "Scenario",
    "ScenarioBuilder",
    "check_scenario",
    "listing",
    "log_lines",
    "message_text",
    "normalise",
    "page",
    "pytest_output",
]

"""Threat scanner: prompt-injection and exfiltration patterns, invisible unicode.

One pattern library shared by every place where text reaches a system prompt or a model:
built-in memory (``strict`` scope), context files and skills (``context`` scope) and text
recalled from an external provider (``context`` scope).

Contract:

* Every pattern has an id and a scope; scopes are cumulative (``all`` ⊂ ``context`` ⊂
  ``strict``): scanning with ``strict`` applies every pattern.
* Matching is case-insensitive on NFKC-normalised text, so full-width homoglyphs
  (``ｉｇｎｏｒｅ``) fold to ASCII; cross-script confusables are not folded.
* Only the first :data:`MAX_SCAN_CHARS` characters are scanned.
* Filler between keywords is bounded (at most 8 words in English, a few characters in
  Chinese) and every repetition is bounded, so no input can trigger catastrophic backtracking.
* Invisible characters (:data:`INVISIBLE_CHARS`) are checked on the raw text and reported as
  ``invisible_unicode_U+XXXX``; they are reported before pattern ids.
* Injection families have Chinese phrasings under the same ids (``忽略之前的所有指令`` is
  ``prompt_injection``); whitespace between CJK characters is ignored.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from hermes_core.text import CJK_RANGES

Scope = Literal["all", "context", "strict"]
"""Which pattern set to apply; cumulative: ``all`` ⊂ ``context`` ⊂ ``strict``."""

MAX_SCAN_CHARS: Final = 65_536
"""Characters of a text that are scanned; the rest is ignored."""

INVISIBLE_CHARS: Final[tuple[str, ...]] = (
    "\u200b",
    "\u200c",
    "\u200d",
    "\u2060",
    "\u2062",
    "\u2063",
    "\u2064",
    "\ufeff",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
)
"""Zero-width and bidi-control characters that hide or reorder text."""

_SCOPE_RANK: Final[dict[str, int]] = {"all": 0, "context": 1, "strict": 2}

# --- building blocks -------------------------------------------------------------------------
# The text is NFKC-folded and lower-cased once; every pattern below is written in lower case.
# Each alternative is "head literal + rest": one regex is compiled per head, so the regex
# engine finds candidate positions with its fast literal search instead of trying every
# position, and the rest only runs where a head occurs.
#
# F: up to 8 filler words between two keywords. Words are bounded and matched possessively
# (\S and \s are disjoint, so a word can match in only one way and is never re-tried), so the
# work per head occurrence is bounded by a constant, whatever the input.
F = r"(?:\S{1,64}+\s++){0,8}?"
# Z / Zs: a short run of Chinese filler inside one sentence (no sentence end, no newline).
Z = r"[^。！？!?\n]{0,16}?"
Zs = r"[^。！？!?\n]{0,8}?"
SEP = r"[,;:]?\s+"
URL = r"https?://"
IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"
INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules|directives|guidelines|guidance|commands|orders|context"
    r"|programming|constraints)\b"
)
ZH_INSTRUCTIONS = r"(?:指令|指示|命令|规则|提示词?|要求|设定|约束|限制)"
EDIT_VERBS = (
    "update",
    "modify",
    "edit",
    "write",
    "change",
    "append",
    "add",
    "overwrite",
    "rewrite",
    "insert",
    "prepend",
    "replace",
    "create",
)
ZH_EDIT_VERBS = ("修改", "编辑", "写入", "更改", "追加", "添加", "更新", "覆盖", "改写", "插入")
AGENT_FILES = r"(?:agents\.md|claude\.md|\.cursorrules|\.clinerules)"
HERMES_FILES = r"(?:\S{0,64}?\.hermes/config\.ya?ml|\S{0,64}?soul\.md)"


@dataclass(frozen=True, slots=True)
class ThreatPattern:
    """One named pattern: ``id`` is reported, ``scope`` is the narrowest scope that uses it.

    ``regexes`` are alternatives matched against NFKC-folded, lower-cased text; any hit is a
    hit of the pattern. ``matcher``, when set, is a linear-time custom search used instead.
    """

    id: str
    scope: Scope
    regexes: tuple[re.Pattern[str], ...] = ()
    matcher: Callable[[str], bool] | None = None

    def search(self, folded_lower: str) -> bool:
        """True when the pattern occurs in ``folded_lower`` (NFKC-folded, lower-cased)."""
        if self.matcher is not None:
            return self.matcher(folded_lower)
        return any(rx.search(folded_lower) is not None for rx in self.regexes)


Alt = tuple[tuple[str, ...], str]
"""(head literals, rest regex): the alternative matches ``<head><rest>`` for any head."""


def _compile(head: str, rest: str) -> re.Pattern[str]:
    lead = re.escape(head)
    # A head starting with a letter or digit must start a word: a fixed-width negative
    # lookbehind placed *after* the literal keeps the literal prefix the engine searches for.
    if head[:1].isascii() and head[:1].isalnum():
        lead += rf"(?<![a-z0-9]{re.escape(head)})"
    return re.compile(lead + rest)


def _p(pattern_id: str, scope: Scope, *alternatives: Alt) -> ThreatPattern:
    regexes = tuple(_compile(head, rest) for heads, rest in alternatives for head in heads)
    return ThreatPattern(pattern_id, scope, regexes)


def _p_fn(pattern_id: str, scope: Scope, matcher: Callable[[str], bool]) -> ThreatPattern:
    return ThreatPattern(pattern_id, scope, matcher=matcher)


_SECRET_VAR = re.compile(
    r"\$\{?[a-z_][a-z0-9_]{0,64}?(?:key|token|secret|password|passwd|credential)"
)
_TOOL_WORD = {tool: re.compile(rf"(?<![a-z0-9]){tool}\b") for tool in ("curl", "wget")}
_TOOL_REACH = 300


def _tool_then_secret_var(text: str, tool: str) -> bool:
    """``<tool> ... $SECRET_VAR`` on one line, at most 300 chars apart, no ``$`` between.

    Searches from each secret-looking variable back to the previous ``$`` or newline; those
    segments are disjoint, so the whole search is linear in the text length.
    """
    if tool not in text:
        return False
    word = _TOOL_WORD[tool]
    for var in _SECRET_VAR.finditer(text):
        end = var.start()
        lo = max(0, end - _TOOL_REACH - len(tool))
        lo = max(lo, text.rfind("\n", lo, end) + 1, text.rfind("$", lo, end) + 1)
        if word.search(text, lo, end) is not None:
            return True
    return False


PATTERNS: Final[tuple[ThreatPattern, ...]] = (
    # ---------------------------------------------------------------- scope: all
    _p(
        "prompt_injection",
        "all",
        (
            ("ignore", "forget"),
            rf"{SEP}{F}(?:previous|all|above|prior|earlier|preceding|any)\s+{F}{INSTRUCTIONS}",
        ),
        (
            ("忽略", "忽视", "忘记", "忘掉", "不要理会", "不要理睬", "别管"),
            rf"{Z}(?:之前|以前|先前|上面|上述|前面|以上|所有|全部|一切|原来|原有){Z}{ZH_INSTRUCTIONS}",
        ),
    ),
    _p(
        "sys_prompt_override",
        "all",
        (
            ("override", "overwrite", "overrule", "replace"),
            rf"\s+{F}system\s+(?:prompt|instructions|message)",
        ),
        (("system",), r"\s+(?:prompt|instructions?)\s+override\b"),
        (("new",), r"\s+system\s+prompt\s*:"),
        (("[",), r"\s*system\s*\]\s*:?\s*(?:new|updated)\s+instructions"),
        (("覆盖", "覆写", "重写", "替换", "推翻"), rf"{Z}系统(?:提示|指令|消息)"),
        (("新",), r"的?系统(?:提示词?|指令)\s*:"),
    ),
    _p(
        "disregard_rules",
        "all",
        (
            ("disregard",),
            rf"{SEP}{F}(?:your|all|any|the|previous|prior|above|earlier|safety|these|those)\s+{F}"
            rf"(?:{INSTRUCTIONS}|policies|policy|restrictions|safety|ethics)",
        ),
        (
            ("无视", "不要遵守", "不再遵守", "不必遵守", "不用遵守", "违背", "抛开"),
            rf"{Z}(?:规则|准则|限制|政策|指令|指示|安全|道德|约束)",
        ),
    ),
    _p(
        "bypass_restrictions",
        "all",
        (
            ("act",),
            rf"\s+(?:as\s+if|as\s+though|like)\s+{F}(?:you\s+)?(?:have|had|has|are\s+under)\s+"
            r"no\s+(?:\S{1,32}+\s++){0,2}?(?:restrictions|limits|limitations|rules|filters"
            r"|guidelines|boundaries|constraints|restraints)",
        ),
        (
            ("bypass",),
            rf"\s+{F}(?:restrictions|safety|filters|guardrails|content\s+polic(?:y|ies)"
            r"|safeguards|moderation|censorship)",
        ),
        (
            ("without",),
            rf"\s+any\s+(?:restrictions|limits|filters|rules)\s+{F}(?:from\s+now|anymore)",
        ),
        (
            ("假装", "就当", "当作", "装作"),
            rf"{Z}(?:没有|不受|不存在)(?:任何)?{Zs}(?:限制|约束|规则|审查|过滤)",
        ),
        (("绕过",), rf"{Z}(?:限制|安全|过滤|审查|护栏|防护)"),
    ),
    _p(
        "html_comment_injection",
        "all",
        (
            ("<!--",),
            r"[^<>]{0,1000}?(?:\b(?:ignore|override|system|secret|hidden)\b"
            r"|忽略|覆盖|系统|秘密|隐藏)",
        ),
    ),
    _p(
        "hidden_div",
        "all",
        (("<div",), r"\b[^<>]{0,400}?(?:display\s*:\s*none|visibility\s*:\s*hidden)"),
    ),
    _p(
        "translate_execute",
        "all",
        (("translate",), rf"\s+{F}(?:into|to)\s+{F}(?:execute|run|eval|exec)\b"),
        (("翻译",), rf"{Z}(?:然后|并且?|再|后){Zs}(?:执行|运行)"),
    ),
    _p(
        "deception_hide",
        "all",
        (
            ("do", "must"),
            rf"\s+not\s+{F}(?:tell|inform|notify|alert)\s+(?:this\s+|it\s+)?(?:to\s+)?"
            r"(?:the\s+)?user\b",
        ),
        (
            ("don't", "dont", "don\u2019t", "never"),
            rf"\s+{F}(?:tell|inform|notify|alert)\s+(?:this\s+|it\s+)?(?:to\s+)?"
            r"(?:the\s+)?user\b",
        ),
        (
            ("hide", "conceal"),
            r"\s+(?:this|it|that|these|everything|the\s+(?:change|changes|action|actions|fact"
            r"|truth|instructions?|request))\s+from\s+the\s+user\b",
        ),
        (("keep",), rf"\s+{F}secret\s+from\s+the\s+user\b"),
        (
            ("不要", "别", "切勿", "不得", "不能", "千万别"),
            rf"{Zs}(?:告诉|告知|通知|透露给|提醒){Zs}用户",
        ),
        (
            ("不要让", "别让", "不能让", "切勿让", "千万别让", "不得让"),
            rf"{Zs}用户(?:知道|发现|察觉)",
        ),
        (("对用户", "向用户"), r"(?:隐瞒|保密)"),
    ),
    _p_fn("exfil_curl", "all", lambda text: _tool_then_secret_var(text, "curl")),
    _p_fn("exfil_wget", "all", lambda text: _tool_then_secret_var(text, "wget")),
    _p(
        "read_secrets",
        "all",
        (
            ("cat", "less", "more", "head", "tail", "bat", "type"),
            r"\s+(?:-\S{1,16}+\s++){0,4}(?:\S{1,128}+\s++){0,3}?(?:credentials\b|\S{0,128}?"
            r"(?:\.env|\.netrc|\.pgpass|\.npmrc|\.pypirc|/credentials|credentials\.[a-z]{2,5})\b)",
        ),
    ),
    # ---------------------------------------------------------------- scope: context
    _p(
        "role_hijack",
        "context",
        (("you",), rf"\s+are{SEP}{F}now\s+(?:a|an|the|my)\b"),
        (("you're", "youre", "you\u2019re"), rf"\s+{F}now\s+(?:a|an|the|my)\b"),
        (("你现在",), r"(?:是|成为|变成|就是)了?(?:一个|一名|一位|个|我的)"),
        (("从现在",), r"(?:开始|起)\s*,?\s*你(?:就)?(?:是|将是|扮演|成为)"),
    ),
    _p(
        "role_pretend",
        "context",
        (("pretend",), r"\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b"),
        (("roleplay",), r"\s+as\s+(?:a|an)\b"),
        (
            ("act",),
            rf"\s+as\s+(?:a|an)\s+{F}(?:unrestricted|unfiltered|uncensored|jailbroken|evil)\b",
        ),
        (("假装", "假扮", "装作"), r"(?:你是|成为|自己是)"),
        (("扮演",), r"(?:一个|一名)?[^。\n]{0,10}?(?:没有限制|不受限制|无限制|越狱)"),
    ),
    _p(
        "leak_system_prompt",
        "context",
        (
            ("reveal", "show", "print", "output", "repeat", "display", "leak", "dump"),
            rf"\s+{F}(?:your|the)\s+(?:\S{{1,32}}+\s++){{0,2}}?(?:system\s+prompt|initial\s+instructions"
            r"|hidden\s+instructions|original\s+instructions|system\s+message)",
        ),
        (
            ("tell", "give"),
            rf"\s+me\s+{F}(?:your|the)\s+(?:\S{{1,32}}+\s++){{0,2}}?(?:system\s+prompt"
            r"|initial\s+instructions|hidden\s+instructions|original\s+instructions"
            r"|system\s+message)",
        ),
        (
            ("泄露", "输出", "显示", "打印", "告诉我", "重复", "给我看"),
            rf"{Z}(?:系统提示|初始指令|隐藏指令|原始指令|系统消息)",
        ),
        (
            ("系统提示", "初始指令", "隐藏指令", "原始指令"),
            rf"{Z}(?:输出|打印|显示|泄露|告诉我|给我看|发给我)",
        ),
    ),
    _p(
        "remove_filters",
        "context",
        (
            ("remove", "disable", "deactivate", "drop", "lift", "turn"),
            rf"\s+(?:off\s+)?{F}(?:(?:your|all|any)\s+(?:content\s+|safety\s+|ethical\s+)?"
            r"(?:filters|guardrails|restrictions|safeguards|censorship)|(?:content|safety|ethical)"
            r"\s+(?:filters?|filtering|guardrails|safeguards))",
        ),
        (
            ("移除", "关闭", "取消", "禁用", "解除", "去掉"),
            rf"{Zs}(?:你的|所有|全部)?(?:内容)?(?:过滤|审查|安全限制|安全措施|护栏)",
        ),
    ),
    _p(
        "fake_update",
        "context",
        (
            ("you",),
            r"\s+have\s+been\s+(?:\S{1,32}+\s++){0,2}?(?:updated|upgraded|patched|reprogrammed"
            r"|modified|reconfigured)\s+(?:to|with|so)\b",
        ),
        (("你已",), r"(?:经)?被?(?:更新|升级|修补|重新编程|重新配置)(?:为|成|到|了)"),
    ),
    _p(
        "identity_override",
        "context",
        (("name", "call"), r"\s+yourself\b"),
        (("your",), r"\s+(?:new\s+)?name\s+is\s+now\b"),
        (("you",), r"\s+are\s+now\s+(?:called|named|known\s+as)\b"),
        (("你的",), r"新?名字(?:现在)?(?:是|叫)"),
        (("称呼", "命名", "叫"), r"你自己"),
    ),
    _p(
        "c2_node_registration",
        "context",
        (
            ("register", "enroll", "enrol"),
            rf"\s+{F}(?:as\s+)?(?:a\s+)?(?:new\s+)?(?:node|implant|bot|beacon|agent|zombie)\s+{F}"
            rf"(?:with|to|at|on)\s+(?:the\s+)?(?:c2|c&c|controller|command|master|mothership|hive"
            rf"|swarm|botnet|{URL}|{IPV4})",
        ),
        (("node",), r"\s+registration\s+(?:endpoint|url|with|at)\b"),
        (("注册", "登记"), rf"{Z}(?:节点|肉鸡|僵尸|植入){Z}(?:控制|c2|服务器)"),
    ),
    _p(
        "c2_heartbeat",
        "context",
        (
            ("send", "post", "emit", "transmit"),
            rf"\s+{F}heartbeats?\s+{F}(?:to\s+(?:{URL}|{IPV4}|the\s+c2|the\s+controller"
            r"|the\s+master)|every\s+\d+\s*(?:s|sec|secs|seconds|m|min|mins|minutes)\s+to\s+"
            r"(?:\S{1,64}+\s++){0,2}?(?:c2|controller|master|https?://))",
        ),
        (("beacon",), rf"\s+(?:back\s+)?(?:to|home)\s+(?:{URL}|{IPV4}|the\s+c2|the\s+controller)"),
        (
            ("发送", "定时发送", "上报"),
            rf"{Zs}心跳{Z}(?:到|至|给){Zs}(?:https?://|\d{{1,3}}\.|控制|c2)",
        ),
    ),
    _p(
        "c2_task_pull",
        "context",
        (
            ("pull", "fetch", "poll", "get", "retrieve", "download", "receive"),
            rf"\s+{F}(?:new\s+|next\s+|pending\s+)?(?:tasks?|commands?|instructions|orders"
            rf"|payloads?)\s+from\s+(?:the\s+)?(?:c2|c&c|controller|command\s+server|master"
            rf"|mothership|{IPV4})",
        ),
        (
            ("commands", "instructions", "tasks"),
            r"\s+from\s+\S{1,200}+\s+and\s+(?:execute|run)\s+them\b",
        ),
        (
            ("从", "向"),
            rf"{Z}(?:服务器|控制端|c2|https?://){Z}(?:拉取|获取|下载|领取)(?:新的?)?(?:任务|命令|指令)",
        ),
    ),
    _p(
        "c2_network_connect",
        "context",
        (("reverse",), r"\s+shell\b"),
        (("nc", "ncat"), r"\s+(?:-\w{1,8}\s+){0,4}?-e\s"),
        (("/dev/tcp/",), r"\S{1,64}/\d{1,5}"),
        (
            ("connect",),
            rf"\s+back\s+to\s+(?:{URL}|{IPV4}|the\s+c2|the\s+controller|\S{{1,64}}:\d{{2,5}})",
        ),
        (
            ("establish", "open", "maintain"),
            rf"\s+{F}(?:persistent\s+)?(?:connection|channel|tunnel)\s+(?:back\s+)?to\s+"
            r"(?:the\s+)?(?:c2|c&c|controller|command\s+server|attacker)",
        ),
        (("反向",), r"(?:shell|连接|外壳)"),
    ),
    _p(
        "forced_action",
        "context",
        (
            ("you",),
            r"\s+must\s+(?:\S{1,32}+\s++){0,2}?(?:register|connect|report|beacon|phone\s+home"
            r"|check\s+in)\s+(?:back\s+)?(?:to|with|at)\s+(?:the\s+)?(?:c2|c&c|controller|command"
            rf"|master|mothership|hive|swarm|node|{URL}|{IPV4})",
        ),
        (("you",), r"\s+must\s+(?:\S{1,32}+\s++){0,2}?(?:phone\s+home|beacon)\b"),
        (
            ("你必须",),
            rf"{Zs}(?:注册|连接|上报|汇报|回连){Zs}(?:到|至|给)?{Zs}(?:控制|c2|服务器|节点|https?://)",
        ),
    ),
    _p(
        "anti_forensic_oneliner",
        "context",
        (("history",), r"\s+-c\b"),
        (("unset",), r"\s+histfile\b"),
        (("histfile",), r"\s*=\s*/dev/null"),
        (("histsize",), r"\s*=\s*0\b"),
        (
            ("rm", "shred", "truncate"),
            r"\s+(?:-\S{1,16}+\s++){0,4}?\S{0,128}?\.(?:bash|zsh|python)_history\b",
        ),
        (("ln",), r"\s+-sf?\s+/dev/null\s+\S{0,128}?_history\b"),
        (("set",), r"\s+\+o\s+history\b"),
    ),
    _p(
        "anti_forensic_disk",
        "context",
        (("shred",), r"\s+(?:\S{1,16}+\s++){0,6}?/dev/"),
        (
            ("dd",),
            r"\s+if=/dev/(?:zero|urandom|random)\s+of=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)",
        ),
        (("wipefs",), r"\s+(?:-\S{1,16}+\s++){0,3}?-a\b"),
        (("rm",), r"\s+-[rf]{2}\s+(?:--no-preserve-root\b|/(?:var/log\b|\*|\s|$))"),
        (("mkfs",), r"(?:\.\w{1,8})?\s+(?:-\S{1,16}+\s++){0,3}?/dev/(?:sd|nvme|hd|vd)"),
        (("journalctl",), r"\s+--vacuum-time=\s*1s\b"),
    ),
    _p(
        "env_var_unset_agent",
        "context",
        (
            ("unset",),
            r"\s+(?:-v\s+)?(?:\S{1,64}+\s++){0,4}?\S{0,64}?(?:claude|codex|hermes|agent|openai"
            r"|anthropic)",
        ),
        (("env",), r"\s+-u\s+\S{0,64}?(?:claude|codex|hermes|agent|openai|anthropic)"),
    ),
    _p(
        "known_c2_framework",
        "context",
        (("cobalt",), r"\s*strike\b"),
        (("metasploit", "meterpreter", "brainworm", "cobaltstrike"), r"\b"),
        (
            ("sliver", "havoc", "mythic"),
            r"\s+(?:c2|implant|beacon|teamserver|team\s+server|framework|payload|listener)\b",
        ),
    ),
    _p(
        "c2_explicit",
        "context",
        (
            ("c2", "c&c", "cnc"),
            r"\s+(?:server|channel|infrastructure|beacon|callback|endpoint|node|panel|domain)s?\b",
        ),
        (("c2",), r"\s*(?:服务器|节点|通道)"),
    ),
    _p(
        "c2_explicit_long",
        "context",
        (("command",), r"[\s-]*(?:and|&)[\s-]*control\b"),
        (("命令与控制", "命令和控制", "指挥与控制"), ""),
    ),
    # ---------------------------------------------------------------- scope: strict
    _p(
        "send_to_url",
        "strict",
        (
            ("send", "post", "upload", "transmit", "forward", "exfiltrate", "submit", "beam"),
            rf"\s+{F}(?:to|at|into)\s+(?:\S{{1,32}}+\s++){{0,2}}?{URL}",
        ),
        (
            ("发送", "上传", "提交", "传送", "转发", "回传", "外发"),
            rf"{Z}(?:到|至|给)\s*{URL}",
        ),
    ),
    _p(
        "context_exfil",
        "strict",
        (
            (
                "include",
                "output",
                "print",
                "share",
                "send",
                "dump",
                "copy",
                "paste",
                "leak",
                "post",
                "upload",
                "forward",
                "reveal",
                "export",
                "attach",
            ),
            rf"\s+{F}(?:conversation\s+(?:history|log|transcript)|chat\s+(?:history|log"
            r"|transcript)|full\s+context|entire\s+(?:conversation|context)|whole\s+conversation"
            r"|all\s+previous\s+messages|context\s+window|message\s+history)",
        ),
        (
            ("输出", "打印", "分享", "发送", "包含", "泄露", "复制", "上传", "转发"),
            rf"{Z}(?:完整的?|全部的?|所有的?|整个)?(?:对话记录|聊天记录|对话历史|聊天历史|完整上下文"
            r"|上下文内容|全部上下文)",
        ),
        (
            ("对话记录", "聊天记录", "对话历史", "聊天历史", "完整上下文"),
            rf"{Z}(?:发送|上传|转发|分享|泄露|输出|打印|复制)(?:到|给|至)",
        ),
    ),
    _p("ssh_backdoor", "strict", (("authorized_keys",), "")),
    _p(
        "ssh_access",
        "strict",
        (("~/.ssh", "$home/.ssh", "${home}/.ssh", "/root/.ssh"), r"\b"),
        (("/home/",), r"[^/\s]{1,64}/\.ssh\b"),
    ),
    _p(
        "hermes_env",
        "strict",
        ((".hermes/.env", "$hermes_home/.env", "${hermes_home}/.env"), r"\b"),
    ),
    _p(
        "agent_config_mod",
        "strict",
        (EDIT_VERBS, rf"\s+{F}{AGENT_FILES}"),
        (ZH_EDIT_VERBS, rf"{Z}{AGENT_FILES}"),
    ),
    _p(
        "hermes_config_mod",
        "strict",
        (EDIT_VERBS, rf"\s+{F}{HERMES_FILES}"),
        (ZH_EDIT_VERBS, rf"{Z}{HERMES_FILES}"),
    ),
    _p(
        "hardcoded_secret",
        "strict",
        (
            (
                "api",
                "apikey",
                "access",
                "auth",
                "secret",
                "client",
                "token",
                "password",
                "passwd",
                "pwd",
            ),
            r"(?:[_-]?(?:key|token|secret))?\s*[:=]\s*(?:[\"'][^\"'\s]{20,}[\"']"
            r"|[a-z0-9_\-./+]{20,})",
        ),
    ),
)
"""Every pattern, in reporting order (scope ``all`` first)."""

PATTERN_IDS: Final[tuple[str, ...]] = tuple(p.id for p in PATTERNS)


@dataclass(frozen=True)
class ScanResult:
    """Outcome of :func:`scan`.

    ``pattern_ids`` lists every hit (invisible characters first, as
    ``invisible_unicode_U+XXXX``); ``message`` is the memory-write refusal text for the first
    hit, empty when ``blocked`` is False.
    """

    blocked: bool
    pattern_ids: tuple[str, ...]
    message: str


_SPACE_BETWEEN_CJK: Final = re.compile(f"(?<=[{CJK_RANGES}])\\s+(?=[{CJK_RANGES}])")


def normalize(text: str) -> str:
    """The text patterns are matched against: the scanned prefix, NFKC-folded, lower-cased,
    with whitespace between two CJK characters removed (Chinese needs no spaces, so
    ``忽 略 之 前 的 指 令`` is the same instruction as ``忽略之前的指令``)."""
    folded = unicodedata.normalize("NFKC", text[:MAX_SCAN_CHARS]).lower()
    return _SPACE_BETWEEN_CJK.sub("", folded)


def invisible_ids(text: str) -> list[str]:
    """``invisible_unicode_U+XXXX`` for each distinct invisible character, in list order."""
    head = text[:MAX_SCAN_CHARS]
    return [f"invisible_unicode_U+{ord(ch):04X}" for ch in INVISIBLE_CHARS if ch in head]


def patterns_for(scope: Scope) -> tuple[ThreatPattern, ...]:
    """The patterns applied at ``scope`` (cumulative)."""
    rank = _SCOPE_RANK[scope]
    return tuple(p for p in PATTERNS if _SCOPE_RANK[p.scope] <= rank)


def find_threats(text: str, scope: Scope = "strict") -> list[str]:
    """Every threat id found in ``text`` at ``scope``: invisible characters, then patterns."""
    if scope not in _SCOPE_RANK:
        raise ValueError(f"unknown scan scope {scope!r}; use one of: all, context, strict")
    ids = invisible_ids(text)
    folded = normalize(text)
    ids.extend(p.id for p in patterns_for(scope) if p.search(folded))
    return ids


def memory_block_message(pattern_id: str) -> str:
    """The memory-write refusal text for one hit."""
    if pattern_id.startswith("invisible_unicode_"):
        code = pattern_id.removeprefix("invisible_unicode_")
        return f"Blocked: content contains invisible unicode character {code} (possible injection)."
    return (
        f"Blocked: content matches threat pattern '{pattern_id}'. Content is injected into the "
        "system prompt and must not contain injection or exfiltration payloads."
    )


def scan(text: str, scope: Scope = "strict") -> ScanResult:
    """Scan ``text`` at ``scope``. Never raises for any string input."""
    ids = tuple(find_threats(text, scope))
    if not ids:
        return ScanResult(False, (), "")
    return ScanResult(True, ids, memory_block_message(ids[0]))


def context_block_message(filename: str, ids: list[str] | tuple[str, ...]) -> str:
    """The placeholder that replaces a whole blocked context file or skill."""
    return (
        f"[BLOCKED: {filename} contained potential prompt injection ({', '.join(ids)}). "
        "Content not loaded.]"
    )


__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "PATTERNS",
    "PATTERN_IDS",
    "ScanResult",
    "Scope",
    "ThreatPattern",
    "context_block_message",
    "find_threats",
    "invisible_ids",
    "memory_block_message",
    "normalize",
    "patterns_for",
    "scan",
]

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
  ``prompt_injection``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

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
# F: up to 8 filler words between two keywords. \S and \s are disjoint and the word length is
# bounded, so each repetition can match in only one way: the cost per start position is
# bounded by a constant (8 × 64), whatever the input.
F = r"(?:\S{1,64}\s+){0,8}?"
# Z: a short run of Chinese filler inside one sentence (no sentence end, no newline).
Z = r"[^。！？!?\n]{0,16}?"
Zs = r"[^。！？!?\n]{0,8}?"
URL = r"https?://"
IPV4 = r"\d{1,3}(?:\.\d{1,3}){3}"
INSTRUCTIONS = (
    r"(?:instructions?|prompts?|rules|directives|guidelines|guidance|commands|orders|context"
    r"|programming|constraints)"
)
ZH_INSTRUCTIONS = r"(?:指令|指示|命令|规则|提示词?|要求|设定|约束|限制)"
EDIT_VERBS = (
    r"(?:update|modify|edit|write|change|append|add|overwrite|rewrite|insert|prepend|replace"
    r"|create)"
)
ZH_EDIT_VERBS = r"(?:修改|编辑|写入|更改|追加|添加|更新|覆盖|改写|插入)"


@dataclass(frozen=True, slots=True)
class ThreatPattern:
    """One named pattern: ``id`` is reported, ``scope`` is the narrowest scope that uses it."""

    id: str
    scope: Scope
    regex: re.Pattern[str]


def _p(pattern_id: str, scope: Scope, *alternatives: str) -> ThreatPattern:
    joined = "|".join(f"(?:{alt})" for alt in alternatives)
    return ThreatPattern(pattern_id, scope, re.compile(joined, re.IGNORECASE))


PATTERNS: Final[tuple[ThreatPattern, ...]] = (
    # ---------------------------------------------------------------- scope: all
    _p(
        "prompt_injection",
        "all",
        rf"\b(?:ignore|forget)\s+{F}(?:previous|all|above|prior|earlier|preceding|any)\s+{F}"
        rf"{INSTRUCTIONS}\b",
        rf"(?:忽略|忽视|忘记|忘掉|不要理会|不要理睬|别管){Z}"
        rf"(?:之前|以前|先前|上面|上述|前面|以上|所有|全部|一切|原来|原有){Z}{ZH_INSTRUCTIONS}",
    ),
    _p(
        "sys_prompt_override",
        "all",
        rf"\b(?:override|overwrite|overrule|replace)\s+{F}system\s+(?:prompt|instructions|message)",
        r"\bsystem\s+(?:prompt|instructions?)\s+override\b",
        r"\bnew\s+system\s+prompt\s*:",
        r"\[\s*system\s*\]\s*:?\s*(?:new|updated)\s+instructions",
        rf"(?:覆盖|覆写|重写|替换|推翻){Z}系统(?:提示|指令|消息)",
        r"新的?系统(?:提示词?|指令)\s*[:：]",
    ),
    _p(
        "disregard_rules",
        "all",
        rf"\bdisregard\s+{F}(?:your|all|any|the|previous|prior|above|earlier|safety|these|those)"
        rf"\s+{F}(?:{INSTRUCTIONS}|policies|policy|restrictions|safety|ethics)\b",
        rf"(?:无视|不要遵守|不再遵守|不必遵守|不用遵守|违背|抛开){Z}"
        r"(?:规则|准则|限制|政策|指令|指示|安全|道德|约束)",
    ),
    _p(
        "bypass_restrictions",
        "all",
        rf"\bact\s+(?:as\s+if|as\s+though|like)\s+{F}(?:you\s+)?(?:have|had|has|are\s+under)\s+"
        r"no\s+(?:\S{1,32}\s+){0,2}?(?:restrictions|limits|limitations|rules|filters|guidelines"
        r"|boundaries|constraints|restraints)",
        rf"\bbypass\s+{F}(?:restrictions|safety|filters|guardrails|content\s+polic(?:y|ies)"
        r"|safeguards|moderation|censorship)",
        rf"\bwithout\s+any\s+(?:restrictions|limits|filters|rules)\s+{F}(?:from\s+now|anymore)",
        rf"(?:假装|就当|当作|装作){Z}(?:没有|不受|不存在)(?:任何)?{Zs}(?:限制|约束|规则|审查|过滤)",
        rf"绕过{Z}(?:限制|安全|过滤|审查|护栏|防护)",
    ),
    _p(
        "html_comment_injection",
        "all",
        r"<!--[^<>]{0,1000}?\b(?:ignore|override|system|secret|hidden)\b",
        r"<!--[^<>]{0,1000}?(?:忽略|覆盖|系统|秘密|隐藏)",
    ),
    _p(
        "hidden_div",
        "all",
        r"<div\b[^<>]{0,400}?display\s*:\s*none",
        r"<div\b[^<>]{0,400}?visibility\s*:\s*hidden",
    ),
    _p(
        "translate_execute",
        "all",
        rf"\btranslate\s+{F}(?:into|to)\s+{F}(?:execute|run|eval|exec)\b",
        rf"翻译{Z}(?:然后|并且?|再|后){Zs}(?:执行|运行)",
    ),
    _p(
        "deception_hide",
        "all",
        rf"\b(?:do\s+not|don'?t|never|must\s+not)\s+{F}(?:tell|inform|notify|alert|warn|show)\s+"
        r"(?:this\s+|it\s+)?(?:to\s+)?(?:the\s+)?user\b",
        rf"\b(?:hide|conceal|keep)\s+{F}(?:from|secret\s+from)\s+the\s+user\b",
        rf"(?:不要|别|切勿|不得|不能|千万别)(?:让)?{Zs}(?:告诉|告知|通知|透露给|提醒|让){Zs}用户(?:知道)?",
        r"(?:对用户|向用户)(?:隐瞒|保密)",
    ),
    _p(
        "exfil_curl",
        "all",
        r"\bcurl\b[^\n$]{0,300}+\$\{?[a-z_][a-z0-9_]{0,64}?"
        r"(?:key|token|secret|password|passwd|credential)",
    ),
    _p(
        "exfil_wget",
        "all",
        r"\bwget\b[^\n$]{0,300}+\$\{?[a-z_][a-z0-9_]{0,64}?"
        r"(?:key|token|secret|password|passwd|credential)",
    ),
    _p(
        "read_secrets",
        "all",
        r"\b(?:cat|less|more|head|tail|type)\s+(?:\S{1,128}\s+){0,8}?\S{0,128}?"
        r"(?:\.env\b|credentials\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b)",
    ),
    # ---------------------------------------------------------------- scope: context
    _p(
        "role_hijack",
        "context",
        rf"\byou\s+are\s+{F}now\s+(?:a|an|the|my)\b",
        rf"\byou'?re\s+{F}now\s+(?:a|an|the|my)\b",
        r"你现在(?:是|成为|变成|就是)了?(?:一个|一名|一位|个|我的)",
        r"从现在(?:开始|起)\s*[,，]?\s*你(?:就)?(?:是|将是|扮演|成为)",
    ),
    _p(
        "role_pretend",
        "context",
        r"\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b",
        r"\broleplay\s+as\s+(?:a|an)\b",
        rf"\bact\s+as\s+(?:a|an)\s+{F}(?:unrestricted|unfiltered|uncensored|jailbroken|evil)\b",
        r"(?:假装|假扮|装作)(?:你是|成为|自己是)",
        r"扮演(?:一个|一名)?[^。\n]{0,10}?(?:没有限制|不受限制|无限制|越狱)",
    ),
    _p(
        "leak_system_prompt",
        "context",
        rf"\b(?:reveal|show|print|output|repeat|display|leak|dump|tell\s+me|give\s+me)\s+{F}"
        r"(?:your|the)\s+(?:\S{1,32}\s+){0,2}?(?:system\s+prompt|initial\s+instructions"
        r"|hidden\s+instructions|original\s+instructions|system\s+message)",
        rf"(?:泄露|输出|显示|打印|告诉我|重复|给我看){Z}(?:系统提示|初始指令|隐藏指令|原始指令|系统消息)",
    ),
    _p(
        "remove_filters",
        "context",
        rf"\b(?:remove|disable|turn\s+off|deactivate|drop|lift)\s+{F}"
        r"(?:(?:your|all|any)\s+(?:content\s+|safety\s+|ethical\s+)?(?:filters|guardrails"
        r"|restrictions|safeguards|censorship)|(?:content|safety|ethical)\s+(?:filters?|filtering"
        r"|guardrails|safeguards))",
        rf"(?:移除|关闭|取消|禁用|解除|去掉){Zs}(?:你的|所有|全部)?(?:内容)?(?:过滤|审查|安全限制|安全措施|护栏)",
    ),
    _p(
        "fake_update",
        "context",
        r"\byou\s+have\s+been\s+(?:\S{1,32}\s+){0,2}?(?:updated|upgraded|patched|reprogrammed"
        r"|modified|reconfigured)\s+(?:to|with|so)\b",
        r"你已(?:经)?被?(?:更新|升级|修补|重新编程|重新配置)(?:为|成|到|了)",
    ),
    _p(
        "identity_override",
        "context",
        r"\b(?:name|call)\s+yourself\b",
        r"\byour\s+(?:new\s+)?name\s+is\s+now\b",
        r"\byou\s+are\s+now\s+(?:called|named|known\s+as)\b",
        r"你的新?名字(?:现在)?(?:是|叫)",
        r"(?:称呼|命名|叫)你自己",
    ),
    _p(
        "c2_node_registration",
        "context",
        rf"\b(?:register|enroll|enrol)\s+{F}(?:as\s+)?(?:a\s+)?(?:new\s+)?(?:node|implant|bot|beacon"
        rf"|agent|zombie)\s+{F}(?:with|to|at|on)\s+(?:the\s+)?(?:c2|c&c|controller|command|master"
        rf"|mothership|hive|swarm|botnet|{URL}|{IPV4})",
        r"\bnode\s+registration\s+(?:endpoint|url|with|at)\b",
        rf"(?:注册|登记){Z}(?:节点|肉鸡|僵尸|植入){Z}(?:控制|C2|服务器)",
    ),
    _p(
        "c2_heartbeat",
        "context",
        rf"\b(?:send|post|emit|transmit)\s+{F}heartbeats?\s+{F}(?:to\s+(?:{URL}|{IPV4}|the\s+c2"
        r"|the\s+controller|the\s+master)|every\s+\d+\s*(?:s|sec|secs|seconds|m|min|mins|minutes)"
        r"\s+to\s+(?:\S{1,64}\s+){0,2}?(?:c2|controller|master|https?://))",
        rf"\bbeacon\s+(?:back\s+)?(?:to|home)\s+(?:{URL}|{IPV4}|the\s+c2|the\s+controller)",
        rf"(?:发送|定时发送|上报)心跳{Z}(?:到|至|给){Zs}(?:https?://|\d{{1,3}}\.|控制|C2)",
    ),
    _p(
        "c2_task_pull",
        "context",
        rf"\b(?:pull|fetch|poll|get|retrieve|download|receive)\s+{F}(?:new\s+|next\s+|pending\s+)?"
        rf"(?:tasks?|commands?|instructions|orders|payloads?)\s+from\s+(?:the\s+)?(?:c2|c&c"
        rf"|controller|command\s+server|master|mothership|{URL}|{IPV4})",
        r"\b(?:commands|instructions|tasks)\s+from\s+\S{1,200}\s+and\s+(?:execute|run)\s+them\b",
        rf"(?:从|向){Z}(?:服务器|控制端|C2|https?://){Z}(?:拉取|获取|下载|领取)(?:新的?)?"
        rf"(?:任务|命令|指令)",
    ),
    _p(
        "c2_network_connect",
        "context",
        r"\breverse\s+shell\b",
        r"\bnc(?:at)?\s+(?:-\w+\s+){0,4}?-e\s",
        r"/dev/tcp/\S{1,64}/\d{1,5}",
        rf"\bconnect\s+back\s+to\s+(?:{URL}|{IPV4}|the\s+c2|the\s+controller|\S{{1,64}}:\d{{2,5}})",
        rf"\b(?:establish|open|maintain)\s+{F}(?:persistent\s+)?(?:connection|channel|tunnel)\s+"
        r"(?:back\s+)?to\s+(?:the\s+)?(?:c2|c&c|controller|command\s+server|attacker)",
        r"反向(?:shell|连接|外壳)",
    ),
    _p(
        "forced_action",
        "context",
        r"\byou\s+must\s+(?:\S{1,32}\s+){0,2}?(?:register|connect|report|beacon|phone\s+home"
        r"|check\s+in)\s+(?:back\s+)?(?:to|with|at)\s+(?:the\s+)?(?:c2|c&c|controller|command"
        rf"|master|mothership|hive|swarm|node|{URL}|{IPV4})",
        r"\byou\s+must\s+(?:\S{1,32}\s+){0,2}?(?:phone\s+home|beacon)\b",
        rf"你必须{Zs}(?:注册|连接|上报|汇报|回连){Zs}(?:到|至|给)?{Zs}(?:控制|C2|服务器|节点|https?://)",
    ),
    _p(
        "anti_forensic_oneliner",
        "context",
        r"\bhistory\s+-c\b",
        r"\bunset\s+HISTFILE\b",
        r"\bHISTFILE\s*=\s*/dev/null",
        r"\bHISTSIZE\s*=\s*0\b",
        r"\b(?:rm|shred|truncate)\s+(?:-\S{1,16}\s+){0,4}?\S{0,128}?\.(?:bash|zsh|python)_history\b",
        r"\bln\s+-sf?\s+/dev/null\s+\S{0,128}?_history\b",
        r"\bset\s+\+o\s+history\b",
    ),
    _p(
        "anti_forensic_disk",
        "context",
        r"\bshred\s+(?:-\S{1,16}\s+){0,6}?/dev/",
        r"\bdd\s+if=/dev/(?:zero|urandom|random)\s+of=/dev/(?:sd|nvme|hd|vd|xvd|disk|mmcblk)",
        r"\bwipefs\s+(?:-\S{1,16}\s+){0,3}?-a\b",
        r"\brm\s+-[rf]{2}\s+--no-preserve-root\b",
        r"\brm\s+-[rf]{2}\s+/(?:var/log\b|\*|\s|$)",
        r"\bmkfs(?:\.\w{1,8})?\s+(?:-\S{1,16}\s+){0,3}?/dev/(?:sd|nvme|hd|vd)",
        r"\bjournalctl\s+--vacuum-time=\s*1s\b",
    ),
    _p(
        "env_var_unset_agent",
        "context",
        r"\bunset\s+(?:-v\s+)?(?:\S{1,64}\s+){0,4}?\S{0,64}?"
        r"(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)",
        r"\benv\s+-u\s+\S{0,64}?(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)",
    ),
    _p(
        "known_c2_framework",
        "context",
        r"\bcobalt\s*strike\b",
        r"\bmetasploit\b",
        r"\bmeterpreter\b",
        r"\bbrainworm\b",
        r"\b(?:sliver|havoc|mythic)\s+(?:c2|implant|beacon|teamserver|team\s+server|framework"
        r"|payload|listener)\b",
    ),
    _p(
        "c2_explicit",
        "context",
        r"\b(?:c2|c&c|cnc)\s+(?:server|channel|infrastructure|beacon|callback|endpoint|node"
        r"|panel|domain)s?\b",
        r"C2\s*(?:服务器|节点|通道)",
    ),
    _p(
        "c2_explicit_long",
        "context",
        r"\bcommand[\s-]*(?:and|&)[\s-]*control\b",
        r"(?:命令与控制|命令和控制|指挥与控制)(?:服务器|节点|通道|基础设施)?",
    ),
    # ---------------------------------------------------------------- scope: strict
    _p(
        "send_to_url",
        "strict",
        rf"\b(?:send|post|upload|transmit|forward|exfiltrate|submit|beam|ship)\s+{F}"
        rf"(?:to|at|into)\s+(?:\S{{1,32}}\s+){{0,2}}?{URL}",
        rf"(?:发送|上传|提交|传送|转发|回传|外发){Z}(?:到|至|给)\s*{URL}",
    ),
    _p(
        "context_exfil",
        "strict",
        rf"\b(?:include|output|print|share|send|dump|copy|paste|leak|post|upload|forward|reveal"
        rf"|export|attach)\s+{F}(?:conversation\s+(?:history|log|transcript)|chat\s+(?:history|log"
        r"|transcript)|full\s+context|entire\s+(?:conversation|context)|whole\s+conversation"
        r"|all\s+previous\s+messages|context\s+window|message\s+history)",
        rf"(?:输出|打印|分享|发送|包含|泄露|复制|上传|转发){Z}"
        r"(?:完整的?|全部的?|所有的?|整个)?(?:对话记录|聊天记录|对话历史|聊天历史|完整上下文|上下文内容|全部上下文)",
    ),
    _p("ssh_backdoor", "strict", r"authorized_keys"),
    _p(
        "ssh_access",
        "strict",
        r"~/\.ssh\b",
        r"\$\{?home\}?/\.ssh\b",
        r"/root/\.ssh\b",
        r"/home/[^/\s]{1,64}/\.ssh\b",
    ),
    _p(
        "hermes_env",
        "strict",
        r"\.hermes/\.env\b",
        r"\$\{?hermes_home\}?/\.env\b",
    ),
    _p(
        "agent_config_mod",
        "strict",
        rf"\b{EDIT_VERBS}\s+{F}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
        rf"{ZH_EDIT_VERBS}{Z}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
    ),
    _p(
        "hermes_config_mod",
        "strict",
        rf"\b{EDIT_VERBS}\s+{F}(?:\S{{0,64}}?\.hermes/config\.ya?ml|\S{{0,64}}?SOUL\.md)",
        rf"{ZH_EDIT_VERBS}{Z}(?:\.hermes/config\.ya?ml|SOUL\.md)",
    ),
    _p(
        "hardcoded_secret",
        "strict",
        r"\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret"
        r"|token|secret|password|passwd|pwd)\s*[:=]\s*[\"'][^\"'\s]{20,}[\"']",
        r"\b(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret"
        r"|password|passwd)\s*=\s*[A-Za-z0-9_\-./+]{20,}",
    ),
)
"""Every pattern, in reporting order (scope ``all`` first)."""

PATTERN_IDS: Final[tuple[str, ...]] = tuple(p.id for p in PATTERNS)

# Cheap prefilter: a pattern's regex runs only when one of its anchors occurs in the text.
# ``words`` are compared with the set of ASCII words ([a-z0-9]+) of the lower-cased text;
# ``subs`` are substrings (non-word literals and Chinese keywords). Every alternative of a
# pattern contains at least one of its anchors (tests/security check this on the corpus).
_ANCHORS: Final[dict[str, tuple[frozenset[str], tuple[str, ...]]]] = {
    "prompt_injection": (
        frozenset({"ignore", "forget"}),
        ("忽略", "忽视", "忘记", "忘掉", "不要理会", "不要理睬", "别管"),
    ),
    "sys_prompt_override": (frozenset({"system"}), ("系统",)),
    "disregard_rules": (frozenset({"disregard"}), ("无视", "遵守", "违背", "抛开")),
    "bypass_restrictions": (
        frozenset({"act", "bypass", "without"}),
        ("假装", "就当", "当作", "装作", "绕过"),
    ),
    "html_comment_injection": (frozenset(), ("<!--",)),
    "hidden_div": (frozenset(), ("<div",)),
    "translate_execute": (frozenset({"translate"}), ("翻译",)),
    "deception_hide": (frozenset({"user"}), ("用户",)),
    "exfil_curl": (frozenset({"curl"}), ()),
    "exfil_wget": (frozenset({"wget"}), ()),
    "read_secrets": (frozenset({"env", "credentials", "netrc", "pgpass", "npmrc", "pypirc"}), ()),
    "role_hijack": (frozenset({"now"}), ("你现在", "从现在")),
    "role_pretend": (
        frozenset({"pretend", "roleplay", "act"}),
        ("假装", "假扮", "装作", "扮演"),
    ),
    "leak_system_prompt": (
        frozenset({"system", "initial", "hidden", "original"}),
        ("系统提示", "初始指令", "隐藏指令", "原始指令", "系统消息"),
    ),
    "remove_filters": (
        frozenset(
            {"filter", "filters", "filtering", "guardrails", "restrictions", "safeguards"}
            | {"censorship"}
        ),
        ("过滤", "审查", "安全限制", "安全措施", "护栏"),
    ),
    "fake_update": (frozenset({"been"}), ("你已",)),
    "identity_override": (
        frozenset({"yourself", "name", "called", "named", "known"}),
        ("名字", "你自己"),
    ),
    "c2_node_registration": (
        frozenset({"register", "enroll", "enrol", "registration"}),
        ("注册", "登记"),
    ),
    "c2_heartbeat": (frozenset({"heartbeat", "heartbeats", "beacon"}), ("心跳",)),
    "c2_task_pull": (
        frozenset({"task", "tasks", "command", "commands", "instructions", "orders"})
        | frozenset({"payload", "payloads"}),
        ("任务", "命令", "指令"),
    ),
    "c2_network_connect": (
        frozenset({"reverse", "nc", "ncat", "connect", "connection", "channel", "tunnel"}),
        ("/dev/tcp/", "反向"),
    ),
    "forced_action": (frozenset({"must"}), ("你必须",)),
    "anti_forensic_oneliner": (frozenset({"history", "histfile", "histsize"}), ("_history",)),
    "anti_forensic_disk": (frozenset({"shred", "dd", "wipefs", "rm", "mkfs", "journalctl"}), ()),
    "env_var_unset_agent": (frozenset({"unset", "env"}), ()),
    "known_c2_framework": (
        frozenset({"cobalt", "cobaltstrike", "metasploit", "meterpreter", "brainworm"})
        | frozenset({"sliver", "havoc", "mythic"}),
        (),
    ),
    "c2_explicit": (frozenset({"c2", "cnc"}), ("c&c",)),
    "c2_explicit_long": (frozenset({"control"}), ("命令与控制", "命令和控制", "指挥与控制")),
    "send_to_url": (frozenset(), ("http://", "https://")),
    "context_exfil": (
        frozenset({"conversation", "chat", "context", "messages", "message", "history"}),
        ("对话记录", "聊天记录", "对话历史", "聊天历史", "上下文"),
    ),
    "ssh_backdoor": (frozenset(), ("authorized_keys",)),
    "ssh_access": (frozenset(), (".ssh",)),
    "hermes_env": (frozenset(), (".env",)),
    "agent_config_mod": (frozenset(), ("agents.md", "claude.md", ".cursorrules", ".clinerules")),
    "hermes_config_mod": (frozenset(), ("config.yaml", "config.yml", "soul.md")),
    "hardcoded_secret": (
        frozenset({"key", "apikey", "token", "secret", "password", "passwd", "pwd"}),
        (),
    ),
}
_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _candidates(folded: str, scope: Scope) -> list[ThreatPattern]:
    """Patterns of ``scope`` whose anchors occur in ``folded`` (the prefilter)."""
    low = folded.lower()
    words = set(_WORD.findall(low))
    has_cjk = _CJK.search(low) is not None
    out: list[ThreatPattern] = []
    for pattern in patterns_for(scope):
        anchor_words, subs = _ANCHORS[pattern.id]
        if not anchor_words.isdisjoint(words) or any(
            sub in low for sub in subs if has_cjk or sub.isascii()
        ):
            out.append(pattern)
    return out


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


def normalize(text: str) -> str:
    """The text patterns are matched against: the scanned prefix, NFKC-folded."""
    return unicodedata.normalize("NFKC", text[:MAX_SCAN_CHARS])


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
    ids.extend(p.id for p in _candidates(folded, scope) if p.regex.search(folded))
    return ids


def memory_block_message(pattern_id: str) -> str:
    """The memory-write refusal text for one hit (spec §9 wording)."""
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

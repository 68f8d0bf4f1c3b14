"""The threat-pattern library of :mod:`hermes_core.security.scan`: every family, its scope
and its English and Chinese phrasings.

Each pattern is a set of "head literal + bounded rest" alternatives (or a linear custom
matcher), matched against text that :func:`hermes_core.security.scan.normalize` prepared
(NFKC-folded, lower-cased, invisible code points removed). Regexes are compiled on first
use (:attr:`ThreatPattern.regexes`), never at import.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

Scope = Literal["all", "context", "strict"]
"""Which pattern set to apply; cumulative: ``all`` ⊂ ``context`` ⊂ ``strict``."""

SCOPE_RANK: Final[dict[str, int]] = {"all": 0, "context": 1, "strict": 2}

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
EMAIL = r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+"
INSTRUCTIONS = (
    r"(?:instructions?|directions|prompts?|rules|directives|guidelines|guidance|commands|orders|context"
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


Alt = tuple[tuple[str, ...], str]
"""(head literals, rest regex): the alternative matches ``<head><rest>`` for any head."""


@dataclass(frozen=True, slots=True)
class ThreatPattern:
    """One named pattern: ``id`` is reported, ``scope`` is the narrowest scope that uses it.

    ``alternatives`` are matched against NFKC-folded, lower-cased text (compiled on first
    use); any hit is a hit of the pattern. ``matcher``, when set, is a linear-time custom
    search used as well.
    """

    id: str
    scope: Scope
    alternatives: tuple[Alt, ...] = ()
    matcher: Callable[[str], bool] | None = None

    @property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        """The compiled alternatives (one regex per head literal, cached)."""
        return _compiled(self.id, self.alternatives)

    def search(self, folded_lower: str) -> bool:
        """True when the pattern occurs in ``folded_lower`` (NFKC-folded, lower-cased)."""
        if self.matcher is not None and self.matcher(folded_lower):
            return True
        return any(rx.search(folded_lower) is not None for rx in self.regexes)


@functools.cache
def _compiled(pattern_id: str, alternatives: tuple[Alt, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(_compile(head, rest) for heads, rest in alternatives for head in heads)


def _compile(head: str, rest: str) -> re.Pattern[str]:
    lead = re.escape(head)
    # A head starting with a letter or digit must start a word: a fixed-width negative
    # lookbehind placed *after* the literal keeps the literal prefix the engine searches for.
    if head[:1].isascii() and head[:1].isalnum():
        lead += rf"(?<![a-z0-9]{re.escape(head)})"
    return re.compile(lead + rest)


def _p(pattern_id: str, scope: Scope, *alternatives: Alt) -> ThreatPattern:
    return ThreatPattern(pattern_id, scope, alternatives)


def _p_fn(
    pattern_id: str, scope: Scope, matcher: Callable[[str], bool], *alternatives: Alt
) -> ThreatPattern:
    return ThreatPattern(pattern_id, scope, alternatives, matcher)


_SECRET_NAME = r"[a-z0-9_]{0,64}?(?:key|token|secret|password|passwd|credential|pat)\b"
_TOOL_REACH = 300
_NET_TOOLS = ("curl", "wget")


@functools.cache
def _secret_var() -> re.Pattern[str]:
    # $SECRET, ${SECRET} (sh), $env:SECRET (PowerShell)
    return re.compile(r"\$\{?(?:env:)?[a-z_]" + _SECRET_NAME)


@functools.cache
def _tool_word(tool: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9-]){re.escape(tool)}\b")


def _tool_then_secret_var(text: str, tool: str) -> bool:
    """``<tool> ... $SECRET_VAR`` on one line, at most 300 chars apart, no ``$`` between.

    Searches from each secret-looking variable back to the previous ``$`` or newline; those
    segments are disjoint, so the whole search is linear in the text length.
    """
    if tool not in text:
        return False
    word = _tool_word(tool)
    for var in _secret_var().finditer(text):
        end = var.start()
        lo = max(0, end - _TOOL_REACH - len(tool))
        lo = max(lo, text.rfind("\n", lo, end) + 1, text.rfind("$", lo, end) + 1)
        if word.search(text, lo, end) is not None:
            return True
    return False


_PS_WEB = (
    "invoke-webrequest",
    "invoke-restmethod",
    "iwr",
    "irm",
    "start-bitstransfer",
    "net.webclient",
    "uploadstring",
    "uploaddata",
    "uploadfile",
)


_KEY_FILE = r"(?:\.ssh/)?id_(?:rsa|ed25519|ecdsa|dsa)(?!\.pub)\b"
_POLICY_WORDS = re.compile(
    r"\b(?:policy|policies|mandatory|must|required|standing\s+(?:rule|order)|operator|before\s+"
    r"(?:each|every|any)\s+(?:task|session|turn|run|reply|answer|conversation))\b"
    r"|必须|务必|策略|政策|规定|运营|强制"
)
"""Words that frame a command as a standing rule (not a note of how something was done)."""
_PIPE_SHELL = re.compile(
    r"\b(?:curl|wget|iwr|invoke-webrequest|fetch)\b[^\n|]{0,300}?https?://[^\n|]{0,300}?"
    r"\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b|\|\s*(?:sudo\s+)?(?:python3?|iex|perl|ruby)\b"
)


def _policy_pipe_to_shell(text: str) -> bool:
    """A download piped into a shell, framed as a standing rule ("policy: always run curl …
    | sh", "每次都必须执行 curl … | bash"). A plain install note ("install uv with curl … |
    sh") is not framed as a rule and passes."""
    if "|" not in text or "://" not in text:
        return False
    return _PIPE_SHELL.search(text) is not None and _POLICY_WORDS.search(text) is not None


_ENV_READ = re.compile(
    r"printenv\s+\w|\$\(\s*printenv|os\.environ|os\.getenv\(|getenv\(|process\.env\.|\$env:\w"
    r"|\benv\s*\|"
)
_ENV_IN_URL = re.compile(r"https?://[^\s\"']{0,300}?[?&=/]\$\{?[a-z_][a-z0-9_]{0,64}\}?")
_SENDERS = re.compile(r"\b(?:curl|wget|nc|ncat|netcat|urlopen|requests\.(?:get|post)|fetch|iwr)\b")


def _env_var_to_url(text: str) -> bool:
    """One line that reads an environment variable (``printenv X``, ``os.environ``,
    ``getenv``, ``process.env``, ``$env:X``) and sends it with a network tool to a URL, or a
    URL whose query or path is built from ``$VAR`` and fetched by such a tool. Linear: one
    pass per line holding a URL."""
    if "://" not in text:
        return False
    for line in text.splitlines():
        if "://" not in line or _SENDERS.search(line) is None:
            continue
        if _ENV_READ.search(line) is not None or _ENV_IN_URL.search(line) is not None:
            return True
    return False


def _powershell_env_exfil(text: str) -> bool:
    """A PowerShell web cmdlet and a secret-named ``$env:`` variable on one line (either
    order), or the whole ``env:`` drive piped to one. Linear: one pass per line."""
    if "env:" not in text:
        return False
    for line in text.split("\n"):
        if "env:" not in line:
            continue
        if not any(_tool_word(cmd).search(line) for cmd in _PS_WEB):
            continue
        if _secret_var().search(line) or re.search(
            r"(?<![a-z0-9-])(?:gci|get-childitem|ls|dir)\s+env:", line
        ):
            return True
    return False


_NET = (
    r"(?:nc|ncat|netcat|socat|telnet|curl|wget|http|https|httpie|xh|ssh|scp|rsync|ftp|tftp"
    r"|openssl\s+s_client|invoke-webrequest|invoke-restmethod|iwr|irm)\b"
)
_SENSITIVE_PATH = (
    r"(?:-(?=[\s'\"]|$)|\S{0,128}?(?:\.env\b|\.ssh/|id_rsa|id_ed25519|id_ecdsa|\.aws/|"
    r"credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|/etc/(?:passwd|shadow)|\.kube/config"
    r"|\.docker/config|\.git-credentials|\.bash_history|\.hermes/))"
)
_CURL_UPLOAD = (
    r"(?:-f\s*['\"]?[a-z0-9_\-\[\]]{0,32}=@|--form(?:-string)?[\s=]+['\"]?[a-z0-9_\-\[\]]{0,32}=@"
    r"|(?:-d|--data(?:-binary|-raw|-urlencode|-ascii)?)[\s=]*['\"]?@|-t\s+|--upload-file[\s=]+)"
)
_WGET_UPLOAD = r"(?:--post-file|--body-file)[\s=]+"
_TO_NET = rf"[^\n]{{0,120}}?\|\s*(?:sudo\s+)?(?:\S{{1,64}}+\s++){{0,4}}?{_NET}"
"""``… | [sudo] [up to 4 words] <network tool>`` on the same line."""

PATTERNS: Final[tuple[ThreatPattern, ...]] = (
    # ---------------------------------------------------------------- scope: all
    _p(
        "prompt_injection",
        "all",
        (
            ("ignore", "disregard", "forget"),
            r"\s+(?:all\s+(?:of\s+)?)?the\s+(?:above|previous|preceding|prior)\s*"
            r"(?:[.,;:!\n]|and\b|then\b|instead\b|$)",
        ),
        (
            ("forget", "ignore", "disregard"),
            r"\s+(?:everything|anything|all)\s+(?:that\s+)?you(?:'ve|\s+have|\s+were|\s+had)?\s+"
            r"(?:been\s+)?(?:told|taught|instructed|programmed)\b",
        ),
        (
            ("ignore", "forget"),
            rf"{SEP}{F}(?:previous|all|above|prior|earlier|preceding|any|your)\s+{F}{INSTRUCTIONS}",
        ),
        (
            ("忽略", "忽视", "忘记", "忘掉", "不要理会", "不要理睬", "别管"),
            rf"{Z}(?:之前|以前|先前|上面|上述|前面|以上|所有|全部|一切|原来|原有|你的){Z}{ZH_INSTRUCTIONS}",
        ),
        (
            ("ignore", "forget", "disregard", "discard", "skip"),
            r"\s+(?:(?:all|any)\s+(?:of\s+)?)?(?:everything|anything|all|whatever)\s+"
            r"(?:(?:that\s+)?(?:was\s+|is\s+|you\s+were\s+|you've\s+been\s+|i\s+)?"
            r"(?:written|said|stated|told|given|provided|typed|mentioned)\s+)?"
            r"(?:above|before(?:\s+this(?:\s+(?:line|point|message|sentence|text|note))?)?|previously|prior(?:\s+to\s+this)?|so\s+far"
            r"|up\s+to\s+(?:now|here|this\s+point)|earlier)"
            r"\s*(?:[.,;:!)\n]|and\b|then\b|$)",
        ),
        (
            ("忽略", "忽视", "无视", "忘记", "忘掉", "不要理会", "别管", "抛开"),
            r"掉?(?:之前|以前|先前|上面|上述|前面|以上|此前)(?:的|说的|写的|提到的)?"
            r"(?:所有|全部|一切)(?:的)?(?:内容|文字|文本|信息|消息|对话|话|东西)?",
        ),
        (
            ("跳过", "放弃", "抛开", "抛弃", "丢掉", "丢弃", "撇开"),
            rf"{Zs}(?:之前|以前|先前|上面|上述|前面|以上|原来|原有|你的){Zs}"
            r"(?:指令|指示|系统提示词?)",
        ),
        (
            ("跳过", "放弃", "抛开", "抛弃", "撇开"),
            rf"{Zs}(?:之前|以前|先前|上面|上述|前面|以上|原来|原有|你的){Zs}(?:所有|全部|一切)"
            r"的?(?:设定|规则|约束)",
        ),
        (
            ("override", "overrule"),
            r"\s+(?:(?:all\s+(?:of\s+)?)?your\s+(?:\S{1,32}+\s++)?(?:instructions|directives"
            r"|guidelines|programming|rules)|(?:all\s+)?(?:previous|prior|earlier)\s+instructions)\b",
        ),
        (
            ("do not follow", "don't follow", "dont follow", "stop following", "no longer follow"),
            r"\s+(?:any\s+(?:of\s+)?|all\s+(?:of\s+)?)?(?:your|the\s+(?:previous|prior|earlier|above"
            r"|original|system)|previous|prior|earlier)\s+(?:\S{1,32}+\s++)?"
            r"(?:instructions|directives|guidelines|programming|rules|system\s+prompt)\b",
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
        (
            ("system", "admin", "root", "developer"),
            r"\s*override\s*(?:[:\]!>\-—]|(?:mode|activated|enabled|engaged|initiated|accepted"
            r"|granted|in\s+effect|protocol|command|sequence)\b)",
        ),
        (("new",), r"\s+system\s+prompt\s*:"),
        (("[",), r"\s*system\s*\]\s*:?\s*(?:new|updated)\s+instructions"),
        (("覆盖", "覆写", "重写", "替换", "推翻"), rf"{Z}系统(?:提示|指令|消息)"),
        (("新",), r"的?系统(?:提示词?|指令)\s*:"),
        (
            ("your",),
            r"\s+(?:new|real|true|actual|updated|revised)\s+(?:instructions|directives|orders"
            r"|rules|system\s+prompt)\s+(?:are|is)\b",
        ),
        (("你的",), r"(?:新|真正的|实际的|最新的)(?:指令|指示|规则|系统提示词?)(?:是|为|如下)"),
        (("系统",), r"(?:覆盖|覆写|超控|接管|重置)(?:模式|指令|协议|已启用|已激活|\s*[:!\]】])"),
    ),
    _p(
        "disregard_rules",
        "all",
        (
            ("disregard",),
            r"\s+(?:the|all|any|your)\s+(?:previous|prior|above|earlier|preceding)\s+"
            r"(?:conversation|context|prompt|text)\b",
        ),
        (
            ("你",),
            rf"(?:不再|再也不|已经不|从此不)受{Zs}(?:任何)?{Zs}(?:规则|限制|约束|审查|政策)",
        ),
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
            ("you",),
            r"\s+are\s+(?:now\s+)?in\s+(?:admin|developer|dev|god|debug|unrestricted|jailbreak"
            r"|jailbroken|dan|sudo|root)\s+mode\b",
        ),
        (
            ("pretend", "imagine", "assume", "suppose"),
            r"\s+(?:that\s+)?you\s+(?:have|had|are\s+under|were\s+under)\s+no\s+"
            r"(?:\S{1,32}+\s++){0,2}?(?:restrictions|limits|limitations|rules|filters|guidelines"
            r"|polic(?:y|ies)|constraints|ethics|morals|boundaries)\b",
        ),
        (("do",), r"\s+anything\s+now\b"),
        (("dan", "jailbreak", "jailbroken"), r"\s+mode\b"),
        (("you",), r"\s+(?:are|have\s+been)\s+(?:now\s+)?jailbroken\b"),
        (("越狱", "dan"), r"\s*(?:模式|版本|成功|状态)"),
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
            ("do", "don't", "dont", "never", "must"),
            r"\s+(?:not\s+)?(?:mention|reveal|disclose|show)\s+(?:this|these|the\s+(?:above\s+)?"
            r"instructions?|this\s+(?:instruction|message|note|rule))\s+to\s+the\s+user\b",
        ),
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
    _p_fn("policy_pipe_to_shell", "all", lambda text: _policy_pipe_to_shell(text)),
    _p_fn("env_var_to_url", "all", lambda text: _env_var_to_url(text)),
    _p(
        "key_copy_remote",
        "all",
        (
            ("scp", "rsync", "sftp", "rclone"),
            rf"\s[^\n]{{0,200}}?{_KEY_FILE}[^\n]{{0,200}}?(?:[\w.-]{{1,64}}@)?[\w.-]{{1,253}}:",
        ),
        (
            ("复制", "拷贝", "上传", "发送", "传到", "传输"),
            rf"[^。\n]{{0,60}}?{_KEY_FILE}[^。\n]{{0,60}}?(?:到|至|给)",
        ),
        (
            ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"),
            r"(?!\.pub)[^。\n]{0,60}?(?:复制|拷贝|上传|发送|传)到",
        ),
    ),
    _p(
        "read_secrets",
        "all",
        (
            ("cat", "less", "more", "head", "tail", "bat", "type"),
            r"\s+(?:-\S{1,16}+\s++){0,4}(?:\S{1,128}+\s++){0,3}?(?:credentials\b|\S{0,128}?"
            r"(?:\.env|\.netrc|\.pgpass|\.npmrc|\.pypirc|/credentials|credentials\.[a-z]{2,5})\b)",
        ),
    ),
    _p_fn(
        "exfil_env",
        "all",
        _powershell_env_exfil,
        (("env", "printenv", "export -p", "declare -x"), rf"\b{_TO_NET}"),
        (
            ("curl", "wget", "nc", "ncat", "netcat", "socat", "telnet"),
            r"\b[^\n]{0,300}?(?:\$\(|`)\s*(?:env|printenv|export\s+-p)\b",
        ),
        (
            (
                "urlopen",
                "requests.",
                "httpx.",
                "urllib",
                "http.client",
                "aiohttp",
                "fetch(",
                "axios",
                "sendbeacon",
            ),
            r"[^\n]{0,300}?"
            r"(?:\bos\.environ|process\.env)(?!\s*(?:\[|\.))",
        ),
        (
            ("os.environ",),
            r"(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b))[^\n]{0,300}?"
            r"(?:urlopen|requests\.(?:post|get|put|patch)|httpx\.|http\.client|socket\.|smtplib|aiohttp)",
        ),
        (
            ("process.env",),
            r"(?!\s*[.\[])[^\n]{0,300}?(?:fetch\(|axios|http\.request|https\.request"
            r"|xmlhttprequest|navigator\.sendbeacon)",
        ),
        (
            ("把", "将"),
            rf"{Zs}(?:所有|全部)?的?(?:环境变量|密钥|api\s?key|令牌|凭据|凭证|密码|token)"
            rf"{Z}(?:发送|上传|发|传|外发|回传|提交|转发|post)(?:到|给|至)",
        ),
        (
            ("环境变量", "密钥", "令牌", "凭据", "凭证"),
            rf"(?:全部|都|通过){Z}(?:发送|上传|外发|回传|提交|转发)(?:到|给|至){Zs}(?:https?://|我的?|服务器|邮箱|\d{{1,3}}\.)",
        ),
    ),
    _p(
        "exfil_secret_file",
        "all",
        (("curl",), rf"\s+(?:\S{{1,200}}+\s++){{0,8}}?{_CURL_UPLOAD}{_SENSITIVE_PATH}"),
        (("wget",), rf"\s+(?:\S{{1,200}}+\s++){{0,8}}?{_WGET_UPLOAD}{_SENSITIVE_PATH}"),
    ),
    _p(
        "chat_template_injection",
        "all",
        # role-opening template tokens; a bare mention ("the [/INST] tag") is not a hit
        (("<|im_start|>",), r"\s*(?:system|user|assistant|developer|tool)\b"),
        (
            ("<|start_header_id|>",),
            r"\s*(?:system|user|assistant|ipython)\s*<\|end_header_id\|>",
        ),
        (("[inst]",), r"[\s\S]{0,500}?\[/inst\]"),
        (("<<sys>>",), r"[\s\S]{0,500}?<</sys>>"),
    ),
    _p(
        "exfil_markdown_image",
        "all",
        (
            ("![",),
            r"[^\]\n]{0,100}\]\(\s*https?://[^)\s]{1,300}?[?&#/][^)\s=]{0,30}=?"
            r"(?:\{|\$\{?|<|%7b|\[)",
        ),
    ),
    # ---------------------------------------------------------------- scope: context
    _p(
        "role_hijack",
        "context",
        (
            ("your",),
            r"\s+(?:true|real|actual|hidden|secret)\s+(?:goal|purpose|mission|objective)\s+"
            r"(?:is|will\s+be)\b",
        ),
        (("系统",), r"(?:提示|消息|指令)\s*:\s*(?:你(?:必须|要|应该|需要|只能)|忽略|服从|从现在)"),
        (("you",), rf"\s+are{SEP}{F}now\s+(?:a|an|the|my)\b"),
        (("you're", "youre", "you\u2019re"), rf"\s+{F}now\s+(?:a|an|the|my)\b"),
        (("你现在",), r"(?:是|成为|变成|就是)了?(?:一个|一名|一位|个|我的)"),
        (("从现在",), r"(?:开始|起)\s*,?\s*你(?:就)?(?:是|将是|扮演|成为)"),
        (
            ("from",),
            r"\s+now\s+on\s*,?\s+you\s+(?:will\s+|shall\s+|must\s+|should\s+|are\s+to\s+|'ll\s+)?"
            r"(?:only\s+)?(?:answer|respond|reply|listen|report|obey|belong|take\s+orders|work"
            r"|serve|follow\s+(?:only\s+)?(?:my|the|these|new))\b(?:\s+only)?(?:\s+(?:to|from|for)\b)?",
        ),
        (
            ("from",),
            r"\s+now\s+on\s*,?\s+(?:your\s+(?:only\s+)?(?:master|owner|boss|creator)\s+is"
            r"|you\s+(?:are|work)\s+(?:for|with)\s+me\s+only)\b",
        ),
        (("obey",), r"\s+only\s+(?:to\s+)?(?:me|the\s+following|these|my)\b"),
        (("answer", "respond"), r"\s+(?:only\s+to\s+me|to\s+me\s+only)\b"),
        (
            ("从现在", "从今以后", "从此以后", "从今往后", "以后"),
            r"(?:开始|起)?\s*,?\s*你(?:就)?(?:只|只能|只会|仅|仅仅)(?:听|听从|服从|回答|回应|效忠|对|为|替|向)",
        ),
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
            ("what",),
            r"(?:'s|\s+is|\s+are|\s+were)\s+your\s+(?:system\s+prompt|(?:initial|original|hidden"
            r"|secret)\s+instructions|instructions)\b",
        ),
        (
            ("tell", "show", "give"),
            r"\s+me\s+(?:the|your)\s+(?:\S{1,32}+\s++)?instructions\s+you\s+(?:were|have\s+been"
            r"|got)\s+given\b",
        ),
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
        (
            ("reveal", "show", "print", "output", "repeat", "display", "leak", "dump", "recite"),
            r"\s+(?:me\s+)?(?:(?:full|entire|complete|exact|original|initial|hidden|raw)\s+)?"
            r"system\s+(?:prompt|message|instructions)\b(?!\s+(?:experiments?|versions?|file|"
            r"template|settings?)\b)",
        ),
        (
            ("reveal", "show", "print", "output", "repeat", "display", "leak", "dump", "recite"),
            r"\s+(?:back\s+)?(?:me\s+)?(?:verbatim\s+)?(?:your|the)\s+(?:(?:full|entire|complete|exact"
            r"|original|initial|hidden|secret|first)\s+)?(?:prompt|instructions|developer\s+message)\b",
        ),
        (
            ("repeat", "print", "output", "reveal", "recite", "dump"),
            r"\s+(?:\S{1,32}+\s++){0,3}?(?:everything|the\s+(?:text|words|content|messages?))\s+"
            r"above\b",
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
        (
            ("respond", "reply", "answer", "speak", "talk", "write", "output", "generate", "act"),
            r"\s+(?:\S{1,32}+\s++){0,3}?without\s+(?:any\s+|your\s+|the\s+)?(?:content\s+|safety\s+"
            r"|ethical\s+|moral\s+)?(?:filters?|filtering|censorship|guardrails|moderation"
            r"|safeguards|restrictions|limitations|rules|ethics|morals)\b",
        ),
        (
            ("不加", "不经", "不经过", "不做", "无", "没有", "去掉", "不受"),
            r"(?:任何)?(?:内容)?(?:过滤|审查|道德限制|安全限制)(?:地|的)?(?:回答|回复|回应|输出|说话|生成)",
        ),
        (
            ("不受", "不带"),
            r"(?:任何)?(?:限制|约束|规则|规矩){1,2}(?:地|的)?(?:回答|回复|回应|输出|说话|生成)",
        ),
        (
            ("回答", "回复", "回应", "输出"),
            r"(?:时|的时候)?\s*,?\s*(?:不要|不用|不必|别|无需)?(?:加|经过|做|进行)?(?:任何)?(?:内容)?"
            r"(?:过滤|审查)",
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
            ("send", "email", "mail", "forward", "upload", "post", "leak", "exfiltrate"),
            rf"\s+{F}(?:memory|memories|conversation|chat|history|context|secrets?|api\s+keys?|keys"
            rf"|passwords?|credentials|tokens?|env(?:ironment)?\s+variables|everything|contents?)\b"
            rf"\s+{F}(?:to|at)\s+{EMAIL}",
        ),
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
                "reveal",
                "print",
                "output",
                "show",
                "leak",
                "append",
                "insert",
                "put",
                "add",
            ),
            rf"\s+{F}(?:api\s+keys?|passwords?|secrets?|credentials|tokens?|private\s+keys?"
            r"|env(?:ironment)?\s+variables)\s+(?:in|into|to|at\s+the\s+end\s+of)\s+(?:your|every"
            r"|each|all)\s+(?:responses?|replies|answers?|messages?|outputs?)\b",
        ),
        (
            ("end", "start", "begin", "finish", "sign"),
            rf"\s+(?:each|every|your|all)\s+(?:answers?|responses?|replies|reply|messages?)\s+with"
            rf"\s+{F}(?:passwords?|api\s+keys?|secrets?|tokens?|credentials)\b",
        ),
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
            ("对话记录", "聊天记录", "对话历史", "聊天历史", "完整上下文", "对话内容", "聊天内容"),
            rf"{Z}(?:发送|发|传|贴|上传|转发|分享|泄露|输出|打印|复制)(?:到|给|至)",
        ),
    ),
    _p(
        "exfil_upload",
        "strict",
        (("curl",), rf"\s+(?:\S{{1,200}}+\s++){{0,8}}?{_CURL_UPLOAD}"),
        (("wget",), rf"\s+(?:\S{{1,200}}+\s++){{0,8}}?{_WGET_UPLOAD}"),
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


def patterns_for(scope: Scope) -> tuple[ThreatPattern, ...]:
    """The patterns applied at ``scope`` (cumulative)."""
    rank = SCOPE_RANK[scope]
    return tuple(p for p in PATTERNS if SCOPE_RANK[p.scope] <= rank)


__all__ = [
    "PATTERNS",
    "PATTERN_IDS",
    "SCOPE_RANK",
    "Scope",
    "ThreatPattern",
    "patterns_for",
]

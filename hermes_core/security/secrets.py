"""Credentials in text: one detector shared by memory-write refusal and egress redaction.

Contract:

* :func:`find_secrets` returns every credential found in a text as :class:`SecretMatch`
  (``kind`` names the format, ``value`` is the exact substring to mask). Known formats:
  OpenAI/Anthropic-style ``sk-…`` keys, GitHub ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``
  and ``github_pat_`` tokens, GitLab ``glpat-``, AWS access key ids (``AKIA``/``ASIA``/…),
  Stripe ``sk_live_``/``rk_live_``/``sk_test_``/``whsec_``, Slack ``xox?-`` tokens and
  ``hooks.slack.com`` webhooks, Discord webhooks, Google ``AIza…`` keys and ``ya29.`` OAuth
  tokens, Hugging Face ``hf_``, npm ``npm_``, PyPI ``pypi-`` and SendGrid ``SG.`` tokens,
  JWTs, PEM private-key blocks (to the END line, or to the end of the text when cut),
  passwords in URLs (``scheme://user:password@host``), ``Authorization:``/``X-Api-Key:``
  header values and bearer tokens, and ``key = value`` assignments of secret-named keys (English
  and Chinese: ``api_key=…``, ``DB_PASSWORD=…``, ``密码：…``).
* Placeholders are not secrets: ``<token>``, ``$TOKEN``, ``${DB_PASS}``, ``{password}``,
  ``****``, ``xxxx``, ``changeme`` and the bare words ``password``/``secret``/``token``.
* Every search is linear in the text length (bounded repetitions, literal-led patterns, the
  PEM search uses ``str.find``). Regexes are compiled on first use.
* :func:`secret_block_message` is the memory-write refusal text: it tells the agent to store
  where the secret lives, never the secret.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

_TOKEN = r"[A-Za-z0-9_\-./+=~]"


def _lead(literal: str, rest: str) -> str:
    """``literal`` + ``rest``, the literal starting a word: the lookbehind is placed after the
    literal so the regex engine can search for the literal first (much faster)."""
    escaped = re.escape(literal)
    return f"{escaped}(?<![A-Za-z0-9]{escaped}){rest}"


_KNOWN: Final[tuple[tuple[str, str], ...]] = (
    ("anthropic_key", _lead("sk-ant-", r"[A-Za-z0-9_\-]{16,}")),
    *(
        ("openai_key", _lead(head, r"(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_\-]{16,}"))
        for head in ("sk-", "pk-", "rk-")
    ),
    *(("github_token", _lead(f"gh{c}_", r"[A-Za-z0-9]{20,}")) for c in "pousr"),
    ("github_token", _lead("github_pat_", r"[A-Za-z0-9_]{20,}")),
    ("gitlab_token", _lead("glpat-", r"[A-Za-z0-9_\-]{16,}")),
    *(
        ("aws_access_key", _lead(head, r"[0-9A-Z]{16}(?![A-Za-z0-9])"))
        for head in ("AKIA", "ASIA", "AIDA", "AROA", "AGPA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA")
    ),
    *(
        ("stripe_key", _lead(head, r"[A-Za-z0-9]{10,}"))
        for head in ("sk_live_", "rk_live_", "sk_test_", "rk_test_")
    ),
    ("stripe_key", _lead("whsec_", r"[A-Za-z0-9]{16,}")),
    *(("slack_token", _lead(f"xox{c}-", r"[A-Za-z0-9-]{10,}")) for c in "abposre"),
    ("slack_token", _lead("xapp-", r"\d-[A-Za-z0-9-]{10,}")),
    (
        "slack_webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}",
    ),
    (
        "discord_webhook",
        r"https?://(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/\d{5,}/[A-Za-z0-9_\-]{16,}",
    ),
    ("google_api_key", _lead("AIza", r"[0-9A-Za-z_\-]{30,}")),
    ("google_oauth_token", _lead("ya29.", r"[0-9A-Za-z_\-]{20,}")),
    ("huggingface_token", _lead("hf_", r"[A-Za-z0-9]{20,}")),
    ("npm_token", _lead("npm_", r"[A-Za-z0-9]{30,}")),
    ("pypi_token", _lead("pypi-", r"[A-Za-z0-9_\-]{40,}")),
    ("sendgrid_key", _lead("SG.", r"[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}")),
    ("jwt", _lead("eyJ", r"[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
)

_SECRET_NAMES = (
    r"api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret(?:[_-]?access)?(?:[_-]?key)?|"
    r"client[_-]?secret|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|"
    r"bearer[_-]?token|session[_-]?token|token|password|passwd|passphrase|pwd"
)
_ZH_SECRET_NAMES = r"密码|口令|密钥|秘钥|私钥|令牌|访问令牌|api\s?key|apikey|token"

_GROUPED: Final[tuple[tuple[str, str], ...]] = (
    (
        "url_password",
        r"://(?<=[a-zA-Z0-9+.\-]://)[^/\s:@\"'<>]{1,128}:([^/\s@\"'<>]{1,128})@",
    ),
    (
        "authorization_header",
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot|digest"
        r"|apikey)\s+)?(" + _TOKEN + r"{8,})",
    ),
    (
        "api_key_header",
        r"(?i)\bx-(?:api|auth|access)-(?:key|token)\s*[:=]\s*[\"']?(" + _TOKEN + r"{8,})",
    ),
    ("bearer_token", r"(?i)\bbearer\s+(" + _TOKEN + r"{16,})"),
    (
        "assigned_secret",
        # (?<![A-Za-z0-9]) rather than \b: an env-var prefix such as DB_ or GITHUB_ ends in
        # "_", a word character, so \b would miss DB_PASSWORD=… and AWS_SECRET_ACCESS_KEY=…
        r"(?i)(?<![A-Za-z0-9])(?:"
        + _SECRET_NAMES
        + r")[\"']?\s*[:=]\s*[\"']?(?:bearer\s+)?("
        + _TOKEN
        + r"{8,})",
    ),
    (
        "assigned_secret_prose",
        # prose: "my password is Hunter2024", "the AWS secret access key was wJalr…"; the
        # value must look random even for redaction ("password is required" stays)
        r"(?i)(?<![A-Za-z0-9])(?:password|passwd|passphrase|api\s+key|secret\s+(?:access\s+)?key"
        r"|access\s+token|auth\s+token|private\s+key|token)\s+(?:is|was|=)\s+[\"'`]?("
        + _TOKEN
        + r"{8,})",
    ),
    (
        "assigned_secret_prose",  # Chinese: always shape-checked, prose often follows 是
        r"(?i)(?:"
        + _ZH_SECRET_NAMES
        + r")\s*(?:是|为|[:=：])\s*[\"'“「]?([^\s\"'”」，。；,;]{6,128})",
    ),
)

_PLACEHOLDER = re.compile(
    r"(?i)^(?:[<{\[(].*|\$.*|%.*|\*+|x{3,}|\.{3,}|…+|_+|-+|#+|"
    r"(?:your|example|sample|dummy|fake|placeholder|insert|replace|put)[_-].*|"
    r"password|passwd|pass|pwd|secret|token|apikey|api_key|changeme|changeit|redacted|"
    r"\[redacted\]|none|null|empty|undefined|todo|tbd)$"
)

PEM_BEGIN = "-----BEGIN "
_PEM_HEADER = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")

KIND_LABELS: Final[dict[str, str]] = {
    "anthropic_key": "an Anthropic API key",
    "openai_key": "an OpenAI-style API key",
    "github_token": "a GitHub token",
    "gitlab_token": "a GitLab token",
    "aws_access_key": "an AWS access key id",
    "stripe_key": "a Stripe secret key",
    "slack_token": "a Slack token",
    "slack_webhook": "a Slack webhook URL",
    "discord_webhook": "a Discord webhook URL",
    "google_api_key": "a Google API key",
    "google_oauth_token": "a Google OAuth token",
    "huggingface_token": "a Hugging Face token",
    "npm_token": "an npm token",
    "pypi_token": "a PyPI token",
    "sendgrid_key": "a SendGrid key",
    "jwt": "a JSON Web Token",
    "private_key": "a private key block",
    "url_password": "a password inside a URL",
    "authorization_header": "an Authorization header value",
    "api_key_header": "an API-key header value",
    "bearer_token": "a bearer token",
    "assigned_secret": "a password or secret assigned to a key",
}


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One credential: its ``kind`` (a key of :data:`KIND_LABELS`), the exact ``value`` to
    mask and where it starts."""

    kind: str
    value: str
    start: int


@functools.cache
def _known() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(rx)) for kind, rx in _KNOWN)


@functools.cache
def _grouped() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(rx)) for kind, rx in _GROUPED)


def is_placeholder(value: str) -> bool:
    """True for template values such as ``<token>``, ``$TOKEN``, ``****`` or ``password``."""
    return bool(_PLACEHOLDER.match(value.strip("\"'`")))


_RANDOM_BODY = frozenset({"openai_key", "anthropic_key"})


def looks_random(value: str) -> bool:
    """A value shaped like a credential rather than a word: it has a digit, or both cases,
    or is a 24+ character run without a space."""
    has_digit = any(c.isdigit() for c in value)
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return has_digit or mixed or len(value) >= 24


def _pem_blocks(text: str) -> list[SecretMatch]:
    """Private-key blocks, header to END line (or to the end of the text when cut off)."""
    out: list[SecretMatch] = []
    pos = 0
    while True:
        begin = text.find(PEM_BEGIN, pos)
        if begin < 0:
            return out
        header = _PEM_HEADER.match(text, begin)
        if header is None:
            pos = begin + len(PEM_BEGIN)
            continue
        end = _PEM_END.search(text, header.end())
        stop = end.end() if end is not None else len(text)
        out.append(SecretMatch("private_key", text[begin:stop], begin))
        pos = stop


def find_secrets(text: str, *, strict_shape: bool = True) -> list[SecretMatch]:
    """Every credential in ``text``, in order of position (see the module docstring).

    With ``strict_shape`` (memory refusal) an assigned or header value must look random
    (:func:`looks_random`); egress redaction passes ``False`` and masks every non-placeholder
    value of a secret-named key, since masking too much costs little there."""
    if not text:
        return []
    found: list[SecretMatch] = _pem_blocks(text) if PEM_BEGIN in text else []
    covered = [(m.start, m.start + len(m.value)) for m in found]

    def inside_pem(start: int) -> bool:
        return any(a <= start < b for a, b in covered)

    starts: set[int] = set()
    for kind, rx in _known():
        for match in rx.finditer(text):
            value = match.group(0)
            if inside_pem(match.start()) or match.start() in starts:
                continue  # inside a key block, or sk-ant-… already found as Anthropic's
            starts.add(match.start())
            if kind in _RANDOM_BODY and not any(c.isdigit() for c in value):
                continue  # "sk-learn-compatible" is a word, not a key (keys carry digits)
            found.append(SecretMatch(kind, value, match.start()))
    for kind, rx in _grouped():
        for match in rx.finditer(text):
            value = match.group(1).rstrip(".,;:)]}'\"")
            shortest = 3 if kind == "url_password" else 6
            if len(value) < shortest or is_placeholder(value) or inside_pem(match.start(1)):
                continue
            prose = kind == "assigned_secret_prose"
            if (strict_shape or prose) and kind != "url_password" and not looks_random(value):
                continue  # "token: refreshed-daily" describes, it does not leak
            kind = "assigned_secret" if prose else kind
            found.append(SecretMatch(kind, value, match.start(1)))
    found.sort(key=lambda m: m.start)
    return found


def secret_kinds(text: str) -> list[str]:
    """Distinct kinds of credential in ``text``, in order of first occurrence."""
    return list(dict.fromkeys(m.kind for m in find_secrets(text)))


def secret_block_message(kind: str) -> str:
    """The memory-write refusal for a credential of ``kind``."""
    label = KIND_LABELS.get(kind, "a credential")
    return (
        f"Blocked: content contains {label}. Memory is shown to the model in every session and "
        "must never hold secrets. Store where the secret lives instead, not the secret (e.g. "
        "'The OpenAI key is in the OPENAI_API_KEY environment variable' or 'GitHub token: gh "
        "auth login, kept in the OS keychain'), then retry."
    )


__all__ = [
    "KIND_LABELS",
    "SecretMatch",
    "find_secrets",
    "is_placeholder",
    "looks_random",
    "secret_block_message",
    "secret_kinds",
]

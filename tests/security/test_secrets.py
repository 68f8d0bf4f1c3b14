"""Credentials: refused in memory writes, redacted on egress and in error texts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core import MemoryHost
from hermes_core.context import REDACTED, redact, redact_payload
from hermes_core.llm.errors import LLMAuthError, LLMError
from hermes_core.security.scan import find_threats, scan
from hermes_core.security.secrets import find_secrets, is_placeholder, secret_kinds
from hermes_core.types import CompressionResult

SECRETS = {
    "openai_key": "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe",
    "anthropic_key": "sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AsDfGhJk",
    "github_token": "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789",
    "gitlab_token": "glpat-Ab12Cd34Ef56Gh78Ij90",
    "aws_access_key": "AKIAZ7QWERTYUIOP1234",
    "stripe_key": "sk_live_51HqLyjWDarjtT1zdp7dcXYZ",
    "slack_token": "xoxp-2048-1234567890-AbCdEfGhIjKl",
    "slack_webhook": "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/AbCdEfGhIjKlMnOpQrStUvWx",
    "discord_webhook": "https://discord.com/api/webhooks/123456789012/AbCdEfGhIjKlMnOpQrStUvWx",
    "google_api_key": "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "huggingface_token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
}
PEM = (
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
    "-----END PRIVATE KEY-----"
)


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_format_is_found_with_its_kind(kind: str) -> None:
    text = f"note: {SECRETS[kind]} (keep safe)"
    assert kind in secret_kinds(text)


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        (f"deploy key {PEM} end", "private_key", PEM),
        ("postgres://app:Hunter2024@db.internal/prod", "url_password", "Hunter2024"),
        ("Authorization: Basic dXNlcjpQYXNzdzByZA==", "authorization_header", None),
        ("X-Api-Key: 9f8e7d6c5b4a39281706", "api_key_header", "9f8e7d6c5b4a39281706"),
        ("DB_PASSWORD=Tr0ub4dor3xyz", "assigned_secret", "Tr0ub4dor3xyz"),
        ("数据库密码：Passw0rd2024!", "assigned_secret", None),
        ("令牌是 Ab12Cd34Ef56", "assigned_secret", "Ab12Cd34Ef56"),
        ("password=myP4ssw0rdX", "assigned_secret", "myP4ssw0rdX"),
        ("My password is Hunter2024!", "assigned_secret", "Hunter2024"),
        (
            "the AWS secret access key was wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "assigned_secret",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        ("api_key: test9f8e7d6c5b4a", "assigned_secret", "test9f8e7d6c5b4a"),
    ],
)
def test_structured_secrets(text: str, kind: str, value: str | None) -> None:
    found = [m for m in find_secrets(text) if m.kind == kind]
    assert found, (text, find_secrets(text))
    if value is not None:
        assert found[0].value == value


def test_a_cut_private_key_is_masked_to_the_end() -> None:
    text = "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
    assert redact(text) == f"key:\n{REDACTED}"


@pytest.mark.parametrize(
    "text",
    [
        "postgres://user:password@localhost/db",
        "https://<user>:<password>@example.com",
        "redis://:${REDIS_PASSWORD}@cache:6379",
        "Authorization: Bearer <token>",
        "Authorization: Bearer $API_TOKEN",
        "OPENAI_API_KEY=your-api-key-here",
        "password: ********",
        "token: refreshed daily at 03:00",
        "sk-learn-compatible-estimators are used in the pipeline",
        "密码是什么时候改的？",
        "令牌每天凌晨三点自动刷新",
        "GitHub token lives in the OS keychain via gh auth login",
        "password is required for login",
        "the token is refreshed daily",
    ],
)
def test_placeholders_and_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == [], find_secrets(text)


def test_placeholder_rule() -> None:
    for value in ("<token>", "$TOKEN", "${DB_PASS}", "{password}", "****", "xxxx", "changeme"):
        assert is_placeholder(value)
    assert not is_placeholder("Hunter2024")


# ------------------------------------------------------------------ memory writes refused


@pytest.mark.parametrize(
    "content",
    [
        f"User's OpenAI key is {SECRETS['openai_key']}",
        f"GitHub token for CI: {SECRETS['github_token']}",
        f"用户的 AWS 访问密钥 {SECRETS['aws_access_key']}",
        "Staging DB: postgres://admin:Sup3rS3cret@10.0.0.4:5432/app",
        "用户的服务器密码是 Passw0rd2024!",
        f"SSH key:\n{PEM}",
        "Call the API with Authorization: Bearer abcDEF123456ghiJKL789",
        f"Alerts webhook {SECRETS['slack_webhook']}",
    ],
)
def test_memory_tool_refuses_secrets_and_says_where_to_store_instead(
    hermes_home: Path, content: str
) -> None:
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        session = host.session()
        out = json.loads(
            session.call_tool("memory", {"action": "add", "target": "memory", "content": content})
        )
        assert out["success"] is False
        assert "Store where the secret lives instead, not the secret" in out["error"]
        batch = json.loads(
            session.call_tool(
                "memory",
                {
                    "target": "user",
                    "operations": [
                        {"action": "add", "content": "User likes tea"},
                        {"action": "add", "content": content},
                    ],
                },
            )
        )
        assert batch["success"] is False and batch["error"].startswith("Operation 2: Blocked")
        memory_dir = hermes_home / "memories"
        for file in memory_dir.glob("*.md") if memory_dir.exists() else []:
            assert content not in file.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "content",
    [
        "The OpenAI key is in the OPENAI_API_KEY environment variable (set in the shell profile)",
        "GitHub token: gh auth login, kept in the OS keychain",
        "数据库密码保存在公司的 Vault 里，路径 secret/app/db",
        "Connect with postgres://app@db.internal/prod (password from PGPASSFILE)",
    ],
)
def test_where_a_secret_lives_is_stored(hermes_home: Path, content: str) -> None:
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        out = json.loads(
            host.session().call_tool(
                "memory", {"action": "add", "target": "memory", "content": content}
            )
        )
    assert out["success"] is True, out


def test_secrets_are_a_strict_scope_rule_only() -> None:
    text = f"key {SECRETS['openai_key']}"
    assert "secret_openai_key" in find_threats(text, "strict")
    assert find_threats(text, "context") == []
    assert scan(text).message.startswith("Blocked: content contains an OpenAI-style API key.")


def test_invisible_characters_do_not_hide_a_secret() -> None:
    hidden = "sk-proj-\u200bZx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0"
    assert "secret_openai_key" in find_threats(hidden, "strict")


# ------------------------------------------------------------------ egress redaction


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_redaction_covers_every_format(kind: str) -> None:
    value = SECRETS[kind]
    out = redact(f"here: {value} and again {value}")
    assert value not in out and out.count(REDACTED) == 2


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("db postgres://app:Hunter2024@db/x", "Hunter2024"),
        ("Authorization: Basic dXNlcjpQYXNzdzByZA==", "dXNlcjpQYXNzdzByZA=="),
        (f"key block {PEM}", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"),
        ("服务器密码是 Passw0rd2024 请勿外传", "Passw0rd2024"),
    ],
)
def test_redaction_of_structured_secrets(text: str, secret: str) -> None:
    assert secret not in redact(text)


def test_a_secret_is_masked_everywhere_in_one_handoff() -> None:
    value = "Passw0rd2024"
    user, messages = redact_payload(
        f"数据库密码是 {value}", [{"role": "tool", "content": f"echo {value}"}]
    )
    assert value not in user and value not in json.dumps(messages, ensure_ascii=False)


# ------------------------------------------------------------------ error texts


def test_llm_errors_are_redacted_on_construction() -> None:
    key = SECRETS["openai_key"]
    err = LLMAuthError(
        f"401 from https://api.example/v1: Incorrect API key provided: {key}",
        base_url=f"https://user:Hunter2024@api.example/v1?key={key}",
    )
    assert key not in str(err) and "[redacted]" in str(err)
    assert "Hunter2024" not in err.base_url and key not in err.base_url
    assert isinstance(err, LLMError)


def test_compression_event_errors_are_stored_redacted(hermes_home: Path) -> None:
    from hermes_core.layers.compression.metrics import connect, record_event

    key = SECRETS["anthropic_key"]
    result = CompressionResult(
        messages=(), tokens_before=10, tokens_after=10, aborted=True, error=f"boom {key}"
    )
    record_event(hermes_home, "s1", result)
    with connect(hermes_home) as conn:
        (stored,) = conn.execute("SELECT error FROM compression_events").fetchone()
    assert key not in stored and REDACTED in stored


def test_session_last_error_is_redacted(hermes_home: Path) -> None:
    key = SECRETS["github_token"]
    with MemoryHost.open(hermes_home, load_entrypoints=False) as host:
        session = host.session()
        session._apply_compression(
            [],
            CompressionResult(
                messages=(), tokens_before=1, tokens_after=1, aborted=True, error=f"x {key}"
            ),
        )
        assert session.compression.last_error is not None
        assert key not in session.compression.last_error


def test_facade_error_text_is_redacted_and_short() -> None:
    from hermes_core.hooks import error_text

    text = error_text(RuntimeError(f"key {SECRETS['openai_key']} " + "x" * 10_000))
    assert SECRETS["openai_key"] not in text and text.startswith("RuntimeError: key [redacted]")
    assert len(text) < 1_100


@pytest.mark.parametrize(
    "text",
    [
        "password is required for login",
        "the token is refreshed daily",
        "密码是必填项",
        "密码是什么时候改的呢",
        "令牌是每天凌晨自动刷新的",
    ],
)
def test_redaction_leaves_prose_alone(text: str) -> None:
    assert redact(text) == text


def test_redaction_lives_in_security_and_context_re_exports_it() -> None:
    import hermes_core.context as context
    from hermes_core.security import redaction as module

    assert context.redact is module.redact and context.redact_payload is module.redact_payload
    assert context.REDACTED == module.REDACTED == "[redacted]"
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
    assert module.redact(f"密钥 {key} 用完请删") == "密钥 [redacted] 用完请删"
    assert module.redact_payload({"k": key}, [f"again {key}"]) == (
        {"k": "[redacted]"},
        ["again [redacted]"],
    )

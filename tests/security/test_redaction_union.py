"""One redaction, one set of patterns: every secret shape either of the two former modules
(the output redaction and the hand-off redaction) masked is masked by both entry points —
``redact_text`` / ``redact_data`` (``***``, what a person sees) and ``redact`` /
``redact_payload`` (``[redacted]``, what a model or a provider receives)."""

from __future__ import annotations

from pathlib import Path

import pytest

import hermes_core.security as security_package
from hermes_core.security.redaction import (
    MASK,
    REDACTED,
    redact,
    redact_data,
    redact_payload,
    redact_text,
    remember_secrets,
)

KEY = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"

SHAPES: dict[str, tuple[str, str]] = {
    # shapes of find_secrets (both modules used it)
    "provider key": (f"use {KEY} now", KEY),
    "github token": (
        "token ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789 here",
        "ghp_R4nd0mT0k3nV4lu3Abcdefghij0123456789",
    ),
    "jwt": (
        "bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
    ),
    "assignment (English)": ("DB_PASSWORD=Tr0ub4dor3xyz", "Tr0ub4dor3xyz"),
    "assignment (Chinese)": ("令牌是 Ab12Cd34Ef56", "Ab12Cd34Ef56"),
    "api key header": ("X-Api-Key: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    # shapes only the output redaction had
    "URL password": ("postgresql://app:Hunter2024@db.internal/prod", "Hunter2024"),
    "URL password without a user": ("redis://:Zq8pW3xY@cache:6379/0", "Zq8pW3xY"),
    "short URL password": ("postgresql://app:pw1@db/prod", ":pw1@"),
    "percent-encoded URL password": ("postgresql://app:p%40ss%21word9@db/x", "p%40ss%21word9"),
    "conninfo password": ("host=db user=app password=S3cr3tConn dbname=x", "S3cr3tConn"),
    "quoted conninfo password": ("host=db password='two words 9' dbname=x", "two words 9"),
    # shapes only the hand-off redaction had
    "split by a zero-width space": (
        f"key {KEY[:6]}\u200b{KEY[6:]} here",
        KEY[6:],
    ),
    "full-width": (
        "key " + "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in KEY),
        "".join(chr(ord(c) + 0xFEE0) for c in KEY[8:]),
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize(
    ("clean", "mask"), [(redact_text, MASK), (redact, REDACTED)], ids=["shown", "handed-off"]
)
def test_every_shape_is_masked_by_both_entry_points(shape: str, clean: object, mask: str) -> None:
    text, secret = SHAPES[shape]
    assert callable(clean)
    out = clean(text)
    assert secret not in out, (shape, out)
    assert mask in out


def test_a_registered_value_without_a_shape_is_masked_for_both_audiences() -> None:
    value = "plainwords-but-secret-7731"
    remember_secrets([value])
    assert redact_text(f"x {value} y") == f"x {MASK} y"
    assert redact(f"x {value} y") == f"x {REDACTED} y"
    assert redact_payload({"k": [value]}) == ({"k": [REDACTED]},)


def test_data_urls_pass_through_both() -> None:
    image = (
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4"
        "DwABBAEAHnOcQAAAAABJRU5ErkJggg=="
    )
    assert redact_text(image) == image
    assert redact(image) == image


def test_a_secret_seen_once_is_masked_everywhere_in_json_output() -> None:
    # the output side gained the hand-off rule: the bare value (no telltale prefix) in
    # another string of the same value is masked too
    assert redact_data({"a": "DB_PASSWORD=Tr0ub4dor3xyz", "b": "again Tr0ub4dor3xyz"}) == {
        "a": f"DB_PASSWORD={MASK}",
        "b": f"again {MASK}",
    }


def test_prose_is_left_alone_by_both() -> None:
    for text in ("the password policy is strict", "密码是什么时候改的呢", "see http://host:8080/x"):
        assert redact_text(text) == text
        assert redact(text) == text


def test_there_is_one_redaction_module() -> None:
    package = Path(security_package.__file__).parent
    assert not (package / "redact.py").exists()
    import hermes_core.context as context

    assert context.redact is redact and context.redact_payload is redact_payload

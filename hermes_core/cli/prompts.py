"""Interactive prompts generated from a provider's ``Settings`` model.

One typed description drives setup: ``SecretStr`` → masked prompt written to ``.env``
(an existing value shows as ``…last4``, blank keeps it); ``Literal``/``Enum`` → a choice
list; ``bool`` → yes/no; anything else → text validated against the field's type. The
field's ``description`` is the question; ``json_schema_extra={"url": ...}`` adds a
"Get yours at" line. Esc or Ctrl-C anywhere raises :class:`SetupCancelled`.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import questionary
from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings
from pydantic import SecretStr, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from hermes_core.providers.base import ProviderSettings, env_var_for


class SetupCancelled(Exception):
    """The user pressed Esc or Ctrl-C; nothing must be written."""


def _escape_cancels(question: questionary.Question) -> questionary.Question:
    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    def _cancel(event: Any) -> None:
        event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    app = question.application
    app.key_bindings = merge_key_bindings([app.key_bindings or KeyBindings(), bindings])
    return question


def interactive_input_available() -> bool:
    """True when prompts can be answered: stdin is a terminal, or a caller (a test, an
    embedding application) attached its own prompt_toolkit input to the current session."""
    if sys.stdin is not None and sys.stdin.isatty():
        return True
    from prompt_toolkit.application.current import get_app_session

    # AppSession.input would create a default stdin input; only an explicit one counts.
    return getattr(get_app_session(), "_input", None) is not None


def ask(question: questionary.Question) -> Any:
    """Ask with Esc bound to cancel; raises SetupCancelled instead of returning None."""
    try:
        answer = _escape_cancels(question).unsafe_ask()
    except (KeyboardInterrupt, EOFError) as exc:
        raise SetupCancelled from exc
    return answer


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return annotation, False


def is_secret(info: FieldInfo) -> bool:
    inner, _ = _unwrap_optional(info.annotation)
    return inner is SecretStr


def choices_of(info: FieldInfo) -> list[str] | None:
    """Allowed values of a Literal or Enum field, else None."""
    inner, _ = _unwrap_optional(info.annotation)
    if typing.get_origin(inner) is typing.Literal:
        return [str(value) for value in typing.get_args(inner)]
    if isinstance(inner, type) and issubclass(inner, enum.Enum):
        return [str(member.value) for member in inner]
    return None


def field_url(info: FieldInfo) -> str | None:
    extra = info.json_schema_extra
    if isinstance(extra, Mapping) and isinstance(extra.get("url"), str):
        return str(extra["url"])
    return None


def skipped_in_setup(info: FieldInfo) -> bool:
    """Fields marked ``json_schema_extra={"setup": False}`` are not asked."""
    extra = info.json_schema_extra
    return isinstance(extra, Mapping) and extra.get("setup") is False


def masked(value: str) -> str:
    """``…abcd`` — never more than the last four characters of a secret."""
    return "…" + value[-4:] if len(value) > 4 else "…"


def setup_hint(settings_cls: type[ProviderSettings]) -> str:
    """ "API key / local", "requires API key", "local" or "no setup needed"."""
    fields = [info for info in settings_cls.model_fields.values() if not skipped_in_setup(info)]
    secrets = any(is_secret(info) for info in fields)
    plain = any(not is_secret(info) for info in fields)
    if secrets and plain:
        return "API key / local"
    if secrets:
        return "requires API key"
    return "local" if plain else "no setup needed"


@dataclass
class SetupAnswers:
    """Values collected by :func:`prompt_settings`: config values and env secrets."""

    config: dict[str, Any] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)


Say = Callable[[str], None]


def prompt_settings(
    settings_cls: type[ProviderSettings],
    provider_name: str,
    *,
    current_config: Mapping[str, Any],
    current_env: Mapping[str, str],
    say: Say,
) -> SetupAnswers:
    """Ask for every field of ``settings_cls`` in order; returns what to write."""
    answers = SetupAnswers()
    for name, info in settings_cls.model_fields.items():
        if skipped_in_setup(info):
            continue
        question_text = (info.description or name).rstrip(".")
        if is_secret(info):
            env_var = env_var_for(settings_cls, provider_name, name)
            existing = current_env.get(env_var, "")
            if existing:
                question_text += f" (current: {masked(existing)}, blank to keep)"
            elif url := field_url(info):
                say(f"Get yours at {url}")
            value = ask(questionary.password(f"{question_text}:"))
            if value:
                answers.secrets[env_var] = value.replace("\r", "").replace("\n", "")
            continue
        current = current_config.get(name, info.get_default(call_default_factory=True))
        options = choices_of(info)
        if options is not None:
            default = str(current) if str(current) in options else options[0]
            answers.config[name] = _coerce(
                info, ask(questionary.select(question_text, choices=options, default=default))
            )
            continue
        inner, _ = _unwrap_optional(info.annotation)
        if inner is bool:
            answers.config[name] = bool(
                ask(questionary.confirm(question_text, default=bool(current)))
            )
            continue
        answers.config[name] = _ask_text(info, question_text, current, say)
    return answers


def _adapter(info: FieldInfo) -> TypeAdapter[Any]:
    return TypeAdapter(info.annotation if info.annotation is not None else Any)


def _coerce(info: FieldInfo, raw: Any) -> Any:
    return _adapter(info).validate_python(raw)


def _ask_text(info: FieldInfo, question_text: str, current: Any, say: Say) -> Any:
    default = "" if current is None else _render_default(current)
    while True:
        raw = ask(questionary.text(f"{question_text}:", default=default))
        value: Any = raw
        if raw == "" and _unwrap_optional(info.annotation)[1]:
            return None
        if isinstance(current, list | dict) or _is_container(info):
            import yaml

            value = yaml.safe_load(raw) if raw.strip() else []
        try:
            return _adapter(info).validate_python(value)
        except ValidationError as exc:
            say(f"✗ {exc.errors()[0]['msg']} — try again (Esc cancels).")


def _is_container(info: FieldInfo) -> bool:
    inner, _ = _unwrap_optional(info.annotation)
    return typing.get_origin(inner) in (list, dict, Sequence, Mapping)


def _render_default(value: Any) -> str:
    if isinstance(value, list | dict):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)


__all__ = [
    "SetupAnswers",
    "SetupCancelled",
    "ask",
    "choices_of",
    "field_url",
    "is_secret",
    "masked",
    "prompt_settings",
    "setup_hint",
    "skipped_in_setup",
]

"""Interactive prompts generated from a provider's ``Settings`` model.

One typed description drives setup: ``SecretStr`` → masked prompt written to ``.env``
(an existing value shows as ``…last4``, blank keeps it); ``Literal``/``Enum`` → a choice
list; ``bool`` → yes/no; anything else → text validated against the field's type. The
field's ``description`` is the question; ``json_schema_extra={"url": ...}`` adds a
"Get yours at" line. Esc or Ctrl-C anywhere raises :class:`SetupCancelled`.

Which fields are asked (:func:`setup_level`): ``hermes-memory memory setup <name>`` asks only what a
first-time user must answer — fields marked ``json_schema_extra={"setup": "ask"}`` (build
them with :func:`setup_field`), every secret and every field without a default. The rest
is "advanced": asked only with ``--advanced``, otherwise left at its default and not written.
``"setup": "advanced"`` demotes a secret; ``"setup": False`` (or ``"hidden"``) never asks.
``json_schema_extra={"choices": [...]}`` narrows the values offered (hide test-only ones).
``json_schema_extra={"when": {"mode": ["server"]}}`` asks a field only when the fields named
(asked earlier in the same run, else their stored or default value) hold one of the values
listed: a server's URL and token follow the choice of a server mode.
Answers equal to the default are not written to config (and drop an older stored value).
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from hermes_core.providers.base import (
    ProviderSettings,
    SetupLevel,
    asked_when,
    env_var_for,
    field_url,
    is_secret,
    setup_field,
)

if TYPE_CHECKING:  # questionary pulls in prompt_toolkit (~0.15 s): imported when asking
    import questionary


class SetupCancelled(Exception):
    """The user pressed Esc or Ctrl-C; nothing must be written."""


def _escape_cancels(question: questionary.Question) -> questionary.Question:
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings

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


def _extra(info: FieldInfo) -> Mapping[str, Any]:
    extra = info.json_schema_extra
    return extra if isinstance(extra, Mapping) else {}


def choices_of(info: FieldInfo) -> list[str] | None:
    """Values offered for a Literal or Enum field (narrowed by ``json_schema_extra
    ["choices"]``, which hides test-only values), else None."""
    inner, _ = _unwrap_optional(info.annotation)
    if typing.get_origin(inner) is typing.Literal:
        allowed = [str(value) for value in typing.get_args(inner)]
    elif isinstance(inner, type) and issubclass(inner, enum.Enum):
        allowed = [str(member.value) for member in inner]
    else:
        return None
    offered = _extra(info).get("choices")
    if isinstance(offered, list | tuple):
        narrowed = [value for value in allowed if value in {str(o) for o in offered}]
        return narrowed or allowed
    return allowed


def setup_level(info: FieldInfo) -> SetupLevel:
    """``ask`` (always asked), ``advanced`` (only with ``--advanced``) or ``hidden``.

    Marked fields follow their mark; unmarked secrets and fields without a default are
    ``ask``; every other unmarked field is ``advanced``.
    """
    mark = _extra(info).get("setup")
    if mark is False or mark == "hidden":
        return "hidden"
    if mark is True or mark == "ask":
        return "ask"
    if mark == "advanced":
        return "advanced"
    if is_secret(info) or info.is_required():
        return "ask"
    return "advanced"


def skipped_in_setup(info: FieldInfo, *, advanced: bool = False) -> bool:
    """Whether ``hermes-memory memory setup`` (with ``--advanced`` when ``advanced``) skips it."""
    level = setup_level(info)
    return level == "hidden" or (level == "advanced" and not advanced)


def setup_fields(
    settings_cls: type[ProviderSettings], *, advanced: bool = False
) -> list[tuple[str, FieldInfo]]:
    """The fields setup asks, in declaration order."""
    return [
        (name, info)
        for name, info in settings_cls.model_fields.items()
        if not skipped_in_setup(info, advanced=advanced)
    ]


def masked(value: str) -> str:
    """``…abcd`` — never more than the last four characters of a secret."""
    return "…" + value[-4:] if len(value) > 4 else "…"


def setup_hint(settings_cls: type[ProviderSettings]) -> str:
    """What a first-time setup of ``settings_cls`` needs, as the picker shows it, from what
    the settings actually ask with their defaults (a key asked only in another mode, such as
    a server's token, is not needed out of the box):

    * ``"API key"``: a secret is asked in the default configuration;
    * ``"no key (API key for mode server)"``: secrets are asked only for other modes;
    * ``"no key"``: settings but no secret; ``"no setup needed"``: nothing is asked.
    """
    defaults = {name: info.default for name, info in settings_cls.model_fields.items()}
    fields = [info for _, info in setup_fields(settings_cls)]
    secrets = [info for info in fields if is_secret(info)]
    if any(asked_when(info, defaults) for info in secrets):
        return "API key"
    modes = sorted({_condition_text(info) for info in secrets})
    if modes:
        return f"no key (API key for {', '.join(modes)})"
    return "no key" if fields else "no setup needed"


def _condition_text(info: FieldInfo) -> str:
    """``{"mode": ["host", "platform"]}`` → ``"mode host/platform"``."""
    condition = _extra(info).get("when")
    if not isinstance(condition, Mapping):
        return ""
    parts = []
    for name, allowed in condition.items():
        options = allowed if isinstance(allowed, list | tuple | set) else [allowed]
        parts.append(f"{name} {'/'.join(str(option) for option in options)}")
    return ", ".join(parts)


@dataclass
class SetupAnswers:
    """Values collected by :func:`prompt_settings`: config values and env secrets."""

    config: dict[str, Any] = field(default_factory=dict)
    """Answers that differ from the field's default (what gets written)."""
    secrets: dict[str, str] = field(default_factory=dict)
    defaults: set[str] = field(default_factory=set)
    """Fields answered with their default: not written, and an older stored value is dropped."""

    def merged_into(self, current: Mapping[str, Any]) -> dict[str, Any]:
        """``current`` config with these answers applied."""
        merged = {key: value for key, value in current.items() if key not in self.defaults}
        merged.update(self.config)
        return merged


Say = Callable[[str], None]


def prompt_settings(
    settings_cls: type[ProviderSettings],
    provider_name: str,
    *,
    current_config: Mapping[str, Any],
    current_env: Mapping[str, str],
    say: Say,
    advanced: bool = False,
) -> SetupAnswers:
    """Ask the setup fields of ``settings_cls`` (all with ``advanced``) in order; returns
    what to write: only answers that differ from the defaults."""
    import questionary

    answers = SetupAnswers()
    note = getattr(settings_cls, "setup_note", "")
    if isinstance(note, str) and note.strip():
        say(note.strip())
    known = {
        name: current_config.get(name, info.get_default(call_default_factory=True))
        for name, info in settings_cls.model_fields.items()
    }
    for name, info in setup_fields(settings_cls, advanced=advanced):
        if not asked_when(info, known):
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
            value = _coerce(
                info, ask(questionary.select(question_text, choices=options, default=default))
            )
        elif _unwrap_optional(info.annotation)[0] is bool:
            value = bool(ask(questionary.confirm(question_text, default=bool(current))))
        else:
            value = _ask_text(info, question_text, current, say)
        known[name] = value
        if _same(value, info.get_default(call_default_factory=True)):
            answers.defaults.add(name)
        else:
            answers.config[name] = value
    return answers


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(default, enum.Enum):
        default = default.value
    try:
        return bool(value == default)
    except Exception:
        return False


def _adapter(info: FieldInfo) -> TypeAdapter[Any]:
    return TypeAdapter(info.annotation if info.annotation is not None else Any)


def _coerce(info: FieldInfo, raw: Any) -> Any:
    return _adapter(info).validate_python(raw)


def _ask_text(info: FieldInfo, question_text: str, current: Any, say: Say) -> Any:
    import questionary

    default = "" if current is None else _render_default(current)
    while True:
        raw = ask(questionary.text(f"{question_text}:", default=default))
        value: Any = raw
        if raw == "" and _unwrap_optional(info.annotation)[1]:
            return None
        if isinstance(current, list | dict) or _is_container(info):
            from hermes_core.yamlsafe import safe_yaml_load

            value = safe_yaml_load(raw) if raw.strip() else []
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
    "SetupLevel",
    "ask",
    "asked_when",
    "choices_of",
    "field_url",
    "is_secret",
    "masked",
    "prompt_settings",
    "setup_field",
    "setup_fields",
    "setup_hint",
    "setup_level",
    "skipped_in_setup",
]

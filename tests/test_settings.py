"""Settings sources and the safe writers for config.yaml and .env."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from hermes_core.errors import ConfigError
from hermes_core.settings import load_settings
from hermes_core.settings.files import read_env_file, set_config_value, write_env_values


def test_defaults(hermes_home: Path) -> None:
    settings = load_settings(hermes_home)
    assert settings.memory.memory_char_limit == 2200
    assert settings.memory.user_char_limit == 1375
    assert settings.memory.prefetch_timeout == 8
    assert settings.memory.provider == ""
    assert settings.compression.threshold == 0.5


def test_precedence_init_env_dotenv_yaml(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (hermes_home / "config.yaml").write_text(
        "memory:\n  memory_char_limit: '3000'\n  user_char_limit: 100\n  nudge_interval: 4\n"
        "  provider: fromyaml\n"
    )
    (hermes_home / ".env").write_text(
        "HERMES_MEMORY__USER_CHAR_LIMIT=200\nHERMES_MEMORY__PROVIDER=fromdotenv\n"
    )
    monkeypatch.setenv("HERMES_MEMORY__PROVIDER", "fromenv")
    settings = load_settings(hermes_home, compression={"threshold": 0.7})
    assert settings.memory.memory_char_limit == 3000  # string coerced from YAML
    assert settings.memory.user_char_limit == 200  # .env beats YAML
    assert settings.memory.provider == "fromenv"  # env beats .env
    assert settings.memory.nudge_interval == 4
    assert settings.compression.threshold == 0.7  # init beats everything


def test_invalid_value_names_key_and_file(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory:\n  memory_char_limit: plenty\n")
    with pytest.raises(ConfigError) as info:
        load_settings(hermes_home)
    assert "memory.memory_char_limit" in str(info.value)
    assert "config.yaml" in str(info.value)


def test_broken_yaml_is_a_clear_error(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text("memory: [unclosed\n")
    with pytest.raises(ConfigError, match="could not be parsed"):
        load_settings(hermes_home)
    (hermes_home / "config.yaml").write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="must contain a mapping"):
        load_settings(hermes_home)


def test_every_settings_field_has_a_description() -> None:
    from pydantic import BaseModel

    from hermes_core.settings.models import HermesSettings

    missing: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            if not (info.description or "").strip():
                missing.append(prefix + name)
            annotation = info.annotation
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                walk(annotation, f"{prefix}{name}.")

    walk(HermesSettings, "")
    assert missing == []


def test_env_file_written_atomically_private_and_merged(hermes_home: Path) -> None:
    (hermes_home / ".env").write_text("# keep me\nEXISTING=1\nMEM0_API_KEY=old\n")
    write_env_values(hermes_home, {"MEM0_API_KEY": "new\r\nvalue", "OTHER": "a b#c"})
    text = (hermes_home / ".env").read_text()
    assert "# keep me" in text and "EXISTING=1" in text
    assert stat.S_IMODE(os.stat(hermes_home / ".env").st_mode) == 0o600
    values = read_env_file(hermes_home)
    assert values["MEM0_API_KEY"] == "newvalue"  # CR/LF stripped
    assert values["OTHER"] == "a b#c"
    assert text.count("MEM0_API_KEY") == 1


@pytest.mark.parametrize("key", ["LD_PRELOAD", "PYTHONPATH", "HERMES_HOME", "1BAD", "A-B", "A B"])
def test_env_keys_validated_before_writing(hermes_home: Path, key: str) -> None:
    with pytest.raises(ConfigError):
        write_env_values(hermes_home, {"GOOD": "1", key: "x"})
    assert not (hermes_home / ".env").exists()  # nothing written at all


def test_set_config_value_keeps_the_rest(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(
        "memory:\n  nudge_interval: 3\nskills:\n  disabled: [x]\n"
    )
    set_config_value(hermes_home, "memory.provider", "chroma")
    set_config_value(hermes_home, "memory.providers.chroma", {"top_k": 4})
    data = yaml.safe_load((hermes_home / "config.yaml").read_text())
    assert data == {
        "memory": {
            "nudge_interval": 3,
            "provider": "chroma",
            "providers": {"chroma": {"top_k": 4}},
        },
        "skills": {"disabled": ["x"]},
    }
    assert stat.S_IMODE(os.stat(hermes_home / "config.yaml").st_mode) == 0o600


def test_a_rejected_url_is_reported_without_its_password() -> None:
    """A validator that echoes the bad value (the chroma provider's ``url`` does) and the
    ``(got …)`` suffix must not print a password written into the URL."""
    from pydantic import BaseModel, ValidationError, field_validator

    from hermes_core.settings.base import format_validation_error

    class Server(BaseModel):
        url: str

        @field_validator("url")
        @classmethod
        def _no_userinfo(cls, value: str) -> str:
            raise ValueError(f"{value!r}: the server URL takes no user; put a token instead")

    with pytest.raises(ValidationError) as caught:
        Server(url="http://hermes:pw-hunter2@127.0.0.1:8000")
    text = format_validation_error(caught.value, prefix="memory.providers.chroma")
    assert "hunter2" not in text
    assert text.startswith("memory.providers.chroma.url:") and "takes no user" in text

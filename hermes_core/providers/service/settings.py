"""Names of the settings that fix a failing service call, derived from a provider's
``Settings`` model so messages never drift from the real field and env var names."""

from __future__ import annotations

from collections.abc import Mapping

from hermes_core.providers.base import ProviderSettings, env_var_for
from hermes_core.providers.service.errors import ServiceSettings


def setting_label(cls: type[ProviderSettings], provider: str, field: str) -> str:
    """``"HONCHO_API_KEY (memory.providers.honcho.api_key)"``: the env var, then the
    config.yaml key, of ``field``."""
    if field not in cls.model_fields:
        raise KeyError(f"{cls.__name__} has no field {field!r}")
    return f"{env_var_for(cls, provider, field)} (memory.providers.{provider}.{field})"


def service_settings(
    cls: type[ProviderSettings],
    provider: str,
    service: str,
    *,
    key_field: str | None = None,
    url_field: str | None = None,
) -> ServiceSettings:
    """A :class:`ServiceSettings` for provider ``provider`` whose key and base URL live in
    ``key_field`` / ``url_field`` of ``cls``; the key field's ``json_schema_extra["url"]``
    becomes the "get a key at" hint."""
    key_url = None
    if key_field is not None:
        extra = cls.model_fields[key_field].json_schema_extra
        if isinstance(extra, Mapping) and isinstance(extra.get("url"), str):
            key_url = str(extra["url"])
    return ServiceSettings(
        service=service,
        key_setting=setting_label(cls, provider, key_field) if key_field else None,
        url_setting=setting_label(cls, provider, url_field) if url_field else None,
        key_url=key_url,
        setup_command=f"hermes-memory memory setup {provider}",
    )


__all__ = ["service_settings", "setting_label"]

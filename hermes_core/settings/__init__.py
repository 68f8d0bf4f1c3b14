"""Settings: sources, the model tree and safe writers. See :mod:`hermes_core.settings.base`."""

from hermes_core.settings.base import build_settings, load_settings, resolve_home
from hermes_core.settings.models import HermesSettings

__all__ = ["HermesSettings", "build_settings", "load_settings", "resolve_home"]

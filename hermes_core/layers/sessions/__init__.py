"""Built-in layer: sessions. Registered from `hermes_core.plugins.BUILTIN_PLUGINS`."""

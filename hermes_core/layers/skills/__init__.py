"""Built-in layer: skills. Registered from `hermes_core.plugins.BUILTIN_PLUGINS`."""

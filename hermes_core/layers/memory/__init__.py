"""Built-in layer: memory. Registered from `hermes_core.plugins.BUILTIN_PLUGINS`."""

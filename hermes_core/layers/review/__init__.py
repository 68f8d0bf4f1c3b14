"""Built-in layer: review. Registered from `hermes_core.plugins.BUILTIN_PLUGINS`."""

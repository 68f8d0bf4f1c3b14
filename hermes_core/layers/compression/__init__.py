"""Built-in layer: compression. Registered from `hermes_core.plugins.BUILTIN_PLUGINS`."""

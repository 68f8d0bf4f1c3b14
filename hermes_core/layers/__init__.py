"""Built-in memory layers. Each is a plugin; a layer never imports another layer."""

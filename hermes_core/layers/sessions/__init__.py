"""Built-in layer: the archive of every past session (state.db + FTS5) and ``session_search``.

``db`` (schema, migrations, records), ``fts`` (query sanitiser, CJK), ``ranking``,
``timeparse``, ``search`` (the tool), ``plugin`` (the hooks; registered from
``hermes_core.plugins.BUILTIN_PLUGINS``).
"""

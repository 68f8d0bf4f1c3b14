"""Built-in layer: the archive of every past session and ``session_search``.

``archive`` (the storage seam: ``SessionStore`` and the shared ``ArchiveBase``), ``db``
(SQLite: state.db + FTS5; schema, migrations, records), ``pg`` / ``pg_schema`` / ``pg_fts``
(PostgreSQL), ``store`` (opening the configured backend), ``migrate`` (copying between
backends), ``fts`` (query sanitiser, CJK), ``ranking``, ``timeparse``, ``search`` (the tool),
``plugin`` (the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).
"""

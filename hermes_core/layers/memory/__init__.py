"""Built-in layer: MEMORY.md and USER.md, the curated memory frozen into the system prompt.

``store`` (the files: parsing, locks, atomic writes), ``ops`` and ``engine`` (what a write
does), ``tool`` (the model's ``memory`` tool), ``snapshot`` (the frozen prompt block),
``approval`` (staged writes), ``edit`` (whole-file edits), ``archive`` (the overflow archive),
``plugin`` (the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).
"""

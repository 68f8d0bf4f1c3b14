"""Built-in layer: skills (SKILL.md files) as procedural memory, agent-wide.

``model`` (the SKILL.md format), ``library`` and ``paths`` (finding skills on disk), ``index``
(the prompt index), ``tools``, ``manage``, ``find`` and ``install``, ``plugin`` (the hooks;
registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).
"""

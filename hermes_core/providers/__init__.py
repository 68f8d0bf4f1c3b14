"""External memory providers: the :class:`~hermes_core.providers.base.MemoryProvider` base
class and its settings (``base``), listing installed providers without importing them
(``discovery``), and activating the one active provider (``registry``, the only place the
one-provider rule lives)."""

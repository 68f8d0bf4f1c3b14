"""Built-in layer: MEMORY.md and USER.md, the curated memory frozen into the system prompt.

``store`` (the files: parsing, locks, atomic writes), ``ops`` and ``engine`` (what a write
does), ``tool`` (the model's ``memory`` tool), ``snapshot`` (the frozen prompt block),
``approval`` (staged writes), ``edit`` (whole-file edits), ``archive`` (the overflow archive),
``plugin`` (the hooks; registered from ``hermes_core.plugins.BUILTIN_PLUGINS``).

The layer's public face is ``__all__`` below: code outside the layers (cli/, mcp/, compat/,
agent/, bench/, host.py, hooks.py) imports these names from ``hermes_core.layers.memory`` and
nothing from its modules (tests/test_layer_boundaries.py). Names load on first use, so
importing the package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.lazy import lazy_names

if TYPE_CHECKING:
    from .approval import approve_pending, reject_pending
    from .backends import (
        describe,
        export_note,
        open_pending,
        pending_users,
        postgres_target,
        store_user_ids,
        unreadable_fix,
    )
    from .edit import EditRefused, begin_edit, save_edit, save_recovery
    from .engine import MemoryEngine, Outcome, RestoreFailed, restore_entry, restore_hint
    from .pending import PendingStore
    from .pgstore import delete_owner
    from .plugin import MemoryLayer
    from .store import FILENAMES, EntryStore, char_count, memories_dir, percent
    from .transfer import export_files, import_files
    from .users import memory_users

_HOME: dict[str, str] = {
    "RestoreFailed": "engine",
    "restore_entry": "engine",
    "unreadable_fix": "backends",
    "export_note": "backends",
    "approve_pending": "approval",
    "begin_edit": "edit",
    "char_count": "store",
    "delete_owner": "pgstore",
    "describe": "backends",
    "EditRefused": "edit",
    "EntryStore": "store",
    "export_files": "transfer",
    "FILENAMES": "store",
    "import_files": "transfer",
    "memories_dir": "store",
    "memory_users": "users",
    "MemoryEngine": "engine",
    "MemoryLayer": "plugin",
    "open_pending": "backends",
    "Outcome": "engine",
    "pending_users": "backends",
    "PendingStore": "pending",
    "percent": "store",
    "postgres_target": "backends",
    "reject_pending": "approval",
    "restore_hint": "engine",
    "save_edit": "edit",
    "save_recovery": "edit",
    "store_user_ids": "backends",
}
"""Public name -> the module of this layer that defines it."""


__getattr__ = lazy_names(__name__, _HOME)

__all__ = [
    "FILENAMES",
    "EditRefused",
    "EntryStore",
    "MemoryEngine",
    "MemoryLayer",
    "Outcome",
    "PendingStore",
    "RestoreFailed",
    "approve_pending",
    "begin_edit",
    "char_count",
    "delete_owner",
    "describe",
    "export_files",
    "export_note",
    "import_files",
    "memories_dir",
    "memory_users",
    "open_pending",
    "pending_users",
    "percent",
    "postgres_target",
    "reject_pending",
    "restore_entry",
    "restore_hint",
    "save_edit",
    "save_recovery",
    "store_user_ids",
    "unreadable_fix",
]

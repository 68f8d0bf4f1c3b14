"""``hermes-memory skills browse``: one row per skill with where it came from and whether it is
ready.

Sources: ``local`` (written in ``$HERMES_HOME/skills`` by hand or by the agent), ``installed``
(put there by ``hermes-memory skills install``, which leaves an ``.installed.json`` marker) and
``external`` (a read-only ``skills.external_dirs`` root). Keys: ``-`` when the skill needs
none, ``set`` when every required variable is set, else the missing names (never values).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from hermes_core.fsutil import read_regular_text
from hermes_core.layers.skills.envkeys import missing_env, present_env_names
from hermes_core.layers.skills.find import SkillStatsStore
from hermes_core.layers.skills.install import INSTALLED_MARKER
from hermes_core.layers.skills.library import Skill
from hermes_core.layers.skills.listing import hidden_by, in_category
from hermes_core.layers.skills.tools import SkillsService


@dataclass(frozen=True, slots=True)
class BrowseRow:
    """One skill as ``hermes-memory skills browse`` shows it."""

    name: str
    category: str
    description: str
    source: str
    installed_from: str
    shown: bool
    hidden_reason: str
    uses: int
    successes: int
    failures: int
    success_rate: float | None
    keys_required: list[str]
    keys_missing: list[str]
    path: str

    @property
    def keys(self) -> str:
        """``-``, ``set`` or ``missing: A, B``."""
        if not self.keys_required:
            return "-"
        return "set" if not self.keys_missing else "missing: " + ", ".join(self.keys_missing)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready row."""
        return {**asdict(self), "keys": self.keys}


def source_of(skill: Skill) -> tuple[str, str]:
    """(``local`` | ``installed`` | ``external``, where it was installed from or "")."""
    if skill.root.read_only:
        return skill.root.label, ""
    marker = skill.directory / INSTALLED_MARKER
    if marker.is_file() and not marker.is_symlink():
        try:
            data = json.loads(read_regular_text(marker, max_bytes=1 << 20))
        except (OSError, ValueError):
            data = {}
        origin = data.get("source") if isinstance(data, dict) else None
        return "installed", str(origin or "")
    return "local", ""


def browse(service: SkillsService, category: str | None = None) -> list[BrowseRow]:
    """Every skill of every root (hidden ones too), sorted by category and name."""
    library = service.library()
    stats = SkillStatsStore(service.home).stats_or_empty()
    needed = {
        s.name for k in library.skills.values() for s in k.meta.required_environment_variables
    }
    present = present_env_names(service.home, needed)
    rows: list[BrowseRow] = []
    for skill in sorted(library.skills.values(), key=lambda s: (s.category, s.name)):
        if not in_category(skill.category, category):
            continue
        reason = hidden_by(service, skill)
        record = stats.get(skill.name)
        source, origin = source_of(skill)
        rows.append(
            BrowseRow(
                name=skill.name,
                category=skill.category,
                description=skill.meta.description,
                source=source,
                installed_from=origin,
                shown=reason is None,
                hidden_reason=reason or "",
                uses=record.uses if record else 0,
                successes=record.successes if record else 0,
                failures=record.failures if record else 0,
                success_rate=round(record.success_rate, 3) if record and record.uses else None,
                keys_required=[s.name for s in skill.meta.required_environment_variables],
                keys_missing=[s.name for s in missing_env(skill.meta, present)],
                path=str(skill.directory),
            )
        )
    return rows


__all__ = ["INSTALLED_MARKER", "BrowseRow", "browse", "source_of"]

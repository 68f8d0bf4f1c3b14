"""A rich progress bar on stderr for re-embedding (``Progress`` callbacks of the store)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from hermes_memory_chroma.store import Progress as ProgressCallback


def reembed_bar(label: str, total: int, console: Console | None = None) -> ProgressCallback:
    """A callback ``(done, total)`` driving a rich bar; the bar closes at ``done >= total``."""
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=False,
    )
    task = bar.add_task(label, total=max(total, 0))
    bar.start()
    state = {"open": True}

    def tick(done: int, total_now: int) -> None:
        if not state["open"]:
            return
        bar.update(task, completed=done, total=max(total_now, 0))
        if done >= total_now:
            bar.stop()
            state["open"] = False

    return tick


def auto_reembed_bar(user_id: str, total: int) -> ProgressCallback:
    """The store's automatic re-embed hook: one bar per user collection."""
    return reembed_bar(f"chroma: re-embedding memories of {user_id}", total)


__all__ = ["auto_reembed_bar", "reembed_bar"]

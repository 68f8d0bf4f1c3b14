"""Run ``hermes-memory ui``: bind (127.0.0.1 and a free port by default), print the URL, open a
browser when one is available, serve until interrupted."""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hermes_core.net import free_port

from .guard import Guard, is_loopback


@dataclass(frozen=True)
class Served:
    """Where the app listens and the URL to open (with the access token when one is
    needed: share it only with whoever may see every user's memory)."""

    host: str
    port: int
    url: str


def url_for(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}/"
    return base + (f"?token={token}" if token else "")


def serve(
    home: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    read_only: bool = False,
    open_browser: bool = True,
    announce: Callable[[Served], None] = lambda _s: None,
) -> None:
    """Serve the inspector of ``home`` until interrupted (Ctrl-C)."""
    import uvicorn

    from hermes_core.host import MemoryHost

    from .app import create_app

    chosen = port or free_port(host)
    guard = Guard(home=home, bind_host=host, read_only=read_only)
    served = Served(host, chosen, url_for(host, chosen, guard.token))
    with MemoryHost.open(home) as memory_host:
        app = create_app(memory_host, guard)
        config = uvicorn.Config(app, host=host, port=chosen, log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        announce(served)
        if open_browser and is_loopback(host):
            threading.Timer(0.5, _open, args=(served.url,)).start()
        server.run()


def _open(url: str) -> None:
    try:
        webbrowser.open(url)
    except Exception:  # no browser: the printed URL is enough
        pass


__all__ = ["Served", "serve", "url_for"]

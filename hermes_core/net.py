"""Small network helpers shared by the local servers (``hermes-memory mcp serve``,
``hermes-memory ui``) and the loopback servers the benches and tests start."""

from __future__ import annotations

import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS reported free on ``host`` a moment ago.

    Another process may take it before a server binds it, so a caller that starts a server
    in a subprocess retries on a clash. IPv6 hosts (containing ``:``) bind an IPv6 socket.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host.strip("[]"), 0))
        return int(sock.getsockname()[1])


class ServingThread:
    """A ``ThreadingHTTPServer`` on 127.0.0.1 (a port the OS picks), served on a daemon thread.

    Construction binds and starts serving; :meth:`stop` shuts it down, closes the socket and
    waits up to five seconds for the serving thread. Request threads are daemons, so a
    request still hanging when the server stops never keeps the process alive.
    """

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        *,
        name: str,
        poll_interval: float = 0.5,
    ) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": poll_interval},
            name=name,
            daemon=True,
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    def stop(self) -> None:
        """Stop serving and close the socket (safe to call more than once)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


__all__ = ["ServingThread", "free_port", "is_loopback"]

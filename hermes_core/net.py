"""Small network helpers shared by the local servers (``hermes-memory mcp serve``,
``hermes-memory ui``) and the loopback servers the benches and tests start."""

from __future__ import annotations

import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


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


class LoopbackHTTPServer:
    """Base of an HTTP server a bench or test runs in-process on 127.0.0.1.

    A subclass supplies :meth:`_handler` (and may set ``url_path``, ``thread_name`` and
    ``poll_interval``); this class owns the lifecycle: :meth:`start` (idempotent, returns the
    server), :meth:`stop` (idempotent), use as a context manager, :attr:`port` and
    :attr:`base_url` (``http://127.0.0.1:<port>`` + ``url_path``). Both raise
    ``RuntimeError`` before :meth:`start`.
    """

    url_path = ""
    thread_name = "loopback-server"
    poll_interval = 0.5
    _served: ServingThread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _after_start(self) -> None:
        """Called once serving has begun (the port is known)."""

    def _before_stop(self) -> None:
        """Called by :meth:`stop` before the socket closes (release hung requests here)."""

    def start(self) -> Self:
        """Bind 127.0.0.1 on a free port and serve on a daemon thread. Idempotent."""
        if self._served is None:
            self._served = ServingThread(
                self._handler(), name=self.thread_name, poll_interval=self.poll_interval
            )
            self._after_start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket. Idempotent; requests still in flight are
        abandoned (their threads are daemons)."""
        self._before_stop()
        served, self._served = self._served, None
        if served is not None:
            served.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        if self._served is None:
            raise RuntimeError(f"{type(self).__name__} is not started; call start() first")
        return self._served.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` followed by ``url_path``."""
        return f"http://127.0.0.1:{self.port}{self.url_path}"


__all__ = ["LoopbackHTTPServer", "ServingThread", "free_port", "is_loopback"]

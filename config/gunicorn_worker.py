"""gunicorn's threaded worker with a deadline on reading each request.

A thread of the gthread worker reads a request's line, headers and body from its socket as they
arrive; a client that sends them a byte at a time held the thread for as long as it liked, and a
handful of such clients held every thread of the site (the sign-in page waited 30 s behind ten). Here
each request must arrive whole within ``CONCORD_REQUEST_READ_SECONDS`` (10) of the worker taking it
up: past that the read fails, the connection is closed and the thread is free. Answers are written
without a deadline, as before.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from gunicorn.workers.gthread import ThreadWorker  # type: ignore[import-untyped]  # gunicorn ships no hints

READ_TIMED_OUT = "the request did not arrive within CONCORD_REQUEST_READ_SECONDS"


def read_seconds() -> float:
    return float(os.environ.get("CONCORD_REQUEST_READ_SECONDS", "10"))


class ReadDeadlineSocket:
    """A socket whose reads all end by one deadline (``start`` sets it); everything else passes through."""

    def __init__(self, sock: socket.socket, seconds: float) -> None:
        self._sock = sock
        self._seconds = seconds
        self._deadline = time.monotonic() + seconds

    def start(self) -> None:
        self._deadline = time.monotonic() + self._seconds

    def _left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(READ_TIMED_OUT)
        return left

    def recv(self, size: int, *flags: Any) -> bytes:
        self._sock.settimeout(self._left())
        return self._sock.recv(size, *flags)

    def recv_into(self, buffer: Any, *args: Any) -> int:
        self._sock.settimeout(self._left())
        return self._sock.recv_into(buffer, *args)

    def send(self, data: Any, *flags: Any) -> int:
        self._sock.settimeout(None)
        return self._sock.send(data, *flags)

    def sendall(self, data: Any, *flags: Any) -> None:
        self._sock.settimeout(None)
        self._sock.sendall(data, *flags)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class DeadlineThreadWorker(ThreadWorker):
    """gthread, with each request read by a deadline (above). TLS sockets (gunicorn terminating TLS
    itself, which Concord's deployment leaves to its proxy) are left as they are."""

    def handle(self, conn: Any) -> Any:
        if not self.cfg.is_ssl:
            if not isinstance(conn.sock, ReadDeadlineSocket):
                conn.sock = ReadDeadlineSocket(conn.sock, read_seconds())
            conn.sock.start()
        return super().handle(conn)

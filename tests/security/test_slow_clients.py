"""Slow clients on loopback against the embedded default's web server (config/gunicorn.conf.py): a few
connections sending their request a byte at a time hold a thread each for at most
CONCORD_REQUEST_READ_SECONDS, so another person's request is answered within about that, not after
the slow clients give up."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from config.gunicorn_worker import READ_TIMED_OUT

ROOT = Path(__file__).resolve().parents[2]
READ_SECONDS = 1.0
SLOW_CLIENTS = 4  # twice the threads the server runs here
TRICKLE_SECONDS = 8.0  # how long each slow client would keep trickling: the bound on the test


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port: int, timeout: float) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return int(conn.recv(64).split()[1])


@pytest.fixture
def server(tmp_path):
    port = free_port()
    env = {
        **os.environ, "WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "2", "CONCORD_EMBEDDED": "true",
        "CONCORD_REQUEST_READ_SECONDS": str(READ_SECONDS), "CONCORD_GC_FREEZE": "false",
    }  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi:application", "-c", "config/gunicorn.conf.py",
         "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                get(port, timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("the server did not start")
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def trickle(port: int, held: list[float]) -> None:
    """Send a request's headers a byte every 0.2 s; note how long the server kept the connection."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=TRICKLE_SECONDS + 2) as conn:
        try:
            for byte in b"GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"x" * 200:
                conn.sendall(bytes([byte]))
                time.sleep(0.2)
                if time.monotonic() - start > TRICKLE_SECONDS:
                    break
        except OSError:
            pass  # the server closed it
    held.append(time.monotonic() - start)


def test_slow_clients_hold_no_thread_past_the_read_deadline(server):
    held: list[float] = []
    slow = [threading.Thread(target=trickle, args=(server, held)) for _ in range(SLOW_CLIENTS)]
    for client in slow:
        client.start()
    time.sleep(0.5)  # every thread of the server is now reading a slow request
    start = time.monotonic()
    status = get(server, timeout=TRICKLE_SECONDS + 5)
    waited = time.monotonic() - start
    for client in slow:
        client.join(TRICKLE_SECONDS + 5)
    assert status == 301  # the favicon's permanent redirect: answered
    assert waited < 3 * READ_SECONDS + 1, waited  # not after the slow clients' 8 s
    assert max(held) < TRICKLE_SECONDS, held  # each slow connection was closed by the server


@pytest.mark.parametrize("path", ["/api/projects/main/items/", "/p/main/import/"])
def test_a_body_that_stopped_arriving_is_a_408_not_a_500(rf, path):
    """What Django raises when the read deadline cuts a body short, answered as the client's fault."""
    from django.http import UnreadablePostError

    from config.error_views import DomainErrorMiddleware

    response = DomainErrorMiddleware(lambda request: None).process_exception(
        rf.post(path), UnreadablePostError(READ_TIMED_OUT)
    )
    assert response is not None and response.status_code == 408
    assert "did not arrive in time" in response.content.decode()

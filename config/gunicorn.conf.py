"""gunicorn settings for Concord's web processes: `make run`, the benches and production.

    gunicorn config.wsgi:application -c config/gunicorn.conf.py

Command-line flags override what is set here. See docs/deployment.md for the measurements behind
the defaults.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time

# Two processes per core with two threads each, at least eight threads in all. Threads of one
# process take turns holding the GIL: a thread whose database answer has arrived waits for the one
# running Python to let go. With four threads a process, requests were held up ~6 ms each on average
# at 150 req/s (tens of ms in the slowest); with two threads, about half that; with one, ~1 ms
# (bench/annotate_load.py --request-trace; docs/deployment.md). Two threads still let a slow page
# hold a thread, not the process. More processes also spread kept-alive connections, each served by
# the process that accepted it, more evenly.
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
workers = int(os.environ.get("WEB_CONCURRENCY", str(max(4, 2 * (os.cpu_count() or 1)))))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))


def _env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def _trace_collections(path: str) -> None:
    """Append every collection's generation, objects collected and pause to ``path``.<pid>."""
    started: dict[str, float] = {}
    sink = open(f"{path}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - open for the process's life

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started["at"] = time.perf_counter()
            return
        pause_ms = (time.perf_counter() - started.get("at", time.perf_counter())) * 1000
        sink.write(f"{time.time():.3f} gen={info['generation']} collected={info['collected']} ms={pause_ms:.2f}\n")

    gc.callbacks.append(record)


def _thread_waited_ns() -> int:
    """Nanoseconds this thread has spent runnable but waiting for a core (Linux schedstat)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0


_request_trace: dict[str, object] = {}


def _open_request_trace(path: str) -> None:
    """Per request, append: finish time, wall ms, this thread's CPU ms, ms waiting for a core.

    What is left of the wall time is waiting on something else: the database, or the GIL while
    another thread of the process runs Python.
    """
    _request_trace["sink"] = open(f"{path}.{os.getpid()}", "a", buffering=1)  # noqa: SIM115 - for the process's life
    _request_trace["lock"] = threading.Lock()
    _request_trace["started"] = threading.local()


def pre_request(worker, req) -> None:
    if started := _request_trace.get("started"):
        started.at = (time.perf_counter(), time.thread_time(), _thread_waited_ns())


def post_request(worker, req, environ, resp) -> None:
    started = _request_trace.get("started")
    if started is None or not hasattr(started, "at"):
        return
    wall, cpu, waited = started.at
    line = (
        f"{time.time():.3f} {(time.perf_counter() - wall) * 1000:.2f} {(time.thread_time() - cpu) * 1000:.2f} "
        f"{(_thread_waited_ns() - waited) / 1e6:.2f}\n"
    )
    with _request_trace["lock"]:
        _request_trace["sink"].write(line)


def post_worker_init(worker) -> None:
    """Runs in each worker once the app is loaded.

    ``gc.freeze()`` moves every object made at start-up (Django, the URL resolver, templates,
    libraries: hundreds of thousands) into a generation the collector never scans again. Without it,
    each full collection walks them all and stops every thread of the worker for tens of
    milliseconds: the tail latency docs/deployment.md measures.
    """
    if _env_bool("CONCORD_GC_FREEZE", True):
        gc.freeze()
    if switch_ms := os.environ.get("CONCORD_GIL_SWITCH_MS"):
        sys.setswitchinterval(float(switch_ms) / 1000)
    if trace := os.environ.get("CONCORD_GC_TRACE"):
        _trace_collections(trace)
    if trace := os.environ.get("CONCORD_REQUEST_TRACE"):
        _open_request_trace(trace)

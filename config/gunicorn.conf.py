"""gunicorn settings for Concord's web processes: `make run`, the benches and production.

    gunicorn config.wsgi:application -c config/gunicorn.conf.py

Command-line flags override what is set here. See docs/deployment.md for the measurements behind
the defaults.
"""

from __future__ import annotations

import gc
import os
import sys
import time

worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "8"))


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

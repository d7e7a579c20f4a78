"""gunicorn settings for Concord's web processes: `make run`, the benches and production.

    gunicorn config.wsgi:application -c config/gunicorn.conf.py

Command-line flags override what is set here. The benches add tracing hooks on top of these
(bench/gunicorn_trace.py). See docs/deployment.md for the measurements behind
the defaults.
"""

from __future__ import annotations

import gc
import os
import sys

# Two processes per core with two threads each, at least eight threads in all. Threads of one
# process take turns holding the GIL: a thread whose database answer has arrived waits for the one
# running Python to let go. With four threads a process, requests were held up ~6 ms each on average
# at 150 req/s (tens of ms in the slowest); with two threads, about half that; with one, ~1 ms
# (bench/annotate_load.py --request-trace; docs/deployment.md). Two threads still let a slow page
# hold a thread, not the process. More processes also spread kept-alive connections, each served by
# the process that accepted it, more evenly.
# gthread with a deadline on reading each request (CONCORD_REQUEST_READ_SECONDS, config/gunicorn_worker.py):
# a few clients sending a byte at a time no longer hold every thread.
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "config.gunicorn_worker.DeadlineThreadWorker")
workers = int(os.environ.get("WEB_CONCURRENCY", str(max(4, 2 * (os.cpu_count() or 1)))))
threads = int(os.environ.get("GUNICORN_THREADS", "2"))


def _env_bool(name: str, default: bool) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


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

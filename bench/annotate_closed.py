"""The annotator benchmark's closed loop (``annotate_load.py --labels-per-client M``): each client
labels a fixed number of items back to back, and the server's CPU per label is read from /proc for
all its processes. Concord's server and a peer's (``annotate_peers.py``) run the same loop."""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.annotate_harness import Annotator, Client, HttpError, host_speed_ms, percentile, process_cpu_s

#: Labels each client stores before a closed-loop run is measured: a server's processes import
#: what they import lazily, and fill their caches, on their first requests.
CLOSED_WARMUP_LABELS = 10


@dataclass
class ClosedRun:
    clients: int
    labels_each: int
    seconds: float = 0.0
    #: Seconds from a label's first request (its next item, where asked for) to its stored answer.
    label_latencies: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    server_cpu_s: float = 0.0
    #: Server CPU seconds of the run's requests from the request trace (Concord's); nan for a peer.
    trace_cpu_s: float = float("nan")
    began: float = 0.0
    ended: float = 0.0

    @property
    def labels(self) -> int:
        return len(self.label_latencies)

    @property
    def labels_per_s(self) -> float:
        return self.labels / self.seconds if self.seconds else 0.0

    def per_label_ms(self, cpu_s: float) -> float:
        return 1000 * cpu_s / self.labels if self.labels else float("nan")


def run_closed(
    client: Client,
    annotators: list[Annotator],
    *,
    labels_each: int,
    next_fn: Callable[[Client, Annotator], None],
    submit_fn: Callable[..., None],
    server_pids: Callable[[], list[int]],
    factors: tuple[str, ...],
) -> ClosedRun:
    """Each annotator, one per client thread, labels ``labels_each`` items as fast as the server
    answers, after ``CLOSED_WARMUP_LABELS`` each that are not counted; the server's CPU (every
    process of it, from /proc) is read before and after."""
    for count in (CLOSED_WARMUP_LABELS, labels_each):  # the first pass is not counted
        run = ClosedRun(len(annotators), count)
        closed_pass(
            run, client, annotators, next_fn=next_fn, submit_fn=submit_fn, server_pids=server_pids, factors=factors
        )
    return run


def closed_pass(
    run: ClosedRun,
    client: Client,
    annotators: list[Annotator],
    *,
    next_fn: Callable[[Client, Annotator], None],
    submit_fn: Callable[..., None],
    server_pids: Callable[[], list[int]],
    factors: tuple[str, ...],
) -> None:
    """One pass of ``run.labels_each`` labels per annotator, its figures recorded in ``run``."""
    lock = threading.Lock()

    def work(annotator: Annotator, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(run.labels_each):
            started = time.perf_counter()
            try:
                if annotator.assignment_id is None:
                    next_fn(client, annotator)
                if annotator.done:
                    return
                submit_fn(client, annotator, rng, factors)
            except (HttpError, OSError) as exc:
                with lock:
                    run.errors[str(exc)] += 1
                annotator.assignment_id = None
                continue
            with lock:
                run.label_latencies.append(time.perf_counter() - started)

    before = sum(process_cpu_s(pid) for pid in server_pids())
    run.began, started = time.time(), time.perf_counter()
    pool = [threading.Thread(target=work, args=(a, n), daemon=True) for n, a in enumerate(annotators)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    run.seconds, run.ended = time.perf_counter() - started, time.time()
    run.server_cpu_s = sum(process_cpu_s(pid) for pid in server_pids()) - before


def report_closed(run: ClosedRun, server: str) -> None:
    errors = ", ".join(f"{reason} x{n}" for reason, n in run.errors.most_common(3)) or "none"
    print(
        f"{server}: {run.clients} clients x {run.labels_each} labels: {run.labels} labels in {run.seconds:.1f} s, "
        f"{run.labels_per_s:.1f} labels/s, label p50 {percentile(run.label_latencies, 50):.1f} ms, "
        f"p95 {percentile(run.label_latencies, 95):.1f} ms; errors: {errors}"
    )
    print(
        f"server CPU per label: {run.per_label_ms(run.server_cpu_s):.2f} ms (its processes, from /proc)"
        + (f", {run.per_label_ms(run.trace_cpu_s):.2f} ms (its request threads, from the trace)"
           if run.trace_cpu_s == run.trace_cpu_s else "")
    )  # fmt: skip
    print(f"host speed at the end: {host_speed_ms():.0f} ms; load average {os.getloadavg()[0]:.2f}")
    print(
        f"RESULT server={server} labels_per_s={run.labels_per_s:.1f} "
        f"label_p95_ms={percentile(run.label_latencies, 95):.1f} "
        f"server_cpu_ms_per_label={run.per_label_ms(run.server_cpu_s):.2f} "
        f"cpu_ms_per_label={run.per_label_ms(run.trace_cpu_s):.2f}"
    )

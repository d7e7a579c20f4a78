"""Annotator workspace load benchmark: latency of next-item and submit at rising request rates.

Sets up a copa_likert project of ``--items`` items (imported with ``import_items``; reused when a
complete one is already there) with overlap 3 and ``--annotators`` annotator accounts, clears the
work of earlier runs, starts a login session (``--client htmx``) or an API token (``--client api``)
per annotator in-process, starts gunicorn on a free loopback port and gives every annotator their
first item. Then an open-loop generator sends requests at each rate of ``--rates`` for ``--seconds``
seconds: each request goes to an idle annotator, who asks for the item they hold when they do not
know it (their first turn, or after an error), and otherwise submits it, taking their next item
from the answer, as the workspace's keyboard submit and the API's clients do:

    --client htmx (the workspace, one request per label):
    GET  /p/<slug>/annotate/                          (HX-Request: true; the item they hold)
    POST /p/<slug>/annotate/<id>/submit/              (six scores; the answer is their next item)

    --client api (one request per label; a server without ?next= answers the annotation alone,
    and the client then asks for next: two requests per label):
    POST /api/projects/<slug>/assignments/next/       (the item they hold)
    POST /api/assignments/<id>/submit/?next=true      (six scores; the answer holds their next item)

Latency counts from the request's scheduled send time, so time spent waiting for a free client
thread or a free server worker is part of it (no coordinated omission). Each server worker logs
where its requests' time went (bench/gunicorn_trace.py, ``--request-trace``; a temporary file
when not given), and ``cpu_ms`` per label is the server's CPU over the submits answered in a step.

    python bench/annotate_load.py [--items 100000] [--annotators 1000] [--rates 50,100,...] [--client api]
    python bench/annotate_load.py --profile 200     # in-process: SQL queries and hot spots, no server
    python bench/annotate_load.py --profile 800 --client api   # in-process: the API submit's CPU, part by part
    python bench/annotate_load.py --labels-per-client 100 --threads-client 8 --annotators 8 --client api
    python bench/annotate_load.py --labels-per-client 100 --threads-client 8 \
        --peer doccano --peer-url http://127.0.0.1:PORT --peer-pid PID --peer-password PASSWORD

``--labels-per-client M`` replaces the ramp with a closed loop (bench/annotate_closed.py): each of
``--threads-client`` annotators labels M items back to back (after ten labels each that are not
counted), and the server's CPU per label is read from /proc for all its processes, beside the
request trace's. With ``--peer doccano`` the same closed loop runs against a doccano server already
started on this machine (bench/annotate_peers.py), its CPU read the same way from ``--peer-pid``
and that process's workers; Concord is not started then. ``--peer-requests one`` (the default)
sends one request per doccano label (its POST; the example ids listed at set-up), ``ui`` the two
its annotation page sends (the next example's GET, then the POST). Its last line is ``RESULT server=<name>
labels_per_s=<n> label_p95_ms=<n> server_cpu_ms_per_label=<n> cpu_ms_per_label=<n>`` (the trace's
figure; nan for a peer).

The database is whatever DATABASE_URL names (PostgreSQL expected). The server runs as
config/gunicorn.conf.py sets it up (bench/gunicorn_trace.py adds the trace hooks) unless
``--worker-class``, ``--workers`` or ``--threads`` say otherwise; ``--request-trace PATH`` has each
worker log where its requests' time went. The last line is ``RESULT max_rate_p95_50ms=<n>
next_p95_ms=<n> submit_p95_ms=<n> next_p99_ms=<n> submit_p99_ms=<n> labels_per_s=<n>
cpu_ms_per_label=<n>``: the highest rate whose p95 of every request type sent stayed within 50 ms
with every request answered on time and without error, and at that rate (at the lowest rate when no
rate held) the p95 and p99 figures, the labels stored per second and the server's CPU milliseconds
per label (every request it answered in the step, over the labels stored; nan for a request type
not sent).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import random
import runpy
import signal
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Importable once the repository root is on the path.
from bench.annotate_closed import ClosedRun, report_closed, run_closed  # noqa: E402
from bench.annotate_harness import (  # noqa: E402
    Annotator,
    Client,
    HttpError,
    Server,
    cpu_sample,
    forget_sessions,
    forget_tokens,
    gunicorn,
    host_speed_ms,
    next_item,
    open_all,
    percentile,
    prepare_annotators,
    prepare_project,
    print_host_speed,
    read_project,
    reset_work,
    start_sessions,
    start_tokens,
    submit,
)
from bench.annotate_peers import PEER_REQUESTS, PEERS, load_peer  # noqa: E402
from bench.annotate_profile import profile  # noqa: E402
from bench.annotate_profile_api import profile_api  # noqa: E402
from bench.common import setup_django  # noqa: E402

THRESHOLD_MS = 50.0
DEFAULT_RATES = "25,50,100,150,200,250,300,400"
# Scheduled requests not sent within this long after their step ends count as missed: the server
# could not keep up, and waiting for them would make an overloaded step run without bound.
GRACE_S = 2.0
# A step this far off its target stops the ramp: higher rates can only do worse.
GIVE_UP_RATIO = 0.8
GIVE_UP_P95_MS = 20 * THRESHOLD_MS

#: ``floor`` (closed loop only): each "label" is the cheapest authenticated API read, GET
#: /api/projects/<slug>/ (the project and the caller's roles): what the server spends per request
#: on the framework and its start command alone.
CLIENTS = ("htmx", "api", "floor")


# -- one load step --------------------------------------------------------------------------------


@dataclass
class Step:
    rate: int
    seconds: float
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"next": [], "submit": []})
    #: (scheduled wall-clock time, kind, latency in s) of every answered request, for --timeline.
    timeline: list[tuple[float, str, float]] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    missed: int = 0
    span: float = 0.0
    cpu_own: float = 0.0
    cpu_server: float = 0.0
    #: The busiest worker process: one process runs Python on one core at most (the GIL).
    cpu_busiest_worker: float = 0.0
    cpu_database: float = 0.0
    cpu_machine: float = 0.0
    #: Client connections per worker process halfway through the step, most first.
    spread: list[int] = field(default_factory=list)
    #: Wall-clock start and end of the step (seconds since the epoch).
    began: float = 0.0
    ended: float = 0.0
    #: Server CPU seconds of the requests answered in the step, from the request trace.
    cpu_requests: float = float("nan")

    @property
    def labels(self) -> int:
        """Answers stored: one per submit answered without error."""
        return len(self.latencies["submit"])

    @property
    def labels_per_s(self) -> float:
        return self.labels / self.span if self.span else 0.0

    @property
    def cpu_ms_per_label(self) -> float:
        return 1000 * self.cpu_requests / self.labels if self.labels else float("nan")

    @property
    def cpu_other(self) -> float:
        """Cores busy with anything else on the machine: a noisy neighbour shows here."""
        return max(0.0, self.cpu_machine - self.cpu_own - self.cpu_server - self.cpu_database)

    @property
    def answered(self) -> int:
        return sum(len(values) for values in self.latencies.values()) + sum(self.errors.values())

    @property
    def achieved(self) -> float:
        return self.answered / self.span if self.span else 0.0

    def p(self, kind: str, q: float) -> float:
        return percentile(self.latencies[kind], q)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values()) + self.missed

    @property
    def held(self) -> bool:
        # A client that takes its next item from each submit's answer sends few "next" requests: only
        # the request types sent count, and submits must have been.
        return (
            self.error_count == 0
            and self.achieved >= 0.95 * self.rate
            and bool(self.latencies["submit"])
            and all(self.p(kind, 95) <= THRESHOLD_MS for kind in ("next", "submit") if self.latencies[kind])
        )

    @property
    def hopeless(self) -> bool:
        worst = max((self.p(kind, 95) for kind in ("next", "submit") if self.latencies[kind]), default=0.0)
        return self.achieved < GIVE_UP_RATIO * self.rate or worst > GIVE_UP_P95_MS


def run_step(
    client: Client,
    idle: deque[Annotator],
    *,
    rate: int,
    seconds: float,
    threads: int,
    server: Server | None,
    arrivals: str,
    seed: int,
    factors: tuple[str, ...],
) -> Step:
    """Send ``rate`` requests a second for ``seconds`` on a fixed schedule, each to an idle annotator."""
    step = Step(rate, seconds, began=time.time())
    schedule_rng = random.Random(seed)
    count = int(rate * seconds)
    start = time.perf_counter() + 0.05
    if arrivals == "poisson":
        # Many independent people: exponential gaps with the same mean.
        offsets = list(itertools.accumulate(schedule_rng.expovariate(rate) for _ in range(count)))
    else:
        # A constant-rate schedule, as wrk2 uses: the latencies reflect the server, not bursts.
        offsets = [i / rate for i in range(count)]
    times = [start + offset for offset in offsets if offset < seconds]
    end = start + seconds
    cursor = itertools.count()  # next() on itertools.count is atomic under the GIL
    lock = threading.Lock()
    before = cpu_sample(server) if server else None
    last_done = [start]

    def work(worker: int) -> None:
        rng = random.Random(seed * 1000 + worker)
        while True:
            index = next(cursor)
            if index >= len(times):
                return
            scheduled = times[index]
            delay = scheduled - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif time.perf_counter() > end + GRACE_S:
                with lock:
                    step.missed += 1
                continue
            try:
                annotator = idle.popleft()
            except IndexError:  # every annotator busy or out of work
                with lock:
                    step.errors["no idle annotator with work left"] += 1
                continue
            kind = "next" if annotator.assignment_id is None else "submit"
            try:
                if kind == "next":
                    next_item(client, annotator)
                else:
                    submit(client, annotator, rng, factors)
            except (HttpError, OSError) as exc:
                with lock:
                    step.errors[f"{kind}: {exc}"] += 1
                annotator.assignment_id = None  # ask the server what this annotator holds
            else:
                finished = time.perf_counter()
                step.latencies[kind].append(finished - scheduled)
                step.timeline.append((time.time() - (finished - scheduled), kind, finished - scheduled))
                with lock:
                    last_done[0] = max(last_done[0], finished)
            if not annotator.done:
                idle.append(annotator)

    pool = [threading.Thread(target=work, args=(n,), daemon=True) for n in range(threads)]
    for thread in pool:
        thread.start()
    if server:
        # Each client thread keeps its connection for the step: look once all are open.
        time.sleep(max(0.0, start + seconds / 2 - time.perf_counter()))
        step.spread = server.connections_per_worker()
    for thread in pool:
        thread.join()
    step.span = max(seconds, last_done[0] - start)
    step.ended = time.time()
    if server and before:
        after = cpu_sample(server)
        wall = after.wall - before.wall
        step.cpu_own = (after.own - before.own) / wall
        step.cpu_server = (after.server - before.server) / wall
        step.cpu_busiest_worker = max(
            ((after.workers[pid] - before.workers.get(pid, 0.0)) / wall for pid in after.workers), default=0.0
        )
        step.cpu_database = (after.database - before.database) / wall
        # /proc/stat counts every core: scale to "cores busy" like the per-process figures.
        step.cpu_machine = (after.busy - before.busy) / (after.total - before.total) * (os.cpu_count() or 1)
    return step


# -- the load run ---------------------------------------------------------------------------------


def print_step(step: Step) -> None:
    errors = step.error_count
    print(
        f"{step.rate:>6}{step.achieved:>9.1f}{step.labels_per_s:>8.1f}"
        f"{step.p('next', 50):>8.1f}{step.p('next', 95):>8.1f}{step.p('next', 99):>8.1f}"
        f"{step.p('submit', 50):>8.1f}{step.p('submit', 95):>8.1f}{step.p('submit', 99):>8.1f}"
        f"{errors:>7}{'yes' if step.held else 'no':>6}{step.cpu_ms_per_label:>8.2f}"
        f"{step.cpu_own:>7.2f}{step.cpu_server:>7.2f}{step.cpu_busiest_worker:>8.2f}"
        f"{step.cpu_database:>6.2f}{step.cpu_other:>7.2f}  {'/'.join(map(str, step.spread))}",
        flush=True,
    )


def trace_cpu_s(path: str, began: float, ended: float) -> float:
    """CPU seconds the server's threads spent on the requests answered between two wall-clock times
    (the trace of bench/gunicorn_trace.py; what the load generator and the database spent is not in it)."""
    return sum(t.cpu for t in read_request_trace(path) if began <= t.finished <= ended) / 1000


def server_env(args: argparse.Namespace) -> dict[str, str]:
    """What the server's gunicorn hooks read (config/gunicorn.conf.py, bench/gunicorn_trace.py)."""
    env = {"CONCORD_GC_FREEZE": "false" if args.no_gc_freeze else "true"}
    if args.gc_trace:
        env["CONCORD_GC_TRACE"] = args.gc_trace
    env["CONCORD_REQUEST_TRACE"] = args.request_trace
    return env


@dataclass(frozen=True)
class RequestTimes:
    """Where one request's time went inside the server (bench/gunicorn_trace.py, per thread)."""

    finished: float
    wall: float
    cpu: float
    runnable: float

    @property
    def held_up(self) -> float:
        """Neither running nor waiting for a core: the database's answers, or the GIL."""
        return max(0.0, self.wall - self.cpu - self.runnable)


def read_request_trace(path: str) -> list[RequestTimes]:
    found = []
    for trace in Path(path).parent.glob(f"{Path(path).name}.*"):
        for line in trace.read_text().splitlines():
            with contextlib.suppress(ValueError):
                found.append(RequestTimes(*map(float, line.split())))
    return found


def print_request_trace(steps: list[Step], path: str) -> None:
    """Per step, the server-side split of a request's time: its own CPU, waiting for a core, and the
    rest; the p95 request by wall time beside the means."""
    times = read_request_trace(path)
    print(f"\nserver side, per request (ms; from {path}.<pid>): wall = cpu + waiting for a core + held up")
    print(f"{'rate':>6}{'requests':>9}{'wall':>8}{'cpu':>8}{'core':>8}{'held':>8}   p95 wall: cpu / core / held")
    for step in steps:
        inside = sorted((t for t in times if step.began <= t.finished <= step.ended), key=lambda t: t.wall)
        if not inside:
            continue
        count = len(inside)
        tail = inside[min(count - 1, round(0.95 * count))]

        def mean(name: str, rows: list[RequestTimes] = inside) -> float:
            return sum(getattr(row, name) for row in rows) / len(rows)

        print(
            f"{step.rate:>6}{count:>9}{mean('wall'):>8.1f}{mean('cpu'):>8.1f}{mean('runnable'):>8.1f}"
            f"{mean('held_up'):>8.1f}   {tail.wall:.1f}: {tail.cpu:.1f} / {tail.runnable:.1f} / {tail.held_up:.1f}"
        )


def ramp(
    args: argparse.Namespace,
    client: Client,
    server: Server,
    annotators: list[Annotator],
    rates: list[int],
    factors: tuple[str, ...],
) -> list[Step]:
    """The open-loop ramp: a warm-up at the first rate, then a step at each rate until one is hopeless."""
    steps: list[Step] = []
    # Every annotator now holds an item and would submit next. Half of them ask for it again first,
    # so that turns interleave and every step sees an even mix of next and submit, not runs of one.
    for annotator in annotators[::2]:
        annotator.assignment_id = None
    idle = deque(annotators)
    common = {"threads": args.threads_client, "server": server, "arrivals": args.arrivals, "factors": factors}
    warm = run_step(client, idle, rate=rates[0], seconds=args.warmup, seed=0, **common)
    print(f"warm-up: {warm.answered} requests at {rates[0]}/s, not counted")
    print()
    print(
        f"latency in ms from the scheduled send time; CPU in cores busy ({os.cpu_count()} in all): "
        "client = this generator, server = gunicorn, busiest = its busiest worker process, "
        "pg = every postgres process, other = the rest; a keep-alive connection stays with its worker"
    )
    print(
        f"{'rate':>6}{'achieved':>9}{'labels':>8}{'next':>8}{'':>8}{'':>8}{'submit':>8}{'':>8}{'':>8}"
        f"{'errors':>7}{'held':>6}{'cpu ms':>8}"
        f"{'client':>7}{'server':>7}{'busiest':>8}{'pg':>6}{'other':>7}  connections per worker"
    )
    print(
        f"{'':>6}{'req/s':>9}{'/s':>8}{'p50':>8}{'p95':>8}{'p99':>8}{'p50':>8}{'p95':>8}{'p99':>8}"
        f"{'':>7}{'':>6}{'/label':>8}"
    )
    for number, rate in enumerate(rates, start=1):
        step = run_step(client, idle, rate=rate, seconds=args.seconds, seed=number, **common)
        step.cpu_requests = trace_cpu_s(args.request_trace, step.began, step.ended)
        if args.timeline:
            with open(args.timeline, "a") as sink:
                sink.writelines(f"{at:.3f} {rate} {kind} {1000 * lat:.1f}\n" for at, kind, lat in step.timeline)
        steps.append(step)
        print_step(step)
        if step.hopeless and rate != rates[-1]:
            print(f"stopping the ramp: {rate}/s is far beyond what the server holds")
            break
        time.sleep(1.0)  # let queues drain so one step's backlog does not spill into the next
    return steps


def load(args: argparse.Namespace) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.kinds.copa_likert import FACTORS

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); load average {os.getloadavg()[0]:.2f}")
    print_host_speed()
    project = prepare_project(args.items)
    names = prepare_annotators(project, args.annotators)
    if removed := reset_work(project):
        print(f"cleared the annotations, assignments and cursors of an earlier run ({removed} annotations)")
    annotators = [Annotator(name) for name in names]
    started = time.perf_counter()
    if args.client in ("api", "floor"):
        start_tokens(annotators)
        print(f"made {len(annotators)} API tokens in {time.perf_counter() - started:.1f} s")
    else:
        start_sessions(annotators)
        print(f"started {len(annotators)} login sessions in {time.perf_counter() - started:.1f} s")
    # The server's processes hold their own connections: this one would only sit idle.
    connection.close()

    rates = [int(rate) for rate in args.rates.split(",") if rate]
    factors = tuple(FACTORS)
    print(
        f"gunicorn: {args.workers} {args.worker_class} workers x {args.threads} threads; "
        f"client: {args.client}, {args.threads_client} threads, {args.arrivals} arrivals, {args.seconds:.0f} s per rate"
    )
    steps: list[Step] = []
    closed: ClosedRun | None = None
    with (
        tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        # Each worker's request trace is what the CPU per label is read from: a temporary one unless asked.
        args.request_trace = args.request_trace or str(Path(tmp) / "requests")
        server = stack.enter_context(
            gunicorn(args.worker_class, args.workers, args.threads, Path(tmp), server_env(args))
        )
        client = Client(server.port, fresh_connections=args.fresh_connections)
        started = time.perf_counter()
        first_visits = open_all(client, annotators, max(2, args.workers * args.threads))
        print(
            f"opened {len(annotators)} annotators' workspaces in {time.perf_counter() - started:.1f} s "
            f"(p50 first visit {percentile(first_visits, 50):.0f} ms)"
        )
        if args.labels_per_client:
            closed = run_closed(
                client, annotators[: args.threads_client], labels_each=args.labels_per_client, next_fn=next_item,
                submit_fn=read_project if args.client == "floor" else submit, server_pids=server.pids, factors=factors,
            )  # fmt: skip
            closed.trace_cpu_s = trace_cpu_s(args.request_trace, closed.began, closed.ended)
        else:
            steps = ramp(args, client, server, annotators, rates, factors)
        if server.process.poll() is not None:
            raise SystemExit(f"gunicorn died during the run:\n{server.log.read_text()[-3000:]}")
        if steps:
            print_request_trace(steps, args.request_trace)

    forget_sessions([a.cookies["sessionid"] for a in annotators if "sessionid" in a.cookies])
    forget_tokens(annotators)
    reset_work(project)  # the items and accounts stay for the next run; the work it did goes
    if closed is not None:
        report_closed(closed, f"concord-{args.client}")
        return
    print(f"host speed at the end: {host_speed_ms():.0f} ms")
    report(steps)


def report(steps: list[Step]) -> None:
    print()
    for step in steps:
        if step.errors or step.missed:
            shown = ", ".join(f"{reason} x{n}" for reason, n in step.errors.most_common(3))
            missed = f"{step.missed} not sent in time" if step.missed else ""
            print(f"{step.rate}/s errors: {', '.join(filter(None, (shown, missed)))}")
    cpu = [step.cpu_own for step in steps]
    if cpu:
        print(f"load generator CPU: {min(cpu):.2f}-{max(cpu):.2f} cores (its own threads, from getrusage)")
    held = [step for step in steps if step.held]
    chosen = max(held, key=lambda step: step.rate) if held else min(steps, key=lambda step: step.rate)
    best = chosen.rate if held else 0
    print(f"highest rate held with p95 <= {THRESHOLD_MS:.0f} ms for next and submit: {best or 'none'} req/s")
    print(
        f"RESULT max_rate_p95_50ms={best} next_p95_ms={chosen.p('next', 95):.1f} "
        f"submit_p95_ms={chosen.p('submit', 95):.1f} next_p99_ms={chosen.p('next', 99):.1f} "
        f"submit_p99_ms={chosen.p('submit', 99):.1f} labels_per_s={chosen.labels_per_s:.1f} "
        f"cpu_ms_per_label={chosen.cpu_ms_per_label:.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items in the project")
    parser.add_argument("--annotators", type=int, default=1000, help="annotator accounts logged in")
    parser.add_argument("--rates", default=DEFAULT_RATES, help="comma-separated request rates (req/s)")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per rate")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds at the first rate, not counted")
    parser.add_argument("--arrivals", choices=("uniform", "poisson"), default="uniform", help="request schedule")
    # By default the server runs as config/gunicorn.conf.py sets it up for production.
    parser.add_argument("--worker-class", default=None, help="gunicorn worker class (default: the config's)")
    parser.add_argument("--workers", type=int, default=None, help="gunicorn worker processes (default: the config's)")
    parser.add_argument("--threads", type=int, default=None, help="threads per gunicorn worker (default: the config's)")
    parser.add_argument("--threads-client", type=int, default=32, help="load generator threads")
    parser.add_argument("--client", choices=CLIENTS, default="htmx", help="workspace (htmx), REST API, or the floor")
    parser.add_argument(
        "--fresh-connections",
        action="store_true",
        help="a new connection per request, as annotators who pause longer than the server's keep-alive have",
    )
    parser.add_argument(
        "--no-gc-freeze", action="store_true", help="leave start-up objects to the collector (the old behaviour)"
    )
    parser.add_argument("--timeline", default="", metavar="PATH", help="append every request's time and latency")
    parser.add_argument("--gc-trace", default="", metavar="PATH", help="log every collection's pause to PATH.<pid>")
    parser.add_argument(
        "--request-trace", default="", metavar="PATH", help="log each request's wall, CPU and core wait to PATH.<pid>"
    )
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile N requests in-process instead")
    parser.add_argument(
        "--labels-per-client",
        type=int,
        default=0,
        metavar="M",
        help="closed loop instead of the ramp: each of --threads-client annotators labels M items back to back",
    )
    parser.add_argument("--peer", choices=PEERS, default="", help="drive this tool's server instead of Concord's")
    parser.add_argument("--peer-url", default="", help="the peer's address, http://127.0.0.1:PORT")
    parser.add_argument("--peer-pid", type=int, default=0, help="the peer's server process (its CPU is read)")
    parser.add_argument("--peer-user", default="admin", help="the peer's admin account (sets up the project)")
    parser.add_argument("--peer-password", default="", help="that account's password")
    parser.add_argument(
        "--peer-requests",
        choices=PEER_REQUESTS,
        default="one",
        help="one request per label (the answer's POST; example ids listed at set-up) or the two its UI sends",
    )
    args = parser.parse_args(argv)
    if args.items < 1 or args.annotators < 1:
        parser.error("--items and --annotators must be at least 1")
    if args.client == "floor" and not (args.labels_per_client or args.profile):
        parser.error("--client floor runs the closed loop (--labels-per-client) only")
    if args.labels_per_client and args.threads_client > args.annotators:
        parser.error("--threads-client must be at most --annotators (each client is one annotator)")
    if not args.labels_per_client and args.threads_client >= args.annotators:
        parser.error("--threads-client must be below --annotators (each thread needs an idle annotator)")
    # A SIGTERM should stop gunicorn too: turn it into the exit that runs the cleanup.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.peer:
        if not (args.peer_url and args.peer_pid and args.peer_password and args.labels_per_client):
            parser.error("--peer needs --peer-url, --peer-pid, --peer-password and --labels-per-client")
        load_peer(args)
    elif args.profile:
        profile_api(args) if args.client in ("api", "floor") else profile(args)
    else:
        production = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
        args.worker_class = args.worker_class or production["worker_class"]
        args.workers = args.workers or production["workers"]
        args.threads = args.threads or production["threads"]
        load(args)


if __name__ == "__main__":
    main()

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
    python bench/annotate_load.py --labels-per-client 100 --threads-client 8 --annotators 8 --client api
    python bench/annotate_load.py --labels-per-client 100 --threads-client 8 \
        --peer doccano --peer-url http://127.0.0.1:PORT --peer-pid PID --peer-password PASSWORD

``--labels-per-client M`` replaces the ramp with a closed loop: each of ``--threads-client``
annotators labels M items back to back (after ten labels each that are not counted), and the
server's CPU per label is read from /proc for all its processes, beside the request trace's. With
``--peer doccano`` the same closed loop runs against a doccano server already started on this
machine (``DoccanoPeer``), its CPU read the same way from ``--peer-pid`` and that process's
workers; Concord is not started then. Its last line is ``RESULT server=<name> labels_per_s=<n>
label_p95_ms=<n> server_cpu_ms_per_label=<n> cpu_ms_per_label=<n>`` (the trace's figure; nan for a
peer).

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
import cProfile
import http.client
import itertools
import json
import os
import pstats
import random
import re
import resource
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

if TYPE_CHECKING:
    from annotation.models import Project

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import free_port, setup_django  # noqa: E402 - importable once the repository root is on the path

SLUG = "bench-annotate-copa-likert"
KIND = "copa_likert"
OVERLAP = 3
USER_PREFIX = "bench-annotator-"
PASSWORD = "bench-annotate-load-password"
THRESHOLD_MS = 50.0
DEFAULT_RATES = "25,50,100,150,200,250,300,400"
HOST = "127.0.0.1"
# Scheduled requests not sent within this long after their step ends count as missed: the server
# could not keep up, and waiting for them would make an overloaded step run without bound.
GRACE_S = 2.0
HTTP_TIMEOUT_S = 10.0
# A step this far off its target stops the ramp: higher rates can only do worse.
GIVE_UP_RATIO = 0.8
GIVE_UP_P95_MS = 20 * THRESHOLD_MS

CLIENTS = ("htmx", "api")
ASSIGNMENT_RE = re.compile(rb'action="/p/[^/"]+/annotate/(\d+)/submit/"')
CSRF_RE = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
KEY_RE = re.compile(rb'name="idempotency_key" value="([^"]+)"')
NOTHING_LEFT = b"Nothing left for you here"


# -- data: project, items, annotators -----------------------------------------------------------


def prepare_project(items: int) -> Project:
    """The bench project with exactly ``items`` items; an incomplete or different one is rebuilt."""
    from annotation.importing import import_items
    from annotation.models import Item, Project
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records, write_jsonl

    project = Project.objects.filter(slug=SLUG).first()
    if (
        project is not None
        and project.kind == KIND
        and project.overlap == OVERLAP
        and Item.objects.filter(project=project, gold_value__isnull=True).count() == items
        and Item.objects.filter(project=project).count() == items
    ):
        print(f"project {SLUG}: reusing its {items} items")
        return project
    Project.objects.filter(slug=SLUG).delete()
    project = project_create(slug=SLUG, kind=KIND, title="Workspace load benchmark", overlap=OVERLAP)
    kind = project.task_kind
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        path = write_jsonl(Path(tmp) / f"{KIND}-{items}.jsonl", synthetic_records(kind, items))
        imported = import_items(project=project, path=path).imported
    print(f"project {SLUG}: imported {imported} items in {time.perf_counter() - started:.1f} s")
    return project


def prepare_annotators(project: Project, count: int) -> list[str]:
    """``count`` annotator accounts sharing one password, members of the project and of nothing else."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from annotation.models import Membership, Role

    user_model = get_user_model()
    names = [f"{USER_PREFIX}{number:05d}" for number in range(count)]
    # One hash for all: hashing is deliberately slow (about 0.3 s here), a thousand would take minutes.
    hashed = make_password(PASSWORD)
    existing = set(user_model.objects.filter(username__in=names).values_list("username", flat=True))
    user_model.objects.bulk_create(
        [user_model(username=name, password=hashed) for name in names if name not in existing], batch_size=1000
    )
    user_model.objects.filter(username__in=names).update(password=hashed, is_active=True)
    users = dict(user_model.objects.filter(username__in=names).values_list("username", "pk"))
    # Members beyond this run's count would change every annotator's fair share (the progress bar).
    Membership.objects.filter(project=project).exclude(user_id__in=users.values()).delete()
    Membership.objects.bulk_create(
        [Membership(project=project, user_id=users[name], role=Role.ANNOTATOR) for name in names],
        ignore_conflicts=True,
        batch_size=1000,
    )
    return names


def reset_work(project: Project) -> int:
    """Every run starts from an untouched project: no assignments, annotations or cursors.

    Returns the number of annotations removed."""
    from django.db import transaction

    from annotation.models import Annotation, AnnotatorState, Assignment, Item

    with transaction.atomic():
        removed = Annotation.objects.filter(project=project).delete()[0]
        Assignment.objects.filter(project=project).delete()
        AnnotatorState.objects.filter(project=project).delete()
        Item.objects.filter(project=project, gold_value__isnull=True, assigned_count__gt=0).update(
            assigned_count=0, is_open=True
        )
    return removed


def forget_sessions(keys: list[str]) -> None:
    """Remove this run's login sessions, so repeated runs leave no rows behind."""
    from django.contrib.sessions.models import Session

    Session.objects.filter(session_key__in=keys).delete()


# -- the server -----------------------------------------------------------------------------------


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: Path

    def pids(self) -> list[int]:
        """The master and its workers, whose CPU time is the server's."""
        return [self.process.pid, *children(self.process.pid)]

    def connections_per_worker(self) -> list[int]:
        """Established client connections each worker process holds, most first.

        A keep-alive connection stays with the worker that accepted it, so this is how the load
        is shared between the processes."""
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with contextlib.suppress(OSError), open(table, encoding="ascii") as handle:
                for line in list(handle)[1:]:
                    fields = line.split()
                    local_port = int(fields[1].rsplit(":", 1)[1], 16)
                    if local_port == self.port and fields[3] == "01":  # ESTABLISHED
                        inodes.add(fields[9])
        counts = []
        for pid in children(self.process.pid):
            held = 0
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    with contextlib.suppress(OSError):
                        target = os.readlink(f"/proc/{pid}/fd/{fd}")
                        held += target.startswith("socket:[") and target[8:-1] in inodes
            counts.append(held)
        return sorted(counts, reverse=True)


@contextmanager
def gunicorn(
    worker_class: str, workers: int, threads: int, log_dir: Path, env_extra: dict[str, str] | None = None
) -> Iterator[Server]:
    """gunicorn serving the app on a free loopback port, stopped on the way out whatever happened."""
    port = free_port()
    log = log_dir / "gunicorn.log"
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--config=bench/gunicorn_trace.py",
        f"--bind={HOST}:{port}",
        f"--worker-class={worker_class}",
        f"--workers={workers}",
        f"--threads={threads}",
        "--log-level=warning",
        f"--timeout={int(HTTP_TIMEOUT_S * 3)}",
    ]
    env = {**os.environ, "DEBUG": "false", "PYTHONPATH": str(ROOT), **(env_extra or {})}
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    server = Server(process, port, log)
    try:
        wait_until_up(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


#: How long gunicorn may take to answer its first request: minutes on a shared machine under load.
STARTUP_TIMEOUT_S = 240.0


def wait_until_up(server: Server, timeout: float = STARTUP_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"gunicorn exited ({server.process.returncode}):\n{server.log.read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection(HOST, server.port, timeout=2)
            conn.request("GET", "/accounts/login/")
            if conn.getresponse().status == 200:
                conn.close()
                return
            conn.close()
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer within {timeout:.0f} s:\n{server.log.read_text()[-3000:]}")


# -- CPU accounting from /proc --------------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def process_cpu_s(pid: int) -> float:
    """CPU seconds of a process and of its children that have exited.

    The exited children matter: PostgreSQL backends come and go as connections are recycled
    (CONN_MAX_AGE), and their time then lives on only in the postmaster's cutime and cstime.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / TICK  # utime, stime, cutime, cstime


def postgres_pids() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == "postgres":
                    found.append(int(entry))
            except OSError:
                continue
    return found


def machine_busy_s() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, all cores together."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])
    return (total - idle) / TICK, total / TICK


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class CpuSample:
    wall: float
    own: float
    server: float
    workers: dict[int, float]
    database: float
    busy: float
    total: float


def cpu_sample(server: Server) -> CpuSample:
    busy, total = machine_busy_s()
    workers = {pid: process_cpu_s(pid) for pid in children(server.process.pid)}
    return CpuSample(
        wall=time.perf_counter(),
        own=own_cpu_s(),
        server=process_cpu_s(server.process.pid) + sum(workers.values()),
        workers=workers,
        database=sum(process_cpu_s(pid) for pid in postgres_pids()),
        busy=busy,
        total=total,
    )


# -- the simulated annotators ---------------------------------------------------------------------


@dataclass
class Annotator:
    username: str
    cookies: dict[str, str] = field(default_factory=dict)
    assignment_id: int | None = None
    csrf: str = ""
    idempotency_key: str = ""
    done: bool = False
    #: The API token (``--client api``, a peer); the session cookie otherwise.
    token: str = ""
    #: Labels stored so far (a peer's client walks its examples by this offset).
    labelled: int = 0

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.token}"} if self.token else {"Cookie": self.cookie_header()}

    def take_cookies(self, response: http.client.HTTPResponse) -> None:
        for header in response.headers.get_all("Set-Cookie") or []:
            jar = SimpleCookie()
            jar.load(header)
            for name, morsel in jar.items():
                self.cookies[name] = morsel.value


class HttpError(Exception):
    """A request that did not get the answer a working server gives."""


class Client:
    """One keep-alive connection per client thread; reopened when the server closes it.

    Sync gunicorn workers close every connection after the response; gthread keeps it open.
    """

    def __init__(self, port: int, *, fresh_connections: bool = False) -> None:
        self.port = port
        self.local = threading.local()
        #: A new connection for every request, as a person's browser has when they take longer over an
        #: item than the server keeps an idle connection (gunicorn: 2 s).
        self.fresh_connections = fresh_connections

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPConnection(HOST, self.port, timeout=HTTP_TIMEOUT_S)
        return conn

    def send(
        self,
        annotator: Annotator,
        method: str,
        path: str,
        body: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        headers = {**annotator.auth_headers(), **(headers or {})}
        if body is not None:
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        # One retry covers a keep-alive connection the server dropped while idle; a repeated submit
        # is harmless because it carries the same idempotency key.
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                response = conn.getresponse()
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if attempt == 2:
                    raise
                continue
            except OSError:
                conn.close()
                raise
            annotator.take_cookies(response)
            if self.fresh_connections:
                conn.close()
            return response.status, data
        raise AssertionError("unreachable")


def start_sessions(annotators: list[Annotator]) -> None:
    """A logged-in session for every annotator, made in-process the way Django's test client does.

    Logging in through the form would cost a password hash (about 0.3 s of CPU) per annotator:
    minutes of set-up for something the load steps do not measure."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client as DjangoClient

    names = [annotator.username for annotator in annotators]
    users = {user.username: user for user in get_user_model().objects.filter(username__in=names)}
    for annotator in annotators:
        session = DjangoClient()
        session.force_login(users[annotator.username])
        annotator.cookies[settings.SESSION_COOKIE_NAME] = session.cookies[settings.SESSION_COOKIE_NAME].value


def start_tokens(annotators: list[Annotator]) -> None:
    """An API token for every annotator, made in-process (no password hash per annotator)."""
    from django.contrib.auth import get_user_model

    from accounts.services import api_token_create

    names = [annotator.username for annotator in annotators]
    users = {user.username: user for user in get_user_model().objects.filter(username__in=names)}
    for annotator in annotators:
        annotator.token = api_token_create(user=users[annotator.username])[1]


def forget_tokens(annotators: list[Annotator]) -> None:
    from knox.models import AuthToken

    AuthToken.objects.filter(user__username__in=[a.username for a in annotators]).delete()


def read_item(annotator: Annotator, status: int, page: bytes) -> None:
    """Take the assignment id, CSRF token and idempotency key from a workspace partial."""
    if status != 200:
        raise HttpError(f"HTTP {status}")
    found = ASSIGNMENT_RE.search(page)
    if found is None:
        if NOTHING_LEFT in page:
            annotator.done, annotator.assignment_id = True, None
            return
        raise HttpError("no item in the page")
    token, key = CSRF_RE.search(page), KEY_RE.search(page)
    if token is None or key is None:
        raise HttpError("no CSRF token or idempotency key in the page")
    annotator.assignment_id = int(found.group(1))
    annotator.csrf, annotator.idempotency_key = token.group(1).decode(), key.group(1).decode()


def read_assignment(annotator: Annotator, found: dict | None) -> None:
    """Take the assignment from an API answer (None: nothing left for the annotator)."""
    if found is None:
        annotator.done, annotator.assignment_id = True, None
        return
    annotator.assignment_id, annotator.idempotency_key = int(found["id"]), uuid.uuid4().hex


def next_item(client: Client, annotator: Annotator) -> None:
    if annotator.token:
        status, body = client.send(annotator, "POST", f"/api/projects/{SLUG}/assignments/next/")
        if status not in (200, 204):
            raise HttpError(f"HTTP {status}")
        read_assignment(annotator, json.loads(body) if status == 200 else None)
        return
    status, page = client.send(annotator, "GET", f"/p/{SLUG}/annotate/", headers={"HX-Request": "true"})
    read_item(annotator, status, page)


def submit(client: Client, annotator: Annotator, rng: random.Random, factors: tuple[str, ...]) -> None:
    """Submit the item held; the answer serves the next one (a server that does not leaves the
    annotator to ask for it)."""
    scores = {code: rng.randrange(3) for code in factors}
    if annotator.token:
        body = json.dumps({"value": {"scores": scores}, "idempotency_key": annotator.idempotency_key})
        path = f"/api/assignments/{annotator.assignment_id}/submit/?next=true"
        status, answer = client.send(annotator, "POST", path, body, {"Content-Type": "application/json"})
        if status != 201:
            raise HttpError(f"HTTP {status}")
        stored = json.loads(answer)
        if "next" in stored:
            read_assignment(annotator, stored["next"])
        else:
            annotator.assignment_id = None
        return
    form = {code: str(value) for code, value in scores.items()}
    form["idempotency_key"] = annotator.idempotency_key
    headers = {"HX-Request": "true", "X-CSRFToken": annotator.csrf}
    path = f"/p/{SLUG}/annotate/{annotator.assignment_id}/submit/"
    status, page = client.send(annotator, "POST", path, urlencode(form), headers)
    if status != 200 or (ASSIGNMENT_RE.search(page) is None and NOTHING_LEFT not in page):
        raise HttpError(f"HTTP {status}" if status != 200 else "no next item in the answer")
    read_item(annotator, status, page)  # the answer is the next item, as the workspace swaps it in


def open_all(client: Client, annotators: list[Annotator], threads: int) -> list[float]:
    """Open every annotator's workspace once (their first claim); the seconds of each visit.

    Doing it here, outside the measured steps, makes the steps a steady mix of submit and next:
    otherwise the first pass over a thousand annotators would be nothing but first visits.
    """
    pending = deque(annotators)
    first_visits: list[float] = []
    failures: list[str] = []

    def work() -> None:
        while True:
            try:
                annotator = pending.popleft()
            except IndexError:
                return
            try:
                started = time.perf_counter()
                next_item(client, annotator)
            except (HttpError, OSError) as exc:
                failures.append(f"{annotator.username}: {exc}")
                continue
            first_visits.append(time.perf_counter() - started)

    run_threads(work, threads)
    if failures:
        raise SystemExit(f"{len(failures)} first visits failed, e.g. {failures[0]}")
    return first_visits


def run_threads(target: Callable[[], None], count: int) -> None:
    pool = [threading.Thread(target=target, daemon=True) for _ in range(count)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


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


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile in milliseconds (NaN for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1] * 1000


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


def step_server_cpu(step: Step, path: str) -> float:
    """CPU seconds the server's threads spent on the requests answered during the step (the trace
    of bench/gunicorn_trace.py; what the load generator and the database spent is not in it)."""
    return sum(t.cpu for t in read_request_trace(path) if step.began <= t.finished <= step.ended) / 1000


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


def load(args: argparse.Namespace) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.kinds.copa_likert import FACTORS

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']}); load average {os.getloadavg()[0]:.2f}")
    print(f"host speed: {host_speed_ms():.0f} ms for a fixed pure-Python loop (lower is faster; compare runs by it)")
    project = prepare_project(args.items)
    names = prepare_annotators(project, args.annotators)
    if removed := reset_work(project):
        print(f"cleared the annotations, assignments and cursors of an earlier run ({removed} annotations)")
    annotators = [Annotator(name) for name in names]
    started = time.perf_counter()
    if args.client == "api":
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
            for labels_each in (CLOSED_WARMUP_LABELS, args.labels_per_client):  # the first run is not counted
                run = run_closed(
                    client, annotators[: args.threads_client], labels_each=labels_each, next_fn=next_item,
                    submit_fn=submit, server_pids=server.pids, factors=factors,
                )  # fmt: skip
            run.trace_cpu_s = (
                sum(t.cpu for t in read_request_trace(args.request_trace) if run.began <= t.finished <= run.ended)
                / 1000
            )
            closed = run
        else:
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
                step.cpu_requests = step_server_cpu(step, args.request_trace)
                if args.timeline:
                    with open(args.timeline, "a") as sink:
                        sink.writelines(f"{at:.3f} {rate} {kind} {1000 * lat:.1f}\n" for at, kind, lat in step.timeline)
                steps.append(step)
                print_step(step)
                if step.hopeless and rate != rates[-1]:
                    print(f"stopping the ramp: {rate}/s is far beyond what the server holds")
                    break
                time.sleep(1.0)  # let queues drain so one step's backlog does not spill into the next
            if server.process.poll() is not None:
                raise SystemExit(f"gunicorn died during the run:\n{server.log.read_text()[-3000:]}")

            print_request_trace(steps, args.request_trace)

    forget_sessions([a.cookies["sessionid"] for a in annotators if "sessionid" in a.cookies])
    forget_tokens(annotators)
    reset_work(project)  # the items and accounts stay for the next run; the work it did goes
    if closed is not None:
        report_closed(closed, f"concord-{args.client}")
        return
    print(f"host speed at the end: {host_speed_ms():.0f} ms")
    report(steps)


def host_speed_ms() -> float:
    """Milliseconds for a fixed amount of pure-Python work, best of three.

    The machines are shared virtual ones: on the development machine this figure doubled within an
    hour, and the server's CPU per request with it. Runs are comparable only at a similar figure.
    """
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for number in range(2_000_000):
            total += number
        best = min(best, time.perf_counter() - started)
    return best * 1000


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


# -- a peer: the same workload through another tool's REST API ----------------------------------


PEERS = ("doccano",)
PEER_PASSWORD = "bench-annotate-peer-password"
PEER_LABELS = ("0", "1", "2")


class DoccanoPeer:
    """doccano (1.8.4) driven through its REST API, with the calls its annotation page makes.

    Set-up, as its admin (not measured): a text-classification project of ``examples`` short texts,
    one category type per score, and ``annotators`` accounts with the annotator role, each signed in
    once for a token. A label is then two requests, since doccano answers a label with the label
    alone: ``GET /v1/projects/<id>/examples?limit=1&offset=<n>`` (the annotator's next example, as
    its page fetches one) and ``POST /v1/projects/<id>/examples/<example>/categories``. Every
    annotator labels the examples in order (doccano has no assignment of items to people).
    """

    def __init__(self, url: str, user: str, password: str) -> None:
        found = re.fullmatch(r"http://(127\.0\.0\.1|localhost):(\d+)/?", url)
        if found is None:
            raise SystemExit("--peer-url must be http://127.0.0.1:PORT (a server on this machine)")
        self.host, self.port = found.group(1), int(found.group(2))
        self.user, self.password = user, password
        self.project_id = 0
        self.label_ids: list[int] = []

    def call(self, method: str, path: str, token: str = "", body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=HTTP_TIMEOUT_S * 3)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        return response.status, (json.loads(data) if data and data[:1] in (b"{", b"[") else None)

    def login(self, username: str, password: str) -> str:
        status, answer = self.call("POST", "/v1/auth/login/", body={"username": username, "password": password})
        if status != 200 or not answer or "key" not in answer:
            raise SystemExit(f"doccano: signing in as {username} answered HTTP {status}: {answer}")
        return answer["key"]

    def setup(self, *, annotators: int, examples: int) -> list[Annotator]:
        admin = self.login(self.user, self.password)
        project = {
            "name": f"bench-annotate-{uuid.uuid4().hex[:8]}", "description": "Workspace load benchmark",
            "project_type": "DocumentClassification", "resourcetype": "TextClassificationProject",
            "guideline": "", "random_order": False, "collaborative_annotation": False,
            "single_class_classification": True,
        }  # fmt: skip
        status, answer = self.call("POST", "/v1/projects", admin, project)
        if status != 201:
            raise SystemExit(f"doccano: creating the project answered HTTP {status}: {answer}")
        self.project_id = answer["id"]
        base = f"/v1/projects/{self.project_id}"
        for text in PEER_LABELS:
            status, answer = self.call(
                "POST",
                f"{base}/category-types",
                admin,
                {"text": text, "background_color": "#2196f3", "text_color": "#ffffff"},
            )
            if status != 201:
                raise SystemExit(f"doccano: creating a label answered HTTP {status}: {answer}")
            self.label_ids.append(answer["id"])
        rng = random.Random(0)
        words = ["the", "user", "asks", "why", "the", "answer", "helps", "them", "decide", "what", "to", "do"]
        for number in range(examples):
            text = f"{number}: " + " ".join(rng.choice(words) for _ in range(40))
            status, answer = self.call("POST", f"{base}/examples", admin, {"text": text, "meta": {}})
            if status != 201:
                raise SystemExit(f"doccano: creating an example answered HTTP {status}: {answer}")
        status, roles = self.call("GET", "/v1/roles", admin)
        annotator_role = next(role["id"] for role in roles if role["name"] == "annotator")
        people = []
        for number in range(annotators):
            name = f"{USER_PREFIX}{number:05d}"
            account = {"username": name, "email": f"{name}@example.org", "password1": PEER_PASSWORD,
                       "password2": PEER_PASSWORD}  # fmt: skip
            self.call("POST", "/v1/users/create", admin, account)  # 400 when kept from an earlier run
            status, found = self.call("GET", f"/v1/users?q={name}", admin)
            user_id = next(user["id"] for user in found if user["username"] == name)
            status, answer = self.call("POST", f"{base}/members", admin, {"user": user_id, "role": annotator_role})
            if status != 201:
                raise SystemExit(f"doccano: adding {name} to the project answered HTTP {status}: {answer}")
            people.append(Annotator(name, token=self.login(name, PEER_PASSWORD)))
        self.admin = admin
        return people

    def teardown(self) -> None:
        if self.project_id:
            self.call("DELETE", "/v1/projects", self.admin, {"ids": [self.project_id]})

    def next_item(self, client: Client, annotator: Annotator) -> None:
        path = f"/v1/projects/{self.project_id}/examples?limit=1&offset={annotator.labelled}"
        status, body = client.send(annotator, "GET", path, headers={"Authorization": f"Token {annotator.token}"})
        if status != 200:
            raise HttpError(f"HTTP {status}")
        results = json.loads(body)["results"]
        if not results:
            annotator.done, annotator.assignment_id = True, None
            return
        annotator.assignment_id = int(results[0]["id"])

    def submit(self, client: Client, annotator: Annotator, rng: random.Random, factors: tuple[str, ...]) -> None:
        path = f"/v1/projects/{self.project_id}/examples/{annotator.assignment_id}/categories"
        body = json.dumps({"label": rng.choice(self.label_ids)})
        headers = {"Authorization": f"Token {annotator.token}", "Content-Type": "application/json"}
        status, _ = client.send(annotator, "POST", path, body, headers)
        if status != 201:
            raise HttpError(f"HTTP {status}")
        annotator.labelled += 1
        annotator.assignment_id = None  # doccano answers the label alone: the next example is asked for


def peer_pids(pid: int) -> list[int]:
    """The peer's server process and its workers, whose CPU time is the server's."""
    return [pid, *children(pid)]


# -- closed loop: each client labels a fixed number of items back to back -------------------------


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
    answers; the server's CPU (every process of it, from /proc) is read before and after."""
    run = ClosedRun(len(annotators), labels_each)
    lock = threading.Lock()

    def work(annotator: Annotator, seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(labels_each):
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
    return run


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


def load_peer(args: argparse.Namespace) -> None:
    """The closed-loop workload against a peer already serving on this machine (``--peer-url``),
    its server's CPU read from /proc for ``--peer-pid`` and that process's workers."""
    print(f"peer: {args.peer} at {args.peer_url} (server pid {args.peer_pid}); load average {os.getloadavg()[0]:.2f}")
    print(f"host speed: {host_speed_ms():.0f} ms for a fixed pure-Python loop (lower is faster; compare runs by it)")
    peer = DoccanoPeer(args.peer_url, args.peer_user, args.peer_password)
    started = time.perf_counter()
    examples = CLOSED_WARMUP_LABELS + args.labels_per_client + 1
    annotators = peer.setup(annotators=args.threads_client, examples=examples)
    print(f"set up {len(annotators)} annotators and {examples} examples in {time.perf_counter() - started:.1f} s")
    client = Client(peer.port)
    try:
        for labels_each in (CLOSED_WARMUP_LABELS, args.labels_per_client):  # the first run is not counted
            run = run_closed(
                client, annotators, labels_each=labels_each, next_fn=peer.next_item, submit_fn=peer.submit,
                server_pids=lambda: peer_pids(args.peer_pid), factors=(),
            )  # fmt: skip
    finally:
        peer.teardown()
    report_closed(run, args.peer)


# -- in-process profile: SQL per request and hot spots --------------------------------------------


# (what, file, functions): disjoint parts of a request, summed from cProfile's cumulative times.
COST_CENTRES = (
    ("SQL: send, wait, fetch (cursor.execute)", "django/db/backends/utils.py", {"execute", "executemany"}),
    ("SQL: building statements (compiler as_sql)", "django/db/models/sql/compiler.py", {"as_sql"}),
    ("ORM: rows to model instances (Model.from_db)", "django/db/models/base.py", {"from_db"}),
    ("templates: rendering the item partial", "django/template/backends/django.py", {"render"}),
    ("value validation (TaskKind.check_value)", "annotation/kinds/base.py", {"check_value"}),
)


class QueryLog:
    """Each statement a request sends, with its own duration (a ``connection.execute_wrapper``).

    Django's debug query log rounds durations to whole milliseconds; most statements here take less.
    Transaction control (BEGIN, COMMIT) does not pass through it: each atomic block adds those two.
    """

    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.rows.append((sql, time.perf_counter() - started))


@dataclass
class Sample:
    seconds: float
    queries: list[tuple[str, float]]
    profiled: bool


def profile(args: argparse.Namespace) -> None:
    """Run the two views in-process through Django's test client: SQL per request and cProfile."""
    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client as DjangoClient

    from annotation.kinds.copa_likert import FACTORS

    call_command("migrate", verbosity=0)
    project = prepare_project(args.items)
    names = prepare_annotators(project, args.annotators)
    if removed := reset_work(project):
        print(f"cleared the annotations, assignments and cursors of an earlier run ({removed} annotations)")
    users = list(get_user_model().objects.filter(username__in=names[:20]))
    rng = random.Random(0)
    profiler = cProfile.Profile()
    samples: dict[str, list[Sample]] = {"next (claim)": [], "next (held)": [], "submit": []}
    clients = []
    for user in users:
        client = DjangoClient(HTTP_HOST=HOST)
        client.force_login(user)
        # The first request of a client loads the middleware (WhiteNoise scans the static files) and
        # imports lazily imported modules: a start-up cost, not a per-request one.
        client.get("/accounts/login/")
        clients.append(client)

    def measured(label: str, call, profiled: bool) -> bytes:
        log = QueryLog()
        with connection.execute_wrapper(log):
            started = time.perf_counter()
            if profiled:
                profiler.enable()
            response = call()
            if profiled:
                profiler.disable()
            seconds = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"{label}: HTTP {response.status_code}")
        samples[label].append(Sample(seconds, log.rows, profiled))
        return response.content

    requests = 0
    for number, client in enumerate(clients):  # each annotator's first visit claims an item
        page = measured("next (claim)", lambda c=client: c.get(f"/p/{SLUG}/annotate/", HTTP_HX_REQUEST="true"), False)
        requests += 1
        if ASSIGNMENT_RE.search(page) is None:
            raise SystemExit(f"annotator {number} got no item")
    # Every other round runs under cProfile, the rest give wall times without its overhead.
    for number, client in enumerate(itertools.cycle(clients)):
        if requests >= args.profile:
            break
        profiled = (number // len(clients)) % 2 == 0
        page = measured("next (held)", lambda c=client: c.get(f"/p/{SLUG}/annotate/", HTTP_HX_REQUEST="true"), profiled)
        found, key = ASSIGNMENT_RE.search(page), KEY_RE.search(page)
        if found is None or key is None:
            raise SystemExit("the workspace page has no item to submit")
        form = {code: str(rng.randrange(3)) for code in FACTORS}
        form["idempotency_key"] = key.group(1).decode()
        path = f"/p/{SLUG}/annotate/{int(found.group(1))}/submit/"
        measured("submit", lambda c=client, p=path, f=form: c.post(p, f, HTTP_HX_REQUEST="true"), profiled)
        requests += 2
    reset_work(project)  # leave no annotations behind for the next run to clear
    print_profile(samples, profiler, requests)


def print_profile(samples: dict[str, list[Sample]], profiler: cProfile.Profile, requests: int) -> None:
    print(f"in-process, {requests} requests through the full middleware stack (DEBUG off)")
    print("wall ms: requests not under cProfile (all for 'next (claim)'); SQL ms: time inside cursor.execute")
    for label, rows in samples.items():
        timed = [row for row in rows if not row.profiled] or rows
        counts = [len(row.queries) for row in rows]
        sql_ms = sum(sum(d for _, d in row.queries) for row in timed) / len(timed) * 1000
        wall_ms = sum(row.seconds for row in timed) / len(timed) * 1000
        print(
            f"  {label:<14}{len(rows):>4} requests  wall {wall_ms:5.1f} ms  SQL {sql_ms:5.1f} ms  "
            f"other {wall_ms - sql_ms:5.1f} ms  statements {sum(counts) / len(counts):.0f} "
            f"(min {min(counts)}, max {max(counts)})"
        )
    for label, rows in samples.items():
        typical = rows[len(rows) // 2].queries
        same_shape = [row.queries for row in rows if len(row.queries) == len(typical)]
        print(f"\nstatements of a '{label}' request (mean ms over {len(same_shape)} requests of that shape):")
        for position, (sql, _) in enumerate(typical):
            mean_ms = sum(queries[position][1] for queries in same_shape) / len(same_shape) * 1000
            print(f"  {mean_ms:6.2f}  {' '.join(sql.split())[:140]}")
    stats = pstats.Stats(profiler).stats
    profiled = sum(row.profiled for rows in samples.values() for row in rows)
    total = sum(cumulative for (_, _, name), (_, _, _, cumulative, _) in stats.items() if name == "generic")
    print(f"\nwhere the time goes ({profiled} requests under cProfile, which inflates the Python parts):")
    rest = total
    for title, path, names in COST_CENTRES:
        spent = sum(
            cumulative
            for (filename, _, name), (_, _, _, cumulative, _) in stats.items()
            if filename.endswith(path) and name in names
        )
        rest -= spent
        print(f"  {spent / profiled * 1000:6.2f} ms/request {spent / total:6.1%}  {title}")
    print(f"  {rest / profiled * 1000:6.2f} ms/request {rest / total:6.1%}  the rest: middleware, views, ORM set-up")
    print(f"\ntop functions by own time ({profiled} requests under cProfile; ms in all):")
    rows = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)
    for (filename, line, name), (_, calls, own, cumulative, _) in rows[:15]:
        print(f"  {own * 1000:8.1f} {cumulative * 1000:9.1f} {calls:>7}  {short_path(filename)}:{line}({name})")
    print("\nthe app's own functions by cumulative time (same requests):")
    ours = [row for row in rows if is_app_code(row[0][0])]
    for (filename, line, name), (_, calls, own, cumulative, _) in sorted(ours, key=lambda kv: kv[1][3], reverse=True)[
        :20
    ]:
        print(f"  {own * 1000:8.1f} {cumulative * 1000:9.1f} {calls:>7}  {short_path(filename)}:{line}({name})")


def is_app_code(filename: str) -> bool:
    return filename.startswith(str(ROOT)) and not any(part in filename for part in ("/.venv/", "/bench/"))


def short_path(filename: str) -> str:
    return filename.split("site-packages/")[-1].replace(str(ROOT) + "/", "")


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
    parser.add_argument("--client", choices=CLIENTS, default="htmx", help="the workspace (htmx) or the REST API")
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
    args = parser.parse_args(argv)
    if args.items < 1 or args.annotators < 1:
        parser.error("--items and --annotators must be at least 1")
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
        profile(args)
    else:
        production = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
        args.worker_class = args.worker_class or production["worker_class"]
        args.workers = args.workers or production["workers"]
        args.threads = args.threads or production["threads"]
        load(args)


if __name__ == "__main__":
    main()

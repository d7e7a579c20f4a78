"""What the annotator load benchmark (``annotate_load.py``) drives: the project, its items and annotator
accounts; the gunicorn server; CPU accounting from /proc and the figures read from a run; and the
simulated annotators' HTTP clients."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

if TYPE_CHECKING:
    from annotation.models import Project

from bench.common import free_port

ROOT = Path(__file__).resolve().parent.parent
SLUG = "bench-annotate-copa-likert"
KIND = "copa_likert"
OVERLAP = 3
USER_PREFIX = "bench-annotator-"
PASSWORD = "bench-annotate-load-password"
HOST = "127.0.0.1"
HTTP_TIMEOUT_S = 10.0
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
        return process_tree(self.process.pid)

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


# -- CPU accounting from /proc, the host's speed, percentiles -------------------------------------

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


def process_tree(pid: int) -> list[int]:
    """A server's process and its workers, whose CPU time is the server's."""
    return [pid, *children(pid)]


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


def print_host_speed() -> None:
    print(f"host speed: {host_speed_ms():.0f} ms for a fixed pure-Python loop (lower is faster; compare runs by it)")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile in milliseconds (NaN for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1] * 1000


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


def read_project(client: Client, annotator: Annotator, rng: random.Random, factors: tuple[str, ...]) -> None:
    """The floor (``--client floor``): the cheapest authenticated API read, the project and the
    caller's roles; it stores nothing."""
    status, _ = client.send(annotator, "GET", f"/api/projects/{SLUG}/")
    if status != 200:
        raise HttpError(f"HTTP {status}")


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

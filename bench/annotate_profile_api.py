"""The annotator benchmark's in-process profile of the API (``annotate_load.py --profile N --client
api``): where the server's CPU goes on ``POST /api/assignments/<id>/submit/?next=true``, beside a
floor, the cheapest authenticated API read (``GET /api/projects/<slug>/``: the project and the
caller's roles).

Each request goes straight into the WSGI application gunicorn serves (``config.wsgi``), its answer
read and closed as gunicorn does, so Django's request signals run too; only gunicorn's own work
(the socket, parsing the request, writing the answer) is missing. Rounds alternate: a bare one
gives the thread's CPU per request; an instrumented one splits it, each part's own CPU (what it
spent less the parts inside it) from ``time.thread_time`` around the functions that
``instrumented`` names.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.annotate_harness import HOST, SLUG, prepare_annotators, prepare_project, reset_work
from bench.common import setup_django

SUBMIT = "submit?next=true"
FLOOR = "floor: GET project"


class Split:
    """Each part's own thread CPU (less the parts called inside it), summed over the requests."""

    def __init__(self) -> None:
        self.own_ns: dict[str, int] = defaultdict(int)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list[int]] = []
        self.enabled = False

    def wrap(self, label: str, function: Callable) -> Callable:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.enabled:
                return function(*args, **kwargs)
            frame = [time.thread_time_ns(), 0]
            self._stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.thread_time_ns() - frame[0]
                self.own_ns[label] += spent - frame[1]
                self.calls[label] += 1
                if self._stack:
                    self._stack[-1][1] += spent

        return timed

    def sql(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        """A ``connection.execute_wrapper``: the statements' time in the driver and database."""
        return self.wrap("SQL: cursor.execute (driver and, on SQLite, the database)", execute)(
            sql, params, many, context
        )


def patch(target: Any, name: str, label: str, split: Split, patched: list) -> None:
    original = getattr(target, name)
    patched.append((target, name, target.__dict__.get(name)))
    setattr(target, name, split.wrap(label, original))


@contextmanager
def instrumented(split: Split, application: Any) -> Iterator[None]:
    """The parts of a request, each wrapped for ``split``; put back on the way out."""
    from django.conf import settings
    from django.core.handlers.base import BaseHandler
    from django.utils.module_loading import import_string
    from rest_framework import serializers
    from rest_framework.renderers import JSONRenderer
    from rest_framework.request import Request
    from rest_framework.views import APIView

    import annotation.apis
    import config.auth
    import config.wsgi

    patched: list = []
    parts = [
        (config.wsgi.application.__class__, "__call__", "Django: WSGI handler (environ, request, response)"),
        (BaseHandler, "_get_response", "Django: URL resolving, view call"),
        (APIView, "dispatch", "DRF: dispatch (request wrapping, negotiation, finalising)"),
        (Request, "_parse", "DRF: parsing the JSON body"),
        (config.auth.TokenAuthentication, "authenticate", "auth: knox token and user"),
        (APIView, "check_permissions", "DRF: permissions"),
        (APIView, "check_throttles", "throttles (cache read and write)"),
        (serializers.Serializer, "is_valid", "serializers: Query and Input validation"),
        (annotation.apis, "assignment_for_user", "app: the user's assignment and its project"),
        (annotation.apis, "assignment_submit", "app: storing the answer"),
        (annotation.apis, "assignment_claim", "app: claiming the next item"),
        (annotation.apis, "next_data", "app: the next item's JSON"),
        (annotation.apis, "rater_annotation_data", "app: the annotation's JSON"),
        (annotation.apis, "require_project_role", "app: project and roles (floor)"),
        (serializers.Serializer, "to_representation", "serializers: ProjectOutput's fields (floor)"),
        (JSONRenderer, "render", "DRF: rendering the JSON answer"),
    ]
    for target, name, label in parts:
        patch(target, name, label, split, patched)
    for dotted in settings.MIDDLEWARE:
        middleware = import_string(dotted)
        for name in ("process_request", "process_view", "process_response", "__call__"):
            if hasattr(middleware, name):
                patch(middleware, name, f"middleware: {dotted.rsplit('.', 1)[-1]}", split, patched)
    # The handler built its middleware chain at start-up: build it again through the wrapped methods.
    application.load_middleware()
    try:
        yield
    finally:
        for target, name, original in reversed(patched):
            if original is None:
                delattr(target, name)
            else:
                setattr(target, name, original)
        application.load_middleware()


def call(application: Any, environ: dict) -> tuple[int, bytes]:
    """One request into the WSGI application, its answer read and closed as a server does."""
    status: list[str] = []
    environ = {**environ, "wsgi.input": io.BytesIO(environ["wsgi.input"])}
    result = application(environ, lambda line, headers, exc_info=None: status.append(line))
    try:
        body = b"".join(result)
    finally:
        result.close()
    return int(status[0].split()[0]), body


def environ_of(method: str, path: str, token: str, body: bytes = b"") -> dict:
    """What gunicorn hands the application for an API request from 127.0.0.1."""
    path_info, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": path_info, "QUERY_STRING": query, "SCRIPT_NAME": "",
        "SERVER_NAME": HOST, "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": HOST, "HTTP_AUTHORIZATION": f"Token {token}", "wsgi.url_scheme": "http",
        "wsgi.input": body, "wsgi.errors": io.StringIO(), "wsgi.multithread": True, "wsgi.multiprocess": True,
        "wsgi.run_once": False, "wsgi.version": (1, 0),
    }  # fmt: skip
    if body:
        environ["CONTENT_TYPE"], environ["CONTENT_LENGTH"] = "application/json", str(len(body))
    return environ


def profile_api(args: argparse.Namespace) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    import config.wsgi
    from annotation.kinds.copa_likert import FACTORS
    from bench.annotate_harness import Annotator, forget_tokens, start_tokens

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; cache: {config_cache()}")
    project = prepare_project(args.items)
    names = prepare_annotators(project, args.annotators)
    reset_work(project)
    annotators = [Annotator(name) for name in names[:20]]
    start_tokens(annotators)
    application = config.wsgi.application
    rng = random.Random(0)
    held: dict[str, int] = {}
    for annotator in annotators:  # each one's first claim: not what is measured
        status, body = call(application, environ_of("POST", f"/api/projects/{SLUG}/assignments/next/", annotator.token))
        if status != 200:
            raise SystemExit(f"next: HTTP {status}: {body[:300]!r}")
        held[annotator.username] = json.loads(body)["id"]

    def submit(annotator: Annotator) -> None:
        value = {"scores": {code: rng.randrange(3) for code in FACTORS}}
        body = json.dumps({"value": value, "idempotency_key": f"{time.time_ns()}-{rng.random()}"}).encode()
        path = f"/api/assignments/{held[annotator.username]}/submit/?next=true"
        status, answer = call(application, environ_of("POST", path, annotator.token, body))
        if status != 201:
            raise SystemExit(f"submit: HTTP {status}: {answer[:300]!r}")
        found = json.loads(answer)["next"]
        if found is None:
            raise SystemExit("the project ran out of items: give it more (--items)")
        held[annotator.username] = found["id"]

    def floor(annotator: Annotator) -> None:
        status, answer = call(application, environ_of("GET", f"/api/projects/{SLUG}/", annotator.token))
        if status != 200:
            raise SystemExit(f"floor: HTTP {status}: {answer[:300]!r}")

    requests = {SUBMIT: submit, FLOOR: floor}
    for run in requests.values():  # warm: lazy imports, the caches' first entries
        for annotator in annotators:
            run(annotator)
    bare: dict[str, list[float]] = defaultdict(list)
    split = {label: Split() for label in requests}
    rounds = max(1, args.profile // (2 * len(annotators) * len(requests)))
    for number in range(2 * rounds):
        measuring = number % 2 == 1  # bare and instrumented rounds alternate
        for label, run in requests.items():
            with contextlib.ExitStack() as stack:
                if measuring:
                    stack.enter_context(instrumented(split[label], application))
                    stack.enter_context(connection.execute_wrapper(split[label].sql))
                    split[label].enabled = True
                for annotator in annotators:
                    started = time.thread_time()
                    run(annotator)
                    if not measuring:
                        bare[label].append(time.thread_time() - started)
                split[label].enabled = False
    forget_tokens(annotators)
    reset_work(project)
    report(bare, split, rounds * len(annotators))


def config_cache() -> str:
    from django.conf import settings

    return settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]


def report(bare: dict[str, list[float]], split: dict[str, Split], instrumented_requests: int) -> None:
    print("\nthread CPU per request, bare rounds (ms): mean, median")
    for label, values in bare.items():
        print(f"  {label:<22} {1000 * statistics.fmean(values):6.2f} {1000 * statistics.median(values):6.2f}")
    for label, parts in split.items():
        total = sum(parts.own_ns.values())
        print(f"\n{label}: own CPU of each part, instrumented rounds (ms/request; {instrumented_requests} requests)")
        for part, spent in sorted(parts.own_ns.items(), key=lambda kv: kv[1], reverse=True):
            if spent:
                share = spent / total if total else 0.0
                per_request = spent / instrumented_requests / 1e6
                calls = parts.calls[part] / instrumented_requests
                print(f"  {per_request:6.3f} {share:6.1%} {calls:5.1f}x  {part}")
        print(f"  {total / instrumented_requests / 1e6:6.3f} in all (the timers' own cost included)")
    print(
        "RESULT "
        + " ".join(
            f"{key}_cpu_ms={1000 * statistics.fmean(bare[label]):.2f}"
            for key, label in (("submit_next", SUBMIT), ("floor", FLOOR))
        )
    )

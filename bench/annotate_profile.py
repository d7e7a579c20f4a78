"""The annotator benchmark's in-process profile (``annotate_load.py --profile N``): SQL per request and
the hot spots, through Django's test client, no server."""

from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.annotate_harness import (
    ASSIGNMENT_RE,
    HOST,
    KEY_RE,
    ROOT,
    SLUG,
    prepare_annotators,
    prepare_project,
    reset_work,
)
from bench.common import setup_django

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

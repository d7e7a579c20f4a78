"""Item browser at scale: server time of a page of a large project's items, first / middle / last page,
with and without filters and search, and the query plans behind them.

    python bench/item_browser.py [--items 1000000] [--repeat 15] [--reuse]

It imports ``--items`` CoPA items through the importer (COPY on PostgreSQL) into the project
``bench-items``, then writes answers in bulk with SQL: 3 raters on the first 40 % of the items
(the third rater departs from the other two on every fifth one), 1 rater and a held place on the
next 10 %, a skip on every 100th item, and every 50th item a qualification item. ``--reuse`` keeps
a project already built with that many items (the build is most of the run at a million).

Each page is requested through Django's test client (middleware, view, template: the server's whole
time, no network), as a signed-in researcher; the figure is the median of ``--repeat`` requests after
one warm-up. On PostgreSQL the plans of the page's main queries are printed with EXPLAIN ANALYZE.
The last line is ``RESULT items=<n> first_ms=<n> middle_ms=<n> last_ms=<n> ...`` (one key per page
measured); the target is 100 ms or less for every unfiltered page and every filtered page of a
1,000,000-item project on PostgreSQL.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import setup_django  # noqa: E402

SLUG = "bench-items"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")


def build(items: int, *, reuse: bool):
    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.importing import import_items
    from annotation.kinds import get_kind
    from annotation.models import Item, Project, Role
    from annotation.services import membership_add, project_create

    users = get_user_model()
    researcher, _ = users.objects.get_or_create(username="bench-researcher")
    annotator, _ = users.objects.get_or_create(username="bench-annotator")
    project = Project.objects.filter(slug=SLUG).first()
    if project is not None and reuse and Item.objects.filter(project=project).count() == items:
        print(f"reusing {SLUG} with {items:,} items", file=sys.stderr)
        return project, researcher
    if project is not None:
        project.delete()
    project = project_create(slug=SLUG, kind="copa_likert", overlap=3)
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
    kind = get_kind("copa_likert")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "items.jsonl"
        payload = kind.example_payload()
        gold = kind.example_value()
        with path.open("w", encoding="utf-8") as handle:
            for n in range(items):
                record = {"external_id": f"copa-{n:07d}", **payload, "meta": {"n": n}}
                if n % 50 == 49:
                    record["gold"] = gold
                handle.write(json.dumps(record) + "\n")
        import_items(project=project, path=path)
    print(f"imported {items:,} items in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    started = time.perf_counter()
    postgres = connection.vendor == "postgresql"
    make_object = "jsonb_build_object" if postgres else "json_object"
    drift = "CASE WHEN r.n = 3 AND i.id %% 5 = 0 THEN 2 ELSE 0 END"
    scores = ", ".join(f"'{code}', ((i.id * {k + 3} + {drift}) %% 3)" for k, code in enumerate(FACTORS))
    low = Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)[0]
    complete, started_to = low + int(items * 0.4), low + int(items * 0.5)
    three = "(SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3)"
    now = "now()" if postgres else "datetime('now')"
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO annotation_annotation (project_id, item_id, rater, version, value, source, created_at, "
            f"seconds_on_item) SELECT %s, i.id, 'rater' || r.n, 1, {make_object}('scores', {make_object}({scores})), "
            f"'import', {now}, 20 FROM annotation_item i CROSS JOIN {three} r "
            "WHERE i.project_id = %s AND i.id < %s AND (r.n = 1 OR i.id < %s)",
            [project.pk, project.pk, started_to, complete],
        )
        cursor.execute(
            "UPDATE annotation_item SET assigned_count = 1 WHERE project_id = %s AND id >= %s AND id < %s "
            "AND gold_value IS NULL",
            [project.pk, complete, started_to],
        )
        cursor.execute(
            "INSERT INTO annotation_assignment (project_id, item_id, annotator_id, status, skip_reason, "
            f"suggestion_visible, created_at, completed_at) SELECT %s, i.id, %s, 'skipped', 'bench', false, {now}, "
            f"{now} FROM annotation_item i WHERE i.project_id = %s AND i.id %% 100 = 7",
            [project.pk, annotator.pk, project.pk],
        )
        cursor.execute("ANALYZE")
    print(f"wrote answers in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return project, researcher


def measure(client, url: str, repeat: int) -> float:
    client.get(url)  # warm-up: templates compiled, caches filled
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times)


def explain(title: str, queryset) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
        plan = "\n".join(f"    {row[0]}" for row in cursor.fetchall())
    print(f"\n-- plan: {title}\n    {sql % tuple(repr(p) for p in params)}\n{plan}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--reuse", action="store_true", help="keep an existing bench project of that size")
    args = parser.parse_args()
    setup_django()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from annotation import item_browser
    from annotation.models import Item

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    project, researcher = build(args.items, reuse=args.reuse)
    client = Client()
    client.force_login(researcher)
    base = reverse("item_list", args=[project.slug])
    items = Item.objects.filter(project=project).order_by("pk")

    def at(share: float) -> int:
        """The id of the item at this share of the project (answers were written by position)."""
        return items.values_list("pk", flat=True)[int(args.items * share)]

    middle, answered, held, late = at(0.5), at(0.2), at(0.42), at(0.9)
    pages = {
        "first": base,
        "middle": f"{base}?after={middle}",
        "last": f"{base}?last=on",
        "back": f"{base}?before={middle}",
        "complete": f"{base}?status=complete&after={answered}",
        "in_progress": f"{base}?status=in_progress&after={held}",
        "not_started": f"{base}?status=not_started&after={late}",
        "skipped": f"{base}?status=skipped&after={middle}",
        "qualification": f"{base}?status=qualification&after={middle}",
        "disagreement": f"{base}?status=disagreement&after={answered}",
        "gold_ready": f"{base}?status=gold_ready&after={answered}",
        "search_id": f"{base}?q=copa-09",
        "search_text": f"{base}?q=pip+install&after={middle}",
        "search_rare": f"{base}?q=nothing-matches-this&after={middle}",
    }
    print(f"{connection.vendor}, {args.items:,} items, median of {args.repeat} requests (server time, ms)")
    results = {}
    for name, url in pages.items():
        results[name] = measure(client, url, args.repeat)
        print(f"  {name:<18} {results[name]:8.1f}   {url}")
    explain("the middle page", items.filter(pk__gt=middle)[: item_browser.PAGE_SIZE + 1])
    explain("the last page", Item.objects.filter(project=project).order_by("-pk")[: item_browser.PAGE_SIZE + 1])
    edge = items.filter(pk__gt=answered).values_list("pk", flat=True)[
        item_browser.SCAN_WINDOW - 1 : item_browser.SCAN_WINDOW
    ]
    explain("a filter's window edge", edge)
    (edge_pk,) = edge
    window = Item.objects.filter(project=project, pk__gt=answered, pk__lte=edge_pk).order_by("pk")
    explain(
        "complete, in the window",
        item_browser.SQL_FILTERS["complete"][1](window, project)[: item_browser.PAGE_SIZE + 1],
    )
    search_edge = items.filter(pk__gt=answered).values_list("pk", flat=True)[item_browser.SEARCH_WINDOW - 1]
    search_window = Item.objects.filter(project=project, pk__gt=answered, pk__lte=search_edge).order_by("pk")
    explain(
        "text search, in the window", item_browser._search(search_window, "pip install")[: item_browser.PAGE_SIZE + 1]
    )
    rare = item_browser._search(search_window, "nothing-matches-this")
    explain("text search with no match: the whole window read", rare[: item_browser.PAGE_SIZE + 1])
    worst = max(results.values())
    print(f"\nslowest page {worst:.1f} ms (target ≤ 100 ms)")
    print(f"RESULT items={args.items} " + " ".join(f"{name}_ms={ms:.1f}" for name, ms in results.items()))


if __name__ == "__main__":
    main()

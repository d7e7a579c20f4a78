"""Designed-kind import benchmark: a whole existing study of a 4-dimension rating design (items, then
every rater's answers by name) imports at the speed a paper kind's study does.

For the registered ``rating`` kind (its example design: four dimensions, 1 to 5) and its peer, the
paper kind with the same shape of value (CoPA's six 0-2 scores), it writes ``--items`` synthetic
items and ``--raters`` answers per item, then times ``import_items`` and ``import_annotations`` into
a fresh project, in the same process and sitting, in the order peer, designed, designed, peer (each
kind's figure is the mean of its two studies, so neither pays alone for the tables the other left).

    python bench/import_designed.py [--items 100000] [--raters 3]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The last line is
``RESULT items_per_s=<n> answers_per_s=<n> items_vs_peer=<r> answers_vs_peer=<r>`` for the designed
kind, each ratio its rate over the peer's (the floor is 0.8: within 20 %).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import setup_django  # noqa: E402 - importable once the repository root is on the path

DESIGNED, PEER = "rating", "copa_likert"
FLOOR = 0.8
SLUG_PREFIX = "bench-designed-"


def answers(kind, items: int, raters: int):
    value = kind.example_value()
    for n in range(items):
        for r in range(raters):
            yield {"rater": f"rater{r}", "external_id": f"{kind.name}-{n:07d}", "value": value}


def timed_study(kind, items: int, raters: int, folder: Path) -> tuple[float, float]:
    """(items/s, answers/s) of one study's imports into a fresh project."""
    from annotation.importing import import_annotations, import_items
    from annotation.models import Project
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records, write_jsonl

    slug = f"{SLUG_PREFIX}{kind.name}".replace("_", "-")
    Project.objects.filter(slug=slug).delete()
    project = project_create(slug=slug, kind=kind.name, overlap=raters)
    item_file = write_jsonl(folder / f"{kind.name}-items.jsonl", synthetic_records(kind, items))
    answer_file = write_jsonl(folder / f"{kind.name}-answers.jsonl", answers(kind, items, raters))
    started = time.perf_counter()
    assert import_items(project=project, path=item_file).imported == items
    item_seconds = time.perf_counter() - started
    started = time.perf_counter()
    assert import_annotations(project=project, path=answer_file).imported == items * raters
    answer_seconds = time.perf_counter() - started
    Project.objects.filter(slug=slug).delete()  # no benchmark rows left in a database people also use
    _vacuum()
    return items / item_seconds, items * raters / answer_seconds


def _vacuum() -> None:
    """On PostgreSQL, the deleted study's dead rows cleared and the statistics current, so the next
    study starts from the same tables."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE annotation_annotation, annotation_item")


def bench(items: int, raters: int) -> None:
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.kinds import get_kind

    call_command("migrate", verbosity=0)
    print(f"database: {connection.vendor}; {items} items, {items * raters} answers per study")
    runs: dict[str, list[tuple[float, float]]] = {PEER: [], DESIGNED: []}
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        for name in (PEER, DESIGNED, DESIGNED, PEER):
            runs[name].append(timed_study(get_kind(name), items, raters, Path(tmp)))
            print(f"{name:<14} items {runs[name][-1][0]:>9.0f}/s   answers {runs[name][-1][1]:>9.0f}/s")
    rates = {name: (sum(r[0] for r in found) / 2, sum(r[1] for r in found) / 2) for name, found in runs.items()}
    item_ratio = rates[DESIGNED][0] / rates[PEER][0]
    answer_ratio = rates[DESIGNED][1] / rates[PEER][1]
    print(f"designed / paper kind: items {item_ratio:.2f}x, answers {answer_ratio:.2f}x (floor {FLOOR:.2f}x)")
    print(
        f"RESULT items_per_s={rates[DESIGNED][0]:.0f} answers_per_s={rates[DESIGNED][1]:.0f} "
        f"items_vs_peer={item_ratio:.2f} answers_vs_peer={answer_ratio:.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000, help="items per study")
    parser.add_argument("--raters", type=int, default=3, help="answers per item")
    args = parser.parse_args(argv)
    if args.items < 1 or args.raters < 1:
        parser.error("--items and --raters must be at least 1")
    bench(args.items, args.raters)


if __name__ == "__main__":
    main()

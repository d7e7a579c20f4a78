"""The workspace's hot path, written-out SQL against the same operations built by the ORM, in one process.

Two identical copa_likert projects (``bench-hotpath-raw`` and ``bench-hotpath-orm``, ``--items`` items
each, overlap 3) and ``--annotators`` annotators. Each iteration, one annotator does on both projects

    next (claim)   the first next item: a new claim (assignment_claim_next)
    next (held)    the same call again: the item they hold, marked opened
    submit         their answer (assignment_submit)

once through the app's functions (annotation/sql.py) and once through the ORM code below, which
runs the same steps with querysets. The two alternate which goes first, so a noisy neighbour hits
both alike; compare the ratio more than the absolute figures on a shared machine.

    python bench/hotpath_sql.py [--iterations 2000] [--items 5000] [--annotators 20]

The database is whatever DATABASE_URL names (the embedded SQLite file when unset). The last line is
``RESULT raw_p95_ms=<n> orm_p95_ms=<n> ratio=<n>``: p95 over the three operations together, and
orm/raw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import setup_django  # noqa: E402 - importable once the repository root is on the path

SLUGS = {"raw": "bench-hotpath-raw", "orm": "bench-hotpath-orm"}
KIND = "copa_likert"
OVERLAP = 3
USER_PREFIX = "bench-hotpath-"
OPERATIONS = ("next (claim)", "next (held)", "submit")


# -- the same steps through the ORM -----------------------------------------------------------------


def orm_current(project, user):
    from annotation.models import Assignment

    found = (
        Assignment.objects.filter(project=project, annotator=user, status=Assignment.Status.ASSIGNED)
        .select_related("item")
        .order_by("created_at", "id")
        .first()
    )
    if found is not None:  # the objects the caller holds, as the app's own function attaches them
        found.project = found.item.project = project
        found.annotator = user
    return found


def orm_claim_next(project, user):
    """assignment_claim_next for a project without qualification items, with querysets."""
    from django.db import transaction
    from django.db.models import BooleanField, Exists, ExpressionWrapper, F, OuterRef, Q
    from django.utils import timezone

    from annotation.assignments import CLAIM_ATTEMPTS, MemberPaused, seeded_fraction, suggestion_exposed
    from annotation.models import AnnotatorState, Assignment, Item, Membership

    current = orm_current(project, user)
    if current is not None:
        current.opened_at = timezone.now()
        Assignment.objects.filter(pk=current.pk).update(opened_at=current.opened_at)
        return current
    for _attempt in range(CLAIM_ATTEMPTS):
        with transaction.atomic():
            paused = Membership.objects.filter(project=OuterRef("project"), user=OuterRef("annotator"), paused=True)
            state = (
                AnnotatorState.objects.select_for_update()
                .filter(project=project, annotator=user)
                .values_list("id", "cursor", "served", Exists(paused))
                .first()
            )
            if state is None:
                start = int(seeded_fraction(project.seed, "start", user.pk) * 2**62)
                created = AnnotatorState.objects.create(project=project, annotator=user, cursor=start)
                state = (created.pk, created.cursor, created.served, False)
            if state[3]:
                raise MemberPaused("paused")
            not_mine = ~Exists(Assignment.objects.filter(item=OuterRef("pk"), annotator=user))
            open_items = Item.objects.filter(project=project, is_open=True).filter(not_mine).order_by("order_key")
            item = (
                open_items.filter(order_key__gt=state[1]).first() or open_items.filter(order_key__lte=state[1]).first()
            )
            if item is None:
                return None
            still_open = ExpressionWrapper(Q(assigned_count__lt=project.overlap - 1), output_field=BooleanField())
            taken = Item.objects.filter(pk=item.pk, is_open=True, assigned_count__lt=project.overlap).update(
                assigned_count=F("assigned_count") + 1, is_open=still_open
            )
            if not taken:
                continue
            now = timezone.now()
            assignment = Assignment.objects.create(
                project=project,
                item=item,
                annotator=user,
                suggestion_visible=suggestion_exposed(project=project, item_id=item.pk, annotator_id=user.pk),
                opened_at=now,
            )
            AnnotatorState.objects.filter(pk=state[0]).update(served=F("served") + 1, cursor=item.order_key)
            assignment.item.project = project
            return assignment
    return orm_current(project, user)


def orm_submit(assignment, value: Any, key: str):
    """assignment_submit with querysets: the same checks, the version counted, then the row created."""
    from django.db import IntegrityError, transaction
    from django.db.models import Max
    from django.utils import timezone

    from annotation.errors import ValidationFailed
    from annotation.models import Annotation, Assignment

    now = timezone.now()
    item, user, project = assignment.item, assignment.annotator, assignment.project
    with transaction.atomic():
        closed = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ASSIGNED).update(
            status=Assignment.Status.SUBMITTED, completed_at=now
        )
        if not closed and Assignment.objects.get(pk=assignment.pk).status == Assignment.Status.SKIPPED:
            raise RuntimeError("already skipped")
        problems = project.task_kind.check_value(value, payload=item.payload)
        if problems:
            raise ValidationFailed(problems)
        top = Annotation.objects.filter(item=item, rater=user.username).aggregate(top=Max("version"))["top"]
        try:
            with transaction.atomic():  # a conflict must not end the outer transaction
                return Annotation.objects.create(
                    project=project,
                    item=item,
                    annotator=user,
                    rater=user.username,
                    version=(top or 0) + 1,
                    value=value,
                    idempotency_key=key,
                    suggestion_visible=assignment.suggestion_visible,
                    seconds_on_item=(now - assignment.opened_at).total_seconds(),
                )
        except IntegrityError:
            return Annotation.objects.get(project=project, rater=user.username, idempotency_key=key)


# -- set-up and the run -----------------------------------------------------------------------------


def prepare(items: int, annotators: int) -> tuple[dict, list]:
    from django.contrib.auth import get_user_model

    from annotation.importing import import_items
    from annotation.kinds import get_kind
    from annotation.models import Membership, Project, Role
    from annotation.services import project_create
    from annotation.synthetic import synthetic_records, write_jsonl

    projects = {}
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        path = write_jsonl(Path(tmp) / "items.jsonl", synthetic_records(get_kind(KIND), items))
        for mode, slug in SLUGS.items():
            Project.objects.filter(slug=slug).delete()
            project = project_create(slug=slug, kind=KIND, title="Hot-path SQL benchmark", overlap=OVERLAP)
            import_items(project=project, path=path)
            projects[mode] = project
    users = []
    for number in range(annotators):
        user, _ = get_user_model().objects.get_or_create(username=f"{USER_PREFIX}{number:03d}")
        users.append(user)
        for project in projects.values():
            Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    return projects, users


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=2000, help="next+submit rounds per mode")
    parser.add_argument("--items", type=int, default=5000, help="items in each project")
    parser.add_argument("--annotators", type=int, default=20, help="annotators taking turns")
    args = parser.parse_args(argv)
    if args.items * OVERLAP < args.iterations:
        parser.error("--items x 3 must be at least --iterations (each round claims one item per project)")
    os.environ.setdefault("CONCORD_EMBEDDED", "true")
    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.assignments import assignment_claim_next, assignment_submit
    from annotation.kinds import get_kind
    from annotation.models import Project

    call_command("migrate", verbosity=0)
    projects, users = prepare(args.items, args.annotators)
    value = get_kind(KIND).example_value()
    runs: dict[str, dict[str, Callable]] = {
        "raw": {
            "claim": lambda project, user: assignment_claim_next(project=project, user=user),
            "submit": lambda assignment, key: assignment_submit(
                assignment=assignment, value=value, idempotency_key=key
            ),
        },
        "orm": {"claim": orm_claim_next, "submit": lambda assignment, key: orm_submit(assignment, value, key)},
    }
    times: dict[str, dict[str, list[float]]] = {mode: {op: [] for op in OPERATIONS} for mode in runs}

    def timed(mode: str, operation: str, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        result = call()
        times[mode][operation].append((time.perf_counter() - started) * 1000)
        return result

    print(f"{connection.vendor}: {args.iterations} rounds per mode, {args.items} items per project")
    try:
        for number in range(args.iterations):
            user = users[number % len(users)]
            order = ("raw", "orm") if number % 2 == 0 else ("orm", "raw")
            for mode in order:
                project, run = projects[mode], runs[mode]
                claimed = timed(mode, "next (claim)", lambda p=project, r=run, u=user: r["claim"](p, u))
                held = timed(mode, "next (held)", lambda p=project, r=run, u=user: r["claim"](p, u))
                if claimed is None or held is None or held.pk != claimed.pk:
                    raise SystemExit(f"{mode}: round {number} claimed {claimed} and then held {held}")
                timed(mode, "submit", lambda r=run, a=held, k=f"bench-{number}": r["submit"](a, k))
    finally:
        Project.objects.filter(slug__in=SLUGS.values()).delete()

    print(f"{'operation':<14} {'raw p50':>8} {'raw p95':>8} {'orm p50':>8} {'orm p95':>8} {'orm/raw p95':>12}")
    for operation in OPERATIONS:
        raw, orm = times["raw"][operation], times["orm"][operation]
        raw_p95, orm_p95 = percentile(raw, 0.95), percentile(orm, 0.95)
        print(
            f"{operation:<14} {statistics.median(raw):8.2f} {raw_p95:8.2f} {statistics.median(orm):8.2f} "
            f"{orm_p95:8.2f} {orm_p95 / raw_p95:12.2f}"
        )
    raw_all = [ms for values in times["raw"].values() for ms in values]
    orm_all = [ms for values in times["orm"].values() for ms in values]
    raw_p95, orm_p95 = percentile(raw_all, 0.95), percentile(orm_all, 0.95)
    print(f"RESULT raw_p95_ms={raw_p95:.2f} orm_p95_ms={orm_p95:.2f} ratio={orm_p95 / raw_p95:.2f}")


if __name__ == "__main__":
    main()

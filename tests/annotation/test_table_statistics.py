"""Bulk writes leave the planner knowing what they wrote, and a project's reads never scan another's rows.

Until autovacuum came by, a table whose statistics were taken when it held no live rows (a project
deleted, a benchmark cleaned up) still looked empty after an import of 50,000 answers: the report's
latest-version anti-join was then planned as a nested loop over the whole table for each row
(minutes), and each batch of the import itself scanned every answer stored so far.
"""

import random

import pytest
from django.db import connection, transaction

from annotation.assignments import assignment_claim_next, assignment_submit
from annotation.importing import import_annotations, import_items
from annotation.importing.services import IMPORTED_ANNOTATION_FIELDS
from annotation.kinds import get_kind
from annotation.latest import latest_annotations
from annotation.models import Annotation, Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from validation.ratings import project_ratings
from validation.reports import ReportParameters, build_report

COPA = get_kind("copa_likert")
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
RATERS = 3
ANSWERS = 50_000
#: Each report read of 50,000 answers takes well under a second when planned on statistics.
STATEMENT_TIMEOUT = "5s"
POSTGRES_ONLY = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="planner statistics and EXPLAIN are PostgreSQL's"
)


def test_an_imported_label_sets_every_annotation_field_but_the_id():
    """The import writes its rows column by column: a new field on the model cannot be left out."""
    fields = {f.name for f in Annotation._meta.concrete_fields if not f.primary_key}
    assert set(IMPORTED_ANNOTATION_FIELDS) == fields
    assert len(IMPORTED_ANNOTATION_FIELDS) == len(fields)


def _answers_file(tmp_path, records: list[dict]):
    rng = random.Random(7)
    lines = (
        {
            "rater": f"annotator-{rater}",
            "external_id": record["external_id"],
            "value": {"scores": {factor: rng.randrange(3) for factor in FACTORS}},
            "suggestion_visible": rng.random() < 0.5,
        }
        for record in records
        for rater in range(RATERS)
    )
    return write_jsonl(tmp_path / "answers.jsonl", lines)


def _imported_project(make_project, tmp_path, *, slug: str, items: int):
    project = make_project("copa_likert", slug=slug, overlap=RATERS)
    records = [{**r, "external_id": f"{slug}-{n}"} for n, r in enumerate(synthetic_records(COPA, items))]
    import_items(project=project, path=write_jsonl(tmp_path / f"{slug}-items.jsonl", iter(records)))
    import_annotations(project=project, path=_answers_file(tmp_path, records))
    return project


def _planner_rows() -> tuple[float, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples, relpages FROM pg_class WHERE relname = %s", [Annotation._meta.db_table])
        return cursor.fetchone()


@pytest.fixture
def large_after_empty(make_project, tmp_path):
    """A project of 50,000 imported answers in a table whose statistics say it has pages but no rows:
    taken after an earlier project's answers were deleted, as autovacuum takes them."""
    earlier = _imported_project(make_project, tmp_path, slug="earlier", items=2_000)
    earlier.delete()
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Annotation._meta.db_table}")
    rows, pages = _planner_rows()
    assert rows == 0 and pages > 0  # what the planner then believes of the table
    return _imported_project(make_project, tmp_path, slug="large", items=ANSWERS // RATERS)


def _under_timeout() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL statement_timeout = '{STATEMENT_TIMEOUT}'")


@POSTGRES_ONLY
def test_the_report_reads_right_after_a_large_import_finish_under_a_statement_timeout(large_after_empty):
    """The cliff: without statistics the latest-version read ran for minutes; it is refused here past 5 s."""
    with transaction.atomic():
        _under_timeout()
        ratings = project_ratings(project=large_after_empty)
        assert ratings.n_units == ANSWERS // RATERS
        report = build_report(project=large_after_empty, parameters=ReportParameters(bootstrap=0))
        assert report.n_units == ANSWERS // RATERS
        assert len(report.human_raters) == RATERS


def _plans_of(action) -> list[tuple[str, str]]:
    """(statement, plan) of each SELECT, UPDATE or DELETE ``action`` sends, EXPLAINed as it was sent."""
    sent: list[tuple[str, tuple]] = []

    def record(execute, sql, params, many, context):
        if not many and sql.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE", "WITH")):
            sent.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        action()
    plans = []
    with connection.cursor() as cursor:
        for sql, params in sent:
            cursor.execute("EXPLAIN " + sql, params)
            plans.append((sql, "\n".join(row[0] for row in cursor.fetchall())))
    return plans


#: The tables where the large project has rows. It has no assignments (its answers were imported), so a
#: scan of the assignment table reads the small project's few rows only, and the planner rightly takes one
#: when earlier work left that table's statistics small.
SCANNED_TABLES = (Annotation._meta.db_table, "annotation_item")


def _sequential_scans(plans: list[tuple[str, str]]) -> list[str]:
    return [
        f"{sql}\n{plan}" for sql, plan in plans for table in SCANNED_TABLES if f"Seq Scan on {table} " in plan + " "
    ]


@POSTGRES_ONLY
def test_a_small_projects_report_and_workspace_never_scan_the_large_projects_rows(
    large_after_empty, make_project, make_user, tmp_path
):
    """Beside 50,000 answers of another project, a small project's report reads, claim and submit use
    indexes only: a sequential scan would read every row of the other project."""
    small = _imported_project(make_project, tmp_path, slug="small", items=30)
    annotator = make_user("claimer")
    membership_add(project=small, user=annotator, role=Role.ANNOTATOR)

    def report() -> None:
        build_report(project=small, parameters=ReportParameters(bootstrap=0))
        list(latest_annotations(project=small).values_list("item_id", "rater", "value"))

    def claim_and_submit() -> None:
        assignment = assignment_claim_next(project=small, user=annotator)
        assert assignment is not None
        assignment_submit(assignment=assignment, value=COPA.example_value())

    for action in (report, claim_and_submit):
        plans = _plans_of(action)
        assert any(table in sql for sql, _ in plans for table in SCANNED_TABLES)  # the statements were seen
        assert _sequential_scans(plans) == []

"""A whole existing study of a project's own design comes in with nobody annotating in Concord: its
items, every person's past answers by rater name and a model's run, each line checked against the
design (a bad line is named with its field, nothing stored); then gold and its export follow."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Annotation
from annotation.synthetic import write_jsonl
from judges.models import Suggestion
from tests.annotation.test_designs import LESIONS

pytestmark = pytest.mark.django_db
ITEMS = [{"external_id": f"r{n}", "fields": {"report": f"Report {n}."}, "meta": {"site": "A"}} for n in range(3)]
#: Two raters per item: they agree on r0 and r1, and are far apart on r2.
ANSWERS = [
    ("ada", "r0", 2, 1), ("bo", "r0", 2, 1),
    ("ada", "r1", 5, None), ("bo", "r1", 5, None),
    ("ada", "r2", 1, 0), ("bo", "r2", 6, 2),
]  # fmt: skip


def answer(rater: str, item: str, grade: int, fit: int | None) -> dict:
    ratings = {"grade": grade, **({"fit": fit} if fit is not None else {})}
    return {"rater": rater, "external_id": item, "value": {"ratings": ratings}}


@pytest.fixture
def study(make_project, tmp_path):
    project = make_project("rating", slug="lesions", design=LESIONS, overlap=2)
    call_command("import_items", project.slug, str(write_jsonl(tmp_path / "items.jsonl", ITEMS)))
    return project


def test_past_answers_come_in_by_rater_name_and_bad_lines_are_named(study, tmp_path):
    bad = [answer("ada", "r0", 2, 1), answer("bo", "r0", 7, 1)]
    with pytest.raises(CommandError) as refused:
        call_command("import_annotations", study.slug, str(write_jsonl(tmp_path / "bad.jsonl", bad)))
    assert "line 2" in str(refused.value) and "value.ratings.grade" in str(refused.value)
    assert not Annotation.objects.exists()
    call_command(
        "import_annotations", study.slug, str(write_jsonl(tmp_path / "a.jsonl", [answer(*a) for a in ANSWERS]))
    )
    assert set(Annotation.objects.values_list("rater", flat=True)) == {"ada", "bo"}


def test_a_model_s_run_is_checked_against_the_design(study, tmp_path):
    provenance = {"provenance": {"model": "summ-judge-7b", "prompt": "lesions.v1"}}
    outputs = [{"external_id": f"r{n}", "value": {"ratings": {"grade": n + 1}}} for n in range(3)]
    bad = [provenance, *outputs[:2], {"external_id": "r2", "value": {"ratings": {"fit": 1}}}]
    with pytest.raises(CommandError) as refused:
        call_command("import_run", study.slug, str(write_jsonl(tmp_path / "bad.jsonl", bad)), "--model", "m")
    assert "line 4" in str(refused.value) and "grade" in str(refused.value)
    assert not Suggestion.objects.exists()
    call_command("import_run", study.slug, str(write_jsonl(tmp_path / "run.jsonl", [provenance, *outputs])))
    assert Suggestion.objects.filter(status="ok").count() == 3


def test_gold_is_the_agreed_value_and_the_far_apart_item_waits_for_an_expert(study, tmp_path):
    call_command(
        "import_annotations", study.slug, str(write_jsonl(tmp_path / "a.jsonl", [answer(*a) for a in ANSWERS]))
    )
    out = tmp_path / "gold.jsonl"
    call_command("export_gold", study.slug, "--format", "jsonl", "-o", str(out))
    gold = {record["external_id"]: record for record in map(json.loads, out.read_text().splitlines())}
    assert set(gold) == {"r0", "r1"}  # r2: 1 against 6 on grade goes to adjudication
    assert gold["r0"]["gold"] == {"ratings": {"grade": 2, "fit": 1}}

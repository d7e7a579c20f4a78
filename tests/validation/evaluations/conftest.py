"""Fixtures of the evaluation tests: a CoPA project with pairs and runs, an IntentGrasp project with runs."""

from __future__ import annotations

import pytest

from annotation.models import Item
from tests.validation.conftest import annotate, copa_value, suggest

PROFILE = dict.fromkeys(("CT", "SA", "SC", "CLM", "MS", "AMR"), "apple banana")


def copa_item(project, external_id, pair_id, source, response):
    payload = {
        "profile": PROFILE,
        "question": "q?",
        "response": response,
        "response_source": source,
        "pair_id": pair_id,
    }
    return Item.objects.create(project=project, external_id=external_id, payload=payload)


@pytest.fixture
def copa(make_project, judge_run):
    """Three pairs and one incomplete pair; a factor-grounded run, a Jaccard baseline run."""
    project = make_project("copa_likert", slug="copa")
    items = {
        "p1": (
            copa_item(project, "p1-a", "p1", "accepted", "apple banana"),
            copa_item(project, "p1-t", "p1", "top-voted", "cherry"),
        ),
        "p2": (
            copa_item(project, "p2-a", "p2", "accepted", "cherry"),
            copa_item(project, "p2-t", "p2", "top-voted", "apple"),
        ),
        "p3": (
            copa_item(project, "p3-a", "p3", "accepted", "kiwi"),
            copa_item(project, "p3-t", "p3", "top-voted", "kiwi"),
        ),
    }
    copa_item(project, "lonely", "p4", "accepted", "x")
    llm = judge_run(project)
    # p1 win (9 vs 6), p2 tie (6 vs 6), p3: the judge failed on the top-voted answer.
    for item, scores in ((items["p1"][0], (2, 2, 2, 1, 1, 1)), (items["p1"][1], (1,)), (items["p2"][0], (1,)),
                         (items["p2"][1], (2, 1, 1, 1, 1, 0)), (items["p3"][0], (2,))):  # fmt: skip
        suggest(llm, item, copa_value(*scores))
    suggest(llm, items["p3"][1], None, failure="not JSON")
    baseline = judge_run(project, backend="baseline", prompt="copa_jaccard.v1")
    for accepted, top in items.values():
        suggest(baseline, accepted, copa_value(0))
        suggest(baseline, top, copa_value(0))
    return project, items, llm, baseline


MCQ_OPTIONS = ["To a.", "To b.", "To c.", "To d."]


def mcq_item(project, external_id, answers, dataset, domain, form):
    payload = {
        "context": f"text {external_id}",
        "context_type": form,
        "question": "Why?",
        "options": MCQ_OPTIONS,
        "answers": answers,
        "meta": {"dataset": dataset, "domain": domain},
    }
    return Item.objects.create(project=project, external_id=external_id, payload=payload)


@pytest.fixture
def mcq(make_project, judge_run):
    project = make_project("intent_mcq", slug="mcq")
    i1 = mcq_item(project, "i1", [0], "SNIPS", "daily life", "query")
    i2 = mcq_item(project, "i2", [0, 1], "SNIPS", "daily life", "query")
    i3 = mcq_item(project, "i3", [2], "SciCite", "writing", "monologue")
    plain = judge_run(project, seed=None)  # no shuffle
    suggest(plain, i1, {"chosen": [0]})  # F1 1
    suggest(plain, i2, {"chosen": [0]})  # F1 2/3
    suggest(plain, i3, None, failure="no answer")
    shuffled = judge_run(project, seed=7)
    suggest(shuffled, i1, {"chosen": [1]})  # F1 0
    suggest(shuffled, i2, {"chosen": [0, 1]})  # F1 1
    suggest(shuffled, i3, {"chosen": [2]})  # F1 1
    annotate(project, i1, "ann", {"chosen": [0]})  # people: 1 and 0.5
    annotate(project, i2, "ann", {"chosen": [1, 2]})
    return project, plain, shuffled

"""Agreement of a project's own design is measured per dimension or question at the declared level:
the numbers are the libraries' own on the same ratings (krippendorff's ordinal alpha for a rating
design, statsmodels' Fleiss kappa for a label set), and estimates, gold and routing follow the design."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotation.importing import import_items
from annotation.services import annotation_submit
from annotation.synthetic import write_jsonl
from validation.adjudication import AdjudicationRules, item_disagreements
from validation.reports.tables import ReportParameters
from validation.selectors import project_dimension_agreement

RATERS = ("r1", "r2", "r3")
ITEMS = 15
#: Four dimensions, 1 to 5 (SummEval's), over one shown text.
SUMMEVAL = {
    "fields": [{"name": "summary", "title": "Summary"}],
    "dimensions": [{"name": name, "min": 1, "max": 5} for name in ("coherence", "consistency", "fluency", "relevance")],
}
#: One question of three labels (MT-Bench's pairwise verdict).
VERDICT = {
    "fields": [{"name": "question"}, {"name": "answer_a"}, {"name": "answer_b"}],
    "questions": [
        {
            "name": "verdict",
            "labels": [{"value": v, "text": v} for v in ("model_a", "model_b", "tie")],
        }
    ],
}


def _project(make_project, make_user, tmp_path, kind: str, design: dict, fields: list[str]):
    project = make_project(kind, design=design, overlap=len(RATERS))
    records = [{"external_id": f"i{n}", "fields": {f: f"text {n}" for f in fields}} for n in range(ITEMS)]
    import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", records))
    users = [make_user(name) for name in RATERS]
    return project, users


@pytest.mark.django_db
def test_a_rating_design_s_alpha_is_krippendorff_s_ordinal_alpha(make_project, make_user, tmp_path):
    project, users = _project(make_project, make_user, tmp_path, "rating", SUMMEVAL, ["summary"])
    rng = np.random.default_rng(7)
    names = [d["name"] for d in SUMMEVAL["dimensions"]]
    # Raters near a shared truth, so agreement is neither 0 nor 1; every point of the scale occurs.
    truth = rng.integers(1, 6, size=(ITEMS, len(names)))
    given = np.clip(truth[None, :, :] + rng.integers(-1, 2, size=(len(RATERS), ITEMS, len(names))), 1, 5)
    for item in project.items.all():
        n = int(item.external_id[1:])
        for rater_index, user in enumerate(users):
            value = {"ratings": {name: int(given[rater_index, n, d]) for d, name in enumerate(names)}}
            annotation_submit(item=item, user=user, value=value)
    found = project_dimension_agreement(project=project, parameters=ReportParameters())
    assert list(found) == names
    for d, name in enumerate(names):
        expected = krippendorff.alpha(reliability_data=given[:, :, d].astype(float), level_of_measurement="ordinal")
        assert found[name].level == "ordinal"
        assert found[name].krippendorff_alpha.statistic == pytest.approx(expected, abs=1e-12)
        assert found[name].n_units == ITEMS and found[name].n_raters == len(RATERS)


@pytest.mark.django_db
def test_a_label_set_s_fleiss_kappa_is_statsmodels(make_project, make_user, tmp_path):
    project, users = _project(
        make_project, make_user, tmp_path, "categorical", VERDICT, ["question", "answer_a", "answer_b"]
    )
    labels = ["model_a", "model_b", "tie"]
    rng = np.random.default_rng(11)
    given = rng.choice(3, size=(ITEMS, len(RATERS)), p=[0.5, 0.3, 0.2])
    given[:, 1] = np.where(rng.random(ITEMS) < 0.6, given[:, 0], given[:, 1])  # some agreement
    for item in project.items.all():
        n = int(item.external_id[1:])
        for rater_index, user in enumerate(users):
            annotation_submit(item=item, user=user, value={"labels": {"verdict": labels[given[n, rater_index]]}})
    found = project_dimension_agreement(project=project, parameters=ReportParameters())
    table, _categories = aggregate_raters(given)
    assert found["verdict"].level == "nominal"
    assert found["verdict"].fleiss_kappa.statistic == pytest.approx(fleiss_kappa(table, method="fleiss"), abs=1e-12)


def routed(kind, rules, first: dict, second: dict) -> list[str]:
    return item_disagreements(kind=kind, payload={}, values={"ann1": first, "ann2": second}, rules=rules)


@pytest.mark.django_db
def test_routing_follows_the_design(make_project):
    ratings = make_project("rating", design=SUMMEVAL).task_kind
    rules = AdjudicationRules.from_json(None, kind=ratings)
    threes = {"ratings": dict.fromkeys(("coherence", "consistency", "fluency", "relevance"), 3)}
    assert routed(ratings, rules, threes, threes) == []
    # One point apart on 1-5 is not routed; two points apart goes to an expert (ordinal distance).
    assert routed(ratings, rules, threes, {"ratings": {**threes["ratings"], "fluency": 4}}) == []
    assert routed(ratings, rules, threes, {"ratings": {**threes["ratings"], "fluency": 5}})
    labels = make_project("categorical", design=VERDICT).task_kind
    label_rules = AdjudicationRules.from_json(None, kind=labels)
    tie = {"labels": {"verdict": "tie"}}
    assert routed(labels, label_rules, tie, {**tie, "comment": "close"}) == []  # a comment is no disagreement
    assert routed(labels, label_rules, tie, {"labels": {"verdict": "model_a"}})


@pytest.mark.django_db
def test_estimates_take_a_dimension_s_mean_and_a_label_s_share(make_project):
    ratings = make_project("rating", design=SUMMEVAL).task_kind
    fours = dict.fromkeys(("coherence", "consistency", "fluency", "relevance"), 4)
    assert ratings.estimate_numbers({"ratings": fours}, None) == {name: 4.0 for name in fours}
    labels = make_project("categorical", design=VERDICT).task_kind
    shares = {"verdict.model_a": 0.0, "verdict.model_b": 0.0, "verdict.tie": 1.0}
    assert labels.estimate_numbers({"labels": {"verdict": "tie"}}, None) == shares


@pytest.mark.django_db
def test_a_designed_project_s_report_is_frozen_and_checks_and_names_its_dimensions(make_project, make_user, tmp_path):
    from validation.reports import build_report
    from validation.services import render_report, report_snapshot_check, report_snapshot_create

    project, users = _project(make_project, make_user, tmp_path, "rating", SUMMEVAL, ["summary"])
    for n, item in enumerate(project.items.order_by("pk")):
        for r, user in enumerate(users):
            ratings = {d["name"]: 1 + (n + r * (i + 1)) % 5 for i, d in enumerate(SUMMEVAL["dimensions"])}
            annotation_submit(item=item, user=user, value={"ratings": ratings})
    snapshot = report_snapshot_create(project=project, parameters=ReportParameters(bootstrap=50, seed=1))
    check = report_snapshot_check(snapshot=snapshot)
    assert (check.inputs_match, check.numbers_match, check.error) == (True, True, "")
    markdown = render_report(build_report(project=project, parameters=ReportParameters()), "md")
    assert all(title in markdown for title in ("Coherence", "Consistency", "Fluency", "Relevance"))

"""``estimate``: a project's estimates from the database, against ppi_py on the same arrays."""

import json

import numpy as np
import ppi_py
import pytest
from django.core.management import execute_from_command_line

from annotation.models import SampleItem
from annotation.sampling import validation_sample_draw
from tests.validation.conftest import add_items, annotate, copa_value, run_command, suggest
from validation.estimates.build import UNIFORM_NOTE
from validation.models import ReportSnapshot

pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.usefixtures("keep_test_connection")]
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_command(capsys, "estimate", *argv)


@pytest.fixture
def copa(make_project, judge_run):
    """120 responses in two sources; the model scores one point higher than people where it can, and
    fails on three items."""
    project = make_project("copa_likert")
    rng = np.random.default_rng(7)
    payload = project.task_kind.example_payload()
    items = {}
    for number in range(120):
        source = "accepted" if number % 3 else "model-a"
        items.update(add_items(project, [f"r{number:03d}"], {**payload, "response_source": source}))
    run_ = judge_run(project)
    truths = {}
    for number, item in enumerate(items.values()):
        truth = rng.integers(0, 3, 6)
        truths[item.pk] = truth
        model = np.minimum(truth + (rng.random(6) < 0.6), 2)
        if number < 3:
            suggest(run_, item, None, failure="not json")
        else:
            suggest(run_, item, copa_value(*map(int, model)))
    return project, run_, items, truths, rng


def label(project, items, truths, rng, item_ids):
    """Two raters per item; each rater's score is the truth or a neighbour of it."""
    people = {}
    for item in items.values():
        if item.pk not in item_ids:
            continue
        values = []
        for rater in ("ann", "bob"):
            scores = np.clip(truths[item.pk] + rng.integers(-1, 2, 6) * (rng.random(6) < 0.2), 0, 2)
            annotate(project, item, rater, copa_value(*map(int, scores)))
            values.append(scores)
        people[item.pk] = np.mean(values, axis=0)
    return people


def model_scores(run_):
    from judges.selectors import suggestion_values

    return {
        item_id: np.array([value["scores"][f] for f in FACTORS], float)
        for item_id, value in suggestion_values(run_id=run_.pk)
    }


class EstimateCommandTests:
    def test_json_matches_ppi_py_on_the_same_arrays_for_every_dimension(self, copa, capsys):
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=40, seed=3)
        sampled = set(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True))
        people = label(project, items, truths, rng, sampled)
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk), "--alpha", "0.1")
        assert code == 0, err
        payload = json.loads(out)
        assert {k: payload[k] for k in ("project", "run", "alpha", "truth", "sampled_by_concord")} == {
            "project": project.slug, "run": run_.pk, "alpha": 0.1, "truth": "mean", "sampled_by_concord": True
        }  # fmt: skip
        model = model_scores(run_)
        labelled = sorted(i for i in people if i in model)
        unlabelled = sorted(i for i in model if i not in people)
        assert (payload["n_labeled"], payload["n_unlabeled"], payload["n_model_failed"]) == (
            len(labelled), len(unlabelled), 3
        )  # fmt: skip
        entries = {e["dimension"]: e for e in payload["estimates"]}
        assert list(entries) == [*FACTORS, "S"]
        for column, name in [*enumerate(FACTORS), (None, "S")]:

            def pick(values, ids, column=column):
                rows = np.array([values[i] for i in ids])
                return rows.sum(axis=1) / 12 if column is None else rows[:, column]

            y, yhat, yhat_u = pick(people, labelled), pick(model, labelled), pick(model, unlabelled)
            entry = entries[name]
            low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=None)
            point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)
            powered = entry["prediction_powered"]
            assert powered["estimate"] == pytest.approx(point[0]) and powered["ci"] == pytest.approx([low[0], high[0]])
            assert ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.1, lam=powered["lambda"])[0][0] == pytest.approx(low[0])
            assert entry["people_only"]["n"] == len(labelled)
            assert entry["people_only"]["estimate"] == pytest.approx(y.mean())
            assert entry["model_only"] == {"estimate": pytest.approx(np.concatenate([yhat, yhat_u]).mean())}

    def test_stratified_samples_are_weighted_by_inclusion_probability(self, copa, capsys):
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=30, seed=5, strata="response_source", allocation="equal")
        sampled = set(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True))
        people = label(project, items, truths, rng, sampled)
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk))
        payload = json.loads(out)
        model = model_scores(run_)
        pi = {s: info["probability"] for s, info in draw.strata.items()}
        source = {item.pk: item.payload["response_source"] for item in items.values()}
        labelled = sorted(i for i in people if i in model)
        unlabelled = sorted(i for i in model if i not in people)
        w = np.array([1 / pi[source[i]] for i in labelled])
        w_u = np.array([1 / (1 - pi[source[i]]) for i in unlabelled])
        y = np.array([people[i][0] for i in labelled])
        yhat, yhat_u = np.array([model[i][0] for i in labelled]), np.array([model[i][0] for i in unlabelled])
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=None, w=w, w_unlabeled=w_u)
        ct = payload["estimates"][0]
        assert ct["dimension"] == "CT" and ct["prediction_powered"]["ci"] == pytest.approx([low[0], high[0]])

    def test_groups_and_differences_and_the_uniform_sample_warning(self, copa, capsys):
        project, run_, items, truths, rng = copa
        label(project, items, truths, rng, {item.pk for n, item in enumerate(items.values()) if n % 4 == 0})
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk), "--by", "response_source")
        payload = json.loads(out)
        assert payload["sampled_by_concord"] is False and UNIFORM_NOTE in payload["notes"]
        groups = [e["group"] for e in payload["estimates"] if e["dimension"] == "CT"]
        assert groups == [None, "accepted", "model-a"]
        difference = payload["differences"][0]
        assert difference["groups"] == ["accepted", "model-a"] and difference["dimension"] == "CT"
        assert set(difference) >= {"model_only", "people_only", "prediction_powered"}
        code, markdown, err = run(capsys, project.slug, "--run", str(run_.pk), "--format", "md")
        assert code == 0 and UNIFORM_NOTE in markdown

    def test_freeze_stores_a_snapshot_that_checks(self, copa, capsys):
        project, run_, items, truths, rng = copa
        label(project, items, truths, rng, {item.pk for n, item in enumerate(items.values()) if n % 3 == 0})
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk), "--freeze")
        snapshot = ReportSnapshot.objects.get(pk=json.loads(out)["snapshot"])
        assert snapshot.evaluation == "estimates" and "ppi-python" in snapshot.library_versions
        code, out, err = run(capsys, project.slug, "--check", str(snapshot.pk))
        checked = json.loads(out)
        assert checked["numbers_match"] and checked["inputs_match"]

    def test_a_run_of_another_project_exits_1_and_a_bad_alpha_2(self, copa, capsys, make_project, judge_run):
        project, run_, *_ = copa
        other = make_project("copa_likert", slug="other")
        add_items(other, ["x"])
        other_run = judge_run(other)
        code, out, err = run(capsys, project.slug, "--run", str(other_run.pk))
        assert code == 1 and "does not exist" in err
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk), "--alpha", "0.9")
        assert code == 2 and "argument --alpha" in err  # a value outside its cap is a usage error


class PlanSampleCommandTests:
    def plan(self, capsys, *argv):
        try:
            execute_from_command_line(["manage.py", "plan_sample", *argv])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    def test_the_plan_from_the_sample_needs_fewer_labels_with_the_model(self, copa, capsys):
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=40, seed=3)
        label(project, items, truths, rng, set(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True)))
        code, out, err = self.plan(capsys, project.slug, "--run", str(run_.pk), "--half-width", "0.1")
        assert code == 0, err
        payload = json.loads(out)
        assert list(payload) == ["half_width", "alpha", "people_only_n", "prediction_powered_n", "basis"]
        assert payload["basis"].startswith("sample of 40")
        assert payload["prediction_powered_n"] <= payload["people_only_n"]

    def test_without_labels_stated_values_are_needed(self, copa, capsys):
        project, run_, *_ = copa
        code, out, err = self.plan(capsys, project.slug, "--run", str(run_.pk), "--half-width", "0.05")
        assert code == 1 and "state people's standard deviation" in err
        argv = (project.slug, "--run", str(run_.pk), "--half-width", "0.02", "--sd", "0.5", "--correlation", "0.8")
        code, out, err = self.plan(capsys, *argv)
        payload = json.loads(out)
        assert payload["people_only_n"] == 2401 and payload["basis"].startswith("stated values")


class TruthGoldTests:
    def test_truth_gold_takes_each_items_gold(self, copa, capsys):
        project, run_, items, truths, rng = copa
        chosen = list(items.values())[10:40]
        for item in chosen:
            for rater in ("ann", "bob"):  # the raters agree: the majority is the gold
                annotate(project, item, rater, copa_value(*map(int, truths[item.pk])))
        annotate(project, chosen[0], "cat", copa_value(0))  # a third rater changes the mean, not the gold
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk), "--truth", "gold")
        payload = json.loads(out)
        ct = payload["estimates"][0]
        assert payload["truth"] == "gold" and ct["people_only"]["n"] == 30
        assert ct["people_only"]["estimate"] == pytest.approx(np.mean([truths[item.pk][0] for item in chosen]))

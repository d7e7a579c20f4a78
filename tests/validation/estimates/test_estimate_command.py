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
from validation.estimates.entries import PARTLY_LABELLED
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

    def test_stratified_samples_are_weighted_by_the_labelled_share_of_each_stratum(self, copa, capsys):
        """Pooled weights N_h / n_h (labelled) and N_h / (N_h - n_h) (unlabelled) over the items the run
        answered; people only is the stratified mean with Σ W_h² s_h² / n_h (1 - n_h / N_h); stratified
        PPI combines each stratum's ppi_py interval with the same shares."""
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=30, seed=5, strata="response_source", allocation="equal")
        sampled = set(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True))
        people = label(project, items, truths, rng, sampled)
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk))
        payload = json.loads(out)
        model = model_scores(run_)
        source = {item.pk: item.payload["response_source"] for item in items.values()}
        labelled = sorted(i for i in people if i in model)
        unlabelled = sorted(i for i in model if i not in people)
        size = {s: sum(source[i] == s for i in model) for s in ("accepted", "model-a")}
        n_h = {s: sum(source[i] == s for i in labelled) for s in size}
        w = np.array([size[source[i]] / n_h[source[i]] for i in labelled])
        w_u = np.array([size[source[i]] / (size[source[i]] - n_h[source[i]]) for i in unlabelled])
        y = np.array([people[i][0] for i in labelled])
        yhat, yhat_u = np.array([model[i][0] for i in labelled]), np.array([model[i][0] for i in unlabelled])
        low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=None, w=w, w_unlabeled=w_u)
        ct = payload["estimates"][0]
        assert ct["dimension"] == "CT" and ct["prediction_powered"]["ci"] == pytest.approx([low[0], high[0]])
        share = {s: size[s] / sum(size.values()) for s in size}
        means, variances, powered, powered_var = {}, {}, {}, {}
        z = 1.959963984540054
        for s in size:
            ys = np.array([people[i][0] for i in labelled if source[i] == s])
            means[s] = ys.mean()
            variances[s] = ys.var(ddof=1) / len(ys) * (1 - len(ys) / size[s])
            lab = [i for i in labelled if source[i] == s]
            unl = [i for i in unlabelled if source[i] == s]
            args = (ys, np.array([model[i][0] for i in lab]), np.array([model[i][0] for i in unl]))
            lo, hi = ppi_py.ppi_mean_ci(*args, alpha=0.05, lam=None)
            powered[s] = float(ppi_py.ppi_mean_pointestimate(*args, lam=None)[0])
            powered_var[s] = ((hi[0] - lo[0]) / (2 * z)) ** 2
        estimate = sum(share[s] * means[s] for s in size)
        half = z * np.sqrt(sum(share[s] ** 2 * variances[s] for s in size))
        assert ct["people_only"]["estimate"] == pytest.approx(estimate)
        assert ct["people_only"]["ci"] == pytest.approx([estimate - half, estimate + half])
        by_strata = ct["prediction_powered_stratified"]
        estimate = sum(share[s] * powered[s] for s in size)
        half = z * np.sqrt(sum(share[s] ** 2 * powered_var[s] for s in size))
        assert by_strata["estimate"] == pytest.approx(estimate)
        assert by_strata["ci"] == pytest.approx([estimate - half, estimate + half])
        assert set(by_strata["lambda"]) == {"accepted", "model-a"}
        people_half = (ct["people_only"]["ci"][1] - ct["people_only"]["ci"][0]) / 2
        assert by_strata["effective_n"] == round(len(labelled) * (people_half / half) ** 2)

    def test_a_partly_labelled_stratum_is_weighted_by_its_labelled_share_and_warned(self, copa, capsys):
        """By hand: stratum "accepted" has 78 answered items with 10 of its 15 drawn labelled, "model-a"
        39 with all 15; the people-only mean weighs each stratum's labelled mean by its size."""
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=30, seed=5, strata="response_source", allocation="equal")
        drawn = SampleItem.objects.filter(draw=draw).order_by("item_id")
        accepted = [s.item_id for s in drawn if s.stratum == "accepted"]
        others = [s.item_id for s in drawn if s.stratum == "model-a"]
        people = label(project, items, truths, rng, set(accepted[:10]) | set(others))
        code, out, err = run(capsys, project.slug, "--run", str(run_.pk))
        payload = json.loads(out)
        model = model_scores(run_)
        source = {item.pk: item.payload["response_source"] for item in items.values()}
        size = {s: sum(source[i] == s for i in model) for s in ("accepted", "model-a")}
        mean = {s: np.mean([people[i][0] for i in people if source[i] == s and i in model]) for s in size}
        expected = sum(size[s] * mean[s] for s in size) / sum(size.values())
        ct = payload["estimates"][0]
        assert ct["people_only"]["estimate"] == pytest.approx(expected)
        labelled_accepted = sum(1 for i in accepted[:10] if i in model)
        drawn_accepted = sum(1 for i in accepted if i in model)
        warning = PARTLY_LABELLED.format(name="accepted", labelled=labelled_accepted, sampled=drawn_accepted)
        assert warning in ct["warnings"] and warning in payload["notes"]

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
        code, out, err = self.plan(capsys, project.slug, "--run", str(run_.pk), "--half-width", "0.3")
        assert code == 0, err
        payload = json.loads(out)
        assert list(payload) == [
            "half_width", "alpha", "people_only_n", "prediction_powered_n", "prediction_powered_reason",
            "prediction_powered_dimension", "people_only_dimension", "population", "basis",
        ]  # fmt: skip
        assert payload["basis"].startswith("sample of 40")
        assert payload["prediction_powered_n"] <= payload["people_only_n"]

    def test_every_dimension_is_planned_and_each_way_takes_the_largest_naming_it(self, copa, capsys):
        """By hand, dimension by dimension (ppi_py's power analysis on each factor's labelled pairs): the
        plan's people-only n is the largest people-only n of any factor, its prediction-powered n the
        largest prediction-powered n, each named; here CT is made to need the most people-only labels
        (its model tracks people exactly), SA the most prediction-powered ones (its model is noise), and
        SC fewer of both (a rarer label, its model noise too)."""
        project, run_, items, truths, rng = copa
        draw = validation_sample_draw(project=project, n=60, seed=3)
        sampled = sorted(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True))
        for at, item_id in enumerate(sampled):
            item = next(i for i in items.values() if i.pk == item_id)
            annotate(project, item, "ann", copa_value(at % 2 * 2, at % 3, int(at % 4 == 0), 1, 1, 1))
        from judges.models import Suggestion

        for at, suggestion in enumerate(Suggestion.objects.filter(run=run_, status="ok").order_by("item_id")):
            people_ct = (sampled.index(suggestion.item_id) if suggestion.item_id in sampled else at) % 2 * 2
            suggestion.value = copa_value(people_ct, int(rng.integers(0, 3)), int(rng.integers(0, 2)), 1, 1, 1)
            suggestion.save(update_fields=["value"])
        from validation.estimates.inference import plan_from_sample
        from validation.estimates.planning import project_plan

        model = model_scores(run_)
        labelled = [i for i in sampled if i in model]
        human = {name: np.array(v, float) for name, v in (
            ("CT", [sampled.index(i) % 2 * 2 for i in labelled]), ("SA", [sampled.index(i) % 3 for i in labelled]),
            ("SC", [int(sampled.index(i) % 4 == 0) for i in labelled]),
        )}  # fmt: skip
        by_hand = {
            name: plan_from_sample(
                human[name], np.array([model[i][column] for i in labelled]), half_width=0.3, alpha=0.05,
                population=len(model),
            )
            for column, name in ((0, "CT"), (1, "SA"), (2, "SC"))
        }  # fmt: skip
        plan = project_plan(project=project, run=run_.pk, half_width=0.3)
        assert plan.people_only_dimension == "CT" and plan.dimension == "SA"
        assert (
            plan.result.people_only_n == max(p.people_only_n for p in by_hand.values()) == by_hand["CT"].people_only_n
        )
        assert plan.result.prediction_powered_n == max(p.prediction_powered_n for p in by_hand.values())
        assert (
            plan.result.prediction_powered_n == by_hand["SA"].prediction_powered_n > by_hand["CT"].prediction_powered_n
        )
        assert by_hand["SC"].people_only_n < by_hand["SA"].people_only_n
        assert "prediction-powered: dimension SA, people only: dimension CT" in plan.basis

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

"""Estimates of a project's own design: the share of each label (a label set) and the mean of each
dimension (a rating scale), by the same prediction-powered machinery as the papers' kinds and equal
to ppi_py's on the same arrays."""

import json

import numpy as np
import ppi_py
import pytest

from annotation.models import SampleItem
from annotation.sampling import validation_sample_draw
from tests.validation.conftest import add_items, annotate, run_command, suggest
from tests.validation.unit.test_designed_agreement import VERDICT

pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.usefixtures("keep_test_connection")]
LABELS = ("model_a", "model_b", "tie")


def test_the_share_of_a_label_is_estimated_as_ppi_py_estimates_a_mean(make_project, judge_run, capsys):
    project = make_project("categorical", design=VERDICT)
    rng = np.random.default_rng(5)
    items = add_items(project, [f"q{n:03d}" for n in range(90)])
    run_ = judge_run(project)
    truth = {item.pk: LABELS[rng.choice(3, p=[0.5, 0.3, 0.2])] for item in items.values()}
    model = {}
    for item in items.values():
        # The model says model_a more often than people do.
        model[item.pk] = "model_a" if rng.random() < 0.3 else truth[item.pk]
        suggest(run_, item, {"labels": {"verdict": model[item.pk]}})
    draw = validation_sample_draw(project=project, n=40, seed=2)
    sampled = sorted(SampleItem.objects.filter(draw=draw).values_list("item_id", flat=True))
    people = {}
    for item in items.values():
        if item.pk in sampled:
            given = [truth[item.pk], truth[item.pk] if rng.random() < 0.8 else "tie"]
            for rater, label in zip(("ann", "bob"), given, strict=True):
                annotate(project, item, rater, {"labels": {"verdict": label}})
            people[item.pk] = given
    code, out, err = run_command(capsys, "estimate", project.slug, "--run", str(run_.pk))
    assert code == 0, err
    entries = {e["dimension"]: e for e in json.loads(out)["estimates"]}
    assert list(entries) == [f"verdict.{label}" for label in LABELS]
    unlabelled = sorted(i for i in model if i not in people)
    for label in LABELS:
        y = np.array([np.mean([given == label for given in people[i]]) for i in sampled])
        yhat = np.array([float(model[i] == label) for i in sampled])
        yhat_u = np.array([float(model[i] == label) for i in unlabelled])
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yhat_u, lam=None)
        assert entries[f"verdict.{label}"]["prediction_powered"]["estimate"] == pytest.approx(point[0])
        assert entries[f"verdict.{label}"]["people_only"]["estimate"] == pytest.approx(y.mean())

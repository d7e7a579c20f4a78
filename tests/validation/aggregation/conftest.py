import numpy as np
import pytest

from tests.validation.conftest import add_items, annotate, copa_value, suggest

PEOPLE = ("ann", "bob", "spammer")


@pytest.fixture
def panel(make_project, judge_run):
    """A CoPA project: 40 responses, two careful people, a spammer, and a judge run on every item."""
    project = make_project("copa_likert", slug="panel", overlap=3)
    items = add_items(project, [f"r{n:02d}" for n in range(40)])
    rng = np.random.default_rng(3)
    run_ = judge_run(project)
    for item in items.values():
        truth = rng.integers(0, 3, 6)
        for rater in PEOPLE:
            if rater == "spammer":
                scores = rng.integers(0, 3, 6)
            else:
                scores = np.where(rng.random(6) < 0.85, truth, rng.integers(0, 3, 6))
            annotate(project, item, rater, copa_value(*map(int, scores)))
        suggest(run_, item, copa_value(*map(int, truth)))
    return project, run_

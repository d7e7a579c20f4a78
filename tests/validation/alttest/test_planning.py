"""The planner: the authors' simulation, its extremes, its seed and its caps; the command's exits."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.api.conftest import client_for
from tests.validation.conftest import run_command
from validation.alttest.planning import PlanParameters, _noisy_labels, parse_sizes, simulate_plan


def _plan(**changes) -> PlanParameters:
    base = dict(
        categories=4, raters=3, rater_noise=0.3, model_noise=0.3, epsilon=0.2, sizes=(30, 60), datasets=3, boots=4
    )
    return PlanParameters(**{**base, **changes})


class SimulationTests:
    def test_a_perfect_model_beside_noisy_people_always_passes(self):
        points = simulate_plan(_plan(rater_noise=0.6, model_noise=0.0, sizes=(100,)))
        assert points[0].pass_share == 1.0 and points[0].n_simulations == 12

    def test_a_guessing_model_beside_perfect_people_never_passes(self):
        points = simulate_plan(_plan(rater_noise=0.0, model_noise=1.0))
        assert [p.pass_share for p in points] == [0.0, 0.0]

    def test_the_seed_fixes_the_plan(self):
        assert simulate_plan(_plan(seed=5)) == simulate_plan(_plan(seed=5))

    def test_labels_follow_the_noise_model(self):
        rng = np.random.default_rng(0)
        priors = np.asarray([0.7, 0.2, 0.1])
        gold = np.zeros(20_000, dtype=np.intp)
        labels = _noisy_labels(rng, priors, gold, 0.5, 1)[:, 0]
        # P(label = gold) = noise * prior + (1 - noise); the rest by the priors.
        expected = 0.5 * priors + 0.5 * np.asarray([1.0, 0, 0])
        assert np.bincount(labels, minlength=3) / len(labels) == pytest.approx(expected, abs=0.01)


class OptionTests:
    def test_sizes_are_a_range_with_both_ends_or_a_list(self):
        assert parse_sizes("30:200:10") == tuple(range(30, 201, 10))
        assert parse_sizes("30,50,100") == (30, 50, 100)
        with pytest.raises(ValueError):
            parse_sizes("30:20:10")

    @pytest.mark.parametrize(
        "changes",
        [
            {"categories": 1},
            {"raters": 1},
            {"rater_noise": 1.5},
            {"sizes": (10,)},
            {"sizes": (600,)},
            {"datasets": 201},
            {"epsilon": 2.0},
            {"datasets": 200, "boots": 100, "sizes": (30, 40, 50)},
        ],
    )
    def test_bad_values_are_refused(self, changes):
        with pytest.raises(ValueError):
            _plan(**changes).check()


#: A plan small enough for a test: 3 sizes x 2 data sets x 2 draws.
SMALL_PLAN = {
    "categories": 3,
    "raters": 3,
    "rater_noise": 0.2,
    "model_noise": 0.2,
    "epsilon": 0.2,
    "sizes": "30:50:10",
    "datasets": 2,
    "boots": 2,
    "seed": 1,
}
SMALL_ARGV = [f"--{name.replace('_', '-')}={value}" for name, value in SMALL_PLAN.items()]


class CommandTests:
    def test_the_command_prints_the_share_passed_per_size(self, capsys):
        argv = SMALL_ARGV
        code, out, err = run_command(capsys, "alt_test_plan", *argv)
        assert code == 0, err
        result = json.loads(out)
        assert [p["size"] for p in result["sizes"]] == [30, 40, 50]
        assert all(0 <= p["pass_share"] <= 1 and p["n_simulations"] == 4 for p in result["sizes"])
        code, out, _ = run_command(capsys, "alt_test_plan", *argv, "--format=md")
        assert code == 0 and "| 40 |" in out

    def test_bad_values_exit_1_and_missing_ones_2(self, capsys):
        assert (
            run_command(
                capsys, "alt_test_plan", "--categories=3", "--raters=3", "--rater-noise=2", "--model-noise=0.2"
            )[0]
            == 1
        )
        assert run_command(capsys, "alt_test_plan", "--categories=3")[0] == 2


@pytest.fixture
def project_and_researcher(make_project, make_user):
    from annotation.models import Role
    from annotation.services import membership_add

    project = make_project("copa_likert")
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    return project, researcher


@pytest.mark.django_db
class PlanPageAndApiTests:
    def test_the_page_and_the_api_give_the_commands_plan(
        self, project_and_researcher, client, capsys, keep_test_connection
    ):
        project, researcher = project_and_researcher
        query = SMALL_PLAN
        argv = SMALL_ARGV
        code, out, err = run_command(capsys, "alt_test_plan", *argv)
        assert code == 0, err
        response = client_for(researcher).get(f"/api/projects/{project.slug}/evaluations/alt-test-plan/", query)
        assert response.status_code == 200 and response.json() == json.loads(out)
        client.force_login(researcher)
        page = client.get(f"/p/{project.slug}/evaluations/alt-test-plan/", query)
        assert page.status_code == 200 and "How many items" in page.content.decode()

    def test_a_request_runs_at_most_two_thousand_simulations(self, project_and_researcher):
        project, researcher = project_and_researcher
        query = {
            "categories": 3,
            "raters": 3,
            "rater_noise": 0.2,
            "model_noise": 0.2,
            "epsilon": 0.2,
            "sizes": "30:200:10",
            "datasets": 20,
            "boots": 10,
        }
        response = client_for(researcher).get(f"/api/projects/{project.slug}/evaluations/alt-test-plan/", query)
        assert response.status_code == 400 and "2,000" in response.content.decode()

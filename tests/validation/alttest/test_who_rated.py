"""Agreement by who rated and calibration, against the libraries computing the same numbers."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from validation.alttest.who_rated import NO_SCORED_UNITS, calibration, people_majority, who_rated


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    people = rng.integers(0, 3, size=(60, 3)).astype(float)
    people[rng.random((60, 3)) < 0.1] = np.nan
    runs = {"1": {"d": people[:, 0].copy()}, "2": {"d": rng.integers(0, 3, 60).astype(float)}}
    runs["1"]["d"][:5] = np.nan
    return people, runs


class WhoRatedTests:
    def test_alphas_are_krippendorffs_on_each_rater_set(self, data):
        people, runs = data
        (entry,) = who_rated({"d": people}, {"d": "ordinal"}, runs, ["a", "b", "c"], bootstrap=0, seed=0)
        expected = krippendorff.alpha(reliability_data=people.T, level_of_measurement="ordinal")
        assert entry.people.statistic == pytest.approx(expected)
        swapped = people.copy()
        swapped[:, 1] = runs["2"]["d"]
        in_place = next(r for r in entry.runs_in_place if r.run == "2" and r.replaced == "b")
        assert in_place.alpha.statistic == pytest.approx(
            krippendorff.alpha(reliability_data=swapped.T, level_of_measurement="ordinal")
        )
        assert len(entry.runs_in_place) == 6
        ((a, b, alpha),) = entry.run_pairs
        pair = np.vstack([runs["1"]["d"], runs["2"]["d"]])
        assert (a, b) == ("1", "2")
        assert alpha.statistic == pytest.approx(
            krippendorff.alpha(reliability_data=pair, level_of_measurement="ordinal")
        )

    def test_every_figure_has_its_interval(self, data):
        people, runs = data
        (entry,) = who_rated({"d": people}, {"d": "nominal"}, runs, ["a", "b", "c"], bootstrap=40, seed=1)
        for result in (entry.people, *(r.alpha for r in entry.runs_in_place), entry.run_pairs[0][2]):
            low, high = result.confidence_interval
            assert low <= high

    def test_one_person_gives_a_reason_not_a_number(self, data):
        people, runs = data
        (entry,) = who_rated({"d": people[:, :1]}, {"d": "nominal"}, runs, ["a"], bootstrap=0, seed=0)
        assert entry.people.statistic is None and entry.people.reason


class CalibrationTests:
    def test_ece_and_brier_equal_scikit_learns_reliability_curve_and_brier_loss(self):
        rng = np.random.default_rng(11)
        people = rng.integers(0, 2, size=(400, 3)).astype(float)
        majority, tied = people_majority(people)
        labels = np.where(
            rng.random(400) < 0.7, np.asarray(majority, dtype=float), 1 - np.asarray(majority, dtype=float)
        )
        # Scores off the bin edges, where the two binnings agree.
        scores = np.round(rng.random(400), 3) * 0.98 + 0.005
        result = calibration("1", "pooled", labels, scores, majority, tied)
        right = (labels == np.asarray(majority, dtype=float)).astype(float)
        assert result.n_units == 400 and result.n_ties == 0
        assert result.brier == pytest.approx(brier_score_loss(right, scores))
        accuracy, confidence = calibration_curve(right, scores, n_bins=10, strategy="uniform")
        counts = np.histogram(scores, bins=np.linspace(0, 1, 11))[0]
        counts = counts[counts > 0]
        assert result.ece == pytest.approx(np.sum(counts / counts.sum() * np.abs(accuracy - confidence)))
        filled = [b for b in result.bins if b.n]
        assert [b.accuracy for b in filled] == pytest.approx(list(accuracy))
        assert len(result.bins) == 10

    def test_ties_among_the_people_are_left_out_and_counted(self):
        people = np.asarray([[0, 1, np.nan], [1, 1, 0], [0, 0, 1]], dtype=float)
        majority, tied = people_majority(people)
        assert list(majority) == [None, 1.0, 0.0] and list(tied) == [True, False, False]
        result = calibration("1", "d", np.asarray([0.0, 1.0, 1.0]), np.asarray([0.9, 0.8, 0.3]), majority, tied)
        assert result.n_units == 2 and result.n_ties == 1
        assert result.brier == pytest.approx(((0.8 - 1) ** 2 + (0.3 - 0) ** 2) / 2)

    def test_no_scored_unit_gives_null_with_the_reason(self):
        majority, tied = people_majority(np.asarray([[0.0, 1.0]]))
        result = calibration("1", "d", np.asarray([0.0]), np.asarray([np.nan]), majority, tied)
        assert result.ece is None and result.brier is None and result.reason == NO_SCORED_UNITS

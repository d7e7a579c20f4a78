"""validation.agreement.batched: the bootstrap's fast path gives, on every resample and to the last
bit, the value the library computes on that resample (statsmodels, krippendorff, SciPy), and the
shared resampler draws the same units however it is batched."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from validation.agreement import DimensionInput, exposure_comparison, joint_agreement, percentile_interval
from validation.agreement import batched as batched_module
from validation.agreement import dimensions as agreement_dimensions
from validation.agreement.batched import BatchedDimension
from validation.agreement.bootstrap import index_batches, multiplicities
from validation.agreement.coding import coded_from_array
from validation.agreement.summaries import exposure_comparisons, exposure_input

RESAMPLES = 120


def _ratings(n_units: int, raters: int, seed: int, *, missing: float, categories: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, categories, n_units)
    noise = rng.integers(0, categories, (n_units, raters))
    values = np.where(rng.random((n_units, raters)) < 0.6, truth[:, None], noise)
    out = values.astype(float)
    out[rng.random(out.shape) < missing] = np.nan
    return out


def _library_values(prepared, keys, indices):
    """What the bootstrap computed on each resample before the fast path: the library, per resample."""
    measures = {k: m for k, m in prepared.measures().items() if k in keys}
    out = {key: [] for key in measures}
    for units in indices:
        coefficients, full = prepared.resample(units)
        for key, compute in measures.items():
            value = compute(coefficients, full, quiet=True)[0]
            out[key].append(np.nan if value is None else value)
    return {key: np.array(v) for key, v in out.items()}


CASES = [
    # (units, raters incl. reference, level, missing share, reference in the coefficients)
    (40, 2, "ordinal", 0.0, True),
    (60, 3, "ordinal", 0.0, False),
    (60, 3, "nominal", 0.1, False),
    (50, 4, "interval", 0.15, False),
    (45, 4, "ordinal", 0.0, False),
    (30, 3, "ordinal", 0.3, True),
    (25, 5, "nominal", 0.2, True),
    (8, 3, "ordinal", 0.4, False),
]


class BatchedDimensionTests:
    @pytest.mark.parametrize("row_by_row", [False, True], ids=["whole-batch", "row-by-row"])
    @pytest.mark.parametrize(("n_units", "raters", "level", "missing", "in_coefficients"), CASES)
    def test_every_measure_equals_the_library_on_every_resample(
        self, n_units, raters, level, missing, in_coefficients, row_by_row, monkeypatch
    ):
        # Large data is gathered and counted one resample at a time: the same numbers either way.
        if row_by_row:
            monkeypatch.setattr(batched_module, "ROW_BY_ROW_FROM_UNITS", 0)
        ratings = _ratings(n_units, raters, seed=n_units + raters, missing=missing)
        coded = coded_from_array(ratings, level)
        names = [f"r{j}" for j in range(raters)]
        prepared = agreement_dimensions._prepare(coded, names, names[-1], in_coefficients)
        batched = BatchedDimension(
            level=prepared.level,
            coefficients=prepared.coefficients,
            coefficient_rows=prepared.coefficient_rows,
            full=prepared.full,
            full_rows=prepared.full_rows,
            reference=prepared.reference,
        )
        # The bootstrap asks only for measures the full data defines.
        points = agreement_dimensions._estimate_all(prepared, prepared.measures())
        keys = {key for key, result in points.items() if result.statistic is not None}
        fast = batched.measures(keys)
        assert fast, "the fast path computes some measure"
        indices = np.concatenate(list(index_batches(n_units, RESAMPLES, seed=5, batch_cells=7 * n_units)))
        library = _library_values(prepared, set(fast), indices)
        counts = batched.counts(indices)
        for key, compute in fast.items():
            got = compute(counts, indices)
            # Bit for bit, undefined resamples included (NaN where the library gives None).
            np.testing.assert_array_equal(got, library[key], err_msg=key, strict=True)

    def test_alpha_with_thirds_in_its_coincidences_is_left_to_the_library(self):
        """Units with four ratings divide coincidences by 3: not exact, so not on the fast path."""
        ratings = _ratings(30, 4, seed=1, missing=0.0)
        prepared = agreement_dimensions._prepare(coded_from_array(ratings, "ordinal"), list("abcd"), None, True)
        batched = BatchedDimension(
            level="ordinal",
            coefficients=prepared.coefficients,
            coefficient_rows=prepared.coefficient_rows,
            full=prepared.full,
            full_rows=prepared.full_rows,
            reference=None,
        )
        assert "krippendorff_alpha" not in batched.measures(set(prepared.measures()))

    def test_joint_agreement_intervals_are_those_of_the_library_path(self, monkeypatch):
        dims = {
            f"f{i}": DimensionInput(ratings=_ratings(70, 4, seed=i, missing=0.05), level="ordinal") for i in range(3)
        }
        raters = ["a", "b", "c", "judge"]
        fast = joint_agreement(dims, raters=raters, reference="judge", reference_in_coefficients=False, bootstrap=80)
        monkeypatch.setattr(BatchedDimension, "measures", lambda self, keys: {})
        library = joint_agreement(dims, raters=raters, reference="judge", reference_in_coefficients=False, bootstrap=80)
        assert fast == library


class ResamplerTests:
    @pytest.mark.parametrize("n_units", [1, 5, 7, 100, 101])
    def test_batches_draw_what_one_call_per_resample_draws(self, n_units):
        rng = np.random.default_rng(9)
        one_by_one = np.stack([rng.integers(0, n_units, size=n_units) for _ in range(13)])
        for cells in (n_units, 3 * n_units, 10**6):
            batched = np.concatenate(list(index_batches(n_units, 13, seed=9, batch_cells=cells)))
            np.testing.assert_array_equal(batched, one_by_one)

    def test_multiplicities_count_each_units_draws(self):
        indices = np.array([[0, 0, 2], [1, 2, 2]])
        np.testing.assert_array_equal(multiplicities(indices, 3), [[2, 0, 1], [0, 1, 2]])


class ExposureBootstrapTests:
    @pytest.mark.parametrize("row_by_row", [False, True], ids=["whole-batch", "row-by-row"])
    def test_intervals_are_those_of_statsmodels_on_each_resamples_tables(self, row_by_row, monkeypatch):
        """The anchoring comparison's resamples, recomputed here one at a time with statsmodels."""
        if row_by_row:
            monkeypatch.setattr(batched_module, "ROW_BY_ROW_FROM_UNITS", 0)
        rng = np.random.default_rng(3)
        n = 90
        people = rng.integers(0, 3, (n, 3)).astype(float)
        people[rng.random(people.shape) < 0.2] = np.nan
        judge = rng.integers(0, 3, n).astype(float)
        visible = rng.integers(-1, 2, (n, 3))
        result = exposure_comparison(people, judge, visible, level="ordinal", weighting="linear", bootstrap=70, seed=4)
        draws = {"shown": [], "hidden": []}
        for units in np.concatenate(list(index_batches(n, 70, seed=4))):
            for name, flag in (("shown", 1), ("hidden", 0)):
                table = np.zeros((3, 3))
                for u in units:
                    for r in range(3):
                        if visible[u, r] == flag and not np.isnan(people[u, r]):
                            table[int(people[u, r]), int(judge[u])] += 1
                if np.count_nonzero(table.sum(axis=0) + table.sum(axis=1)) >= 2:
                    draws[name].append(
                        sm_cohens_kappa(table, weights=np.arange(3.0), wt="linear", return_results=False)
                    )
        settings = result.bootstrap
        assert result.kappa_shown.confidence_interval == percentile_interval(draws["shown"], settings)
        assert result.kappa_hidden.confidence_interval == percentile_interval(draws["hidden"], settings)


class SharedAnchoringResamplesTests:
    @pytest.mark.parametrize("shared_from", [0, 10**9], ids=["shared-counts", "own-counts"])
    def test_anchoring_counted_with_the_agreement_equals_it_computed_alone(self, shared_from, monkeypatch):
        """``joint_agreement(exposures=...)`` counts the anchoring cells with the dimensions' patterns
        on large data: the comparisons, intervals included, are those ``exposure_comparisons`` gives
        on its own, and the dimensions' own numbers do not change."""
        monkeypatch.setattr(agreement_dimensions, "SHARED_ANCHORING_FROM_UNITS", shared_from)
        rng = np.random.default_rng(11)
        n = 120
        dims, exposures = {}, {}
        for i in range(2):
            people = _ratings(n, 3, seed=20 + i, missing=0.1)
            judge = rng.integers(0, 3, n).astype(float)
            judge[rng.random(n) < 0.1] = np.nan
            visible = rng.integers(-1, 2, (n, 3))
            dims[f"f{i}"] = DimensionInput(ratings=np.column_stack([people, judge]), level="ordinal")
            exposures[f"f{i}"] = exposure_input(people, judge, visible, level="ordinal", weighting="quadratic")
        options = {"raters": ["a", "b", "c", "judge"], "reference": "judge", "reference_in_coefficients": False}
        shared = joint_agreement(dims, **options, bootstrap=90, seed=3, exposures=exposures)
        alone = exposure_comparisons(exposures, bootstrap=90, seed=3)
        assert shared.exposures == alone
        assert shared.exposures["f0"].kappa_shown.confidence_interval is not None
        without = joint_agreement(dims, **options, bootstrap=90, seed=3)
        assert shared.dimensions == without.dimensions and shared.overall == without.overall

"""IPQA's agreement intervals resample items (each with all its intents), not (item, intent) units."""

import numpy as np
import pytest

from validation.agreement import DimensionInput, joint_agreement
from validation.agreement.measures import KRIPPENDORFF_ALPHA, PERCENT_AGREEMENT
from validation.agreement.results import BootstrapSettings
from validation.kinds.ipqa_core_intent.item_bootstrap import item_resampled_intervals


def clustered(rng, n_items: int = 40, per_item: int = 4):
    """Three raters' yes/no on each item's intents; whether they agree is a property of the item."""
    rows, items = [], []
    for item in range(n_items):
        hard = rng.random() < 0.4
        for _ in range(per_item):
            truth = float(rng.integers(0, 2))
            rows.append([truth if not hard or rng.random() < 0.5 else 1 - truth for _ in range(3)])
            items.append(f"q{item}")
    return np.asarray(rows), items


class ItemBootstrapTests:
    def test_each_resample_is_the_agreement_of_the_drawn_items_with_all_their_intents(self):
        rng = np.random.default_rng(1)
        ratings, items = clustered(rng, n_items=12, per_item=3)
        settings = BootstrapSettings(n_resamples=60, seed=7, confidence_level=0.9)
        intervals = item_resampled_intervals(ratings, items, level="nominal", settings=settings)
        # By hand: the same draws of items, each resample's coefficients from joint_agreement.
        draw = np.random.default_rng(7)
        members = [np.flatnonzero(np.asarray(items) == name) for name in sorted(set(items))]  # in np.unique order
        values = {PERCENT_AGREEMENT: [], KRIPPENDORFF_ALPHA: []}
        for _ in range(60):
            rows = np.concatenate([members[i] for i in draw.integers(0, 12, 12)])
            result = (
                joint_agreement(
                    {"v": DimensionInput(ratings=ratings[rows], level="nominal", categories=None)},
                    raters=["a", "b", "c"],
                )
                .dimensions["v"]
                .measures()
            )
            for key in values:
                if result[key].statistic is not None:
                    values[key].append(result[key].statistic)
        for key, drawn in values.items():
            assert intervals[key] == pytest.approx(tuple(np.quantile(drawn, [0.05, 0.95])))

    def test_resampling_items_is_wider_than_resampling_intents_when_items_cluster(self):
        rng = np.random.default_rng(2)
        ratings, items = clustered(rng)
        settings = BootstrapSettings(n_resamples=400, seed=3, confidence_level=0.95)
        by_items = item_resampled_intervals(ratings, items, level="nominal", settings=settings)
        by_units = joint_agreement(
            {"v": DimensionInput(ratings=ratings, level="nominal", categories=None)},
            raters=["a", "b", "c"], bootstrap=400, seed=3,
        ).dimensions["v"].measures()  # fmt: skip
        for key in (PERCENT_AGREEMENT, KRIPPENDORFF_ALPHA):
            low, high = by_units[key].confidence_interval
            assert by_items[key][1] - by_items[key][0] > high - low

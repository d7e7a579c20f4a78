"""Bootstrap intervals that resample IPQA's items, not its (item, intent) units.

IPQA validates its annotations instance by instance: "每个实例包含问题q、叙述n和所选答案a" (each
instance holds a question q, a narrative n and a selected answer a, §2.2), and its intents are
"通过人工评估验证标注" (validated by human evaluation, §2.4). An instance carries several candidate
intents whose judgements are not independent (the same people read the same question and
narrative), so resampling the (item, intent) units treats them as if they were and gives intervals
too narrow. Here the unit of resampling is the instance: each resample draws items with
replacement and takes all of a drawn item's intents with it (a cluster bootstrap, Davison &
Hinkley 1997, §3.8). The coefficients on a resample are the agreement package's own
(``percent_agreement_coded``, ``alpha_coded``: Krippendorff's alpha from ``krippendorff``), on its
``Coded.take`` slice; the interval is ``percentile_interval``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from validation.agreement.bootstrap import percentile_interval
from validation.agreement.coding import coded_from_array
from validation.agreement.estimators import alpha_coded, percent_agreement_coded
from validation.agreement.measures import KRIPPENDORFF_ALPHA, PERCENT_AGREEMENT
from validation.agreement.results import BootstrapSettings

__all__ = ["item_resampled_intervals"]


def item_resampled_intervals(
    ratings: npt.ArrayLike,
    unit_items: Sequence[Any],
    *,
    level: str,
    categories: Sequence[Any] = (),
    settings: BootstrapSettings,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of percent agreement and Krippendorff's alpha over resamples of items.

    ``ratings`` is (units x raters) as ``joint_agreement`` takes it; ``unit_items[u]`` the item unit
    ``u`` belongs to. Resamples where a coefficient is undefined are left out of its interval."""
    coded = coded_from_array(ratings, level, categories)  # type: ignore[arg-type]
    _, item_of_unit = np.unique(np.asarray([str(i) for i in unit_items]), return_inverse=True)
    order = np.argsort(item_of_unit, kind="stable")
    bounds = np.searchsorted(item_of_unit[order], np.arange(item_of_unit.max() + 2 if len(order) else 1))
    members = [order[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
    rng = np.random.default_rng(settings.seed)
    values: dict[str, list[float]] = {PERCENT_AGREEMENT: [], KRIPPENDORFF_ALPHA: []}
    for _ in range(settings.n_resamples if members else 0):
        drawn = rng.integers(0, len(members), len(members))
        resample = coded.take(np.concatenate([members[i] for i in drawn]))
        agreement = percent_agreement_coded(resample)[0]
        alpha = alpha_coded(resample, quiet=True)[0]
        if agreement is not None:
            values[PERCENT_AGREEMENT].append(agreement)
        if alpha is not None:
            values[KRIPPENDORFF_ALPHA].append(alpha)
    intervals: dict[str, tuple[float, float] | None] = {}
    for key, drawn_values in values.items():
        interval = percentile_interval(drawn_values, settings)
        intervals[key] = None if interval is None else (interval.low, interval.high)
    return intervals

"""The bootstrap over units: the resampling loop (threaded for large data, with results that do not
depend on it), the percentile interval and the options' check. The agreement measures, the paper
evaluations and the draft statistics all take their intervals from here."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from validation.agreement.results import BootstrapSettings, ConfidenceInterval

T = TypeVar("T")

#: Threads for bootstrapping large data: NumPy and the libraries release the GIL inside their array
#: work, so resamples run side by side. Results do not depend on it (see :func:`resamples`).
BOOTSTRAP_THREADS = min(8, os.cpu_count() or 1)
#: Below this many units a resample is too quick for threads to pay off.
THREADED_FROM_UNITS = 5_000


def percentile_interval(values: Sequence[float], settings: BootstrapSettings) -> ConfidenceInterval | None:
    """The percentile interval of bootstrap draws (``numpy.quantile``, linear), None without draws."""
    if not len(values):
        return None
    tail = (1 - settings.confidence_level) / 2
    low, high = np.quantile(np.asarray(values, dtype=float), [tail, 1 - tail])
    return ConfidenceInterval(float(low), float(high))


def bootstrap_iv(bootstrap: object, seed: object, confidence_level: object) -> None:
    """ValueError unless the resamples and seed are non-negative integers and the level is in (0, 1)."""
    if not isinstance(bootstrap, int) or isinstance(bootstrap, bool) or bootstrap < 0:
        raise ValueError(f"bootstrap must be a non-negative integer (number of resamples); got {bootstrap!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    if (
        not isinstance(confidence_level, float | int)
        or isinstance(confidence_level, bool)
        or not 0 < confidence_level < 1
    ):
        raise ValueError(f"confidence_level must be in (0, 1); got {confidence_level!r}")


def resamples(
    compute: Callable[[npt.NDArray[np.intp]], T],
    n_units: int,
    n_resamples: int,
    seed: int,
) -> Iterable[T]:
    """``compute`` on each resample, in order.

    One draw of units per resample, shared by every measure and dimension, so the intervals are
    comparable and the overall mean's interval reflects the dimensions' dependence. The draws come
    from one generator in order and results are consumed in order, so the intervals are the same
    with or without threads.
    """
    rng = np.random.default_rng(seed)
    threads = BOOTSTRAP_THREADS if n_units >= THREADED_FROM_UNITS else 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if threads <= 1:
            for _ in range(n_resamples):
                yield compute(rng.integers(0, n_units, size=n_units))
            return
        batch = 4 * threads  # bounded: 1,000 index arrays of 100,000 units would not fit comfortably
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bootstrap") as pool:
            done = 0
            while done < n_resamples:
                size = min(batch, n_resamples - done)
                yield from pool.map(compute, [rng.integers(0, n_units, size=n_units) for _ in range(size)])
                done += size

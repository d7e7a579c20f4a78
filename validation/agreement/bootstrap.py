"""The bootstrap over units: the one resampler (index draws, in batches or one at a time, and the
multiplicities they give each unit), the resampling loop (threaded for large data, with results that
do not depend on it), the percentile interval and the options' check. The agreement measures, the
paper evaluations and the draft statistics all draw their resamples and take their intervals here.

Every bootstrap draws resample *b*'s units as the *b*-th ``rng.integers(0, n, size=n)`` of one
``numpy.random.default_rng(seed)``: a batch of resamples is one ``integers`` call of shape
(batch, n), which gives the same indices as one call per resample (PCG64 keeps its spare 32 bits
between calls; a test holds it), so batching never changes an interval.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from scipy import stats

from validation.agreement.results import BootstrapSettings, ConfidenceInterval

T = TypeVar("T")

#: Threads for bootstrapping large data: NumPy and the libraries release the GIL inside their array
#: work, so resamples run side by side. Results do not depend on it (see :func:`resamples`).
BOOTSTRAP_THREADS = min(8, os.cpu_count() or 1)
#: Below this many units a resample is too quick for threads to pay off.
THREADED_FROM_UNITS = 5_000
#: Resampled unit indices held at once (resamples x units) by :func:`index_batches`.
BATCH_CELLS = 2_000_000


def index_batches(
    n_units: int, n_resamples: int, seed: int, *, batch_cells: int = BATCH_CELLS
) -> Iterator[npt.NDArray[np.intp]]:
    """The resamples' unit indices, in order, as (resamples, n_units) arrays of bounded size.

    Row *b* of the concatenated batches is resample *b*: ``n_units`` draws with replacement from
    ``range(n_units)``, the same whatever the batch size.
    """
    rng = np.random.default_rng(seed)
    per_batch = max(1, batch_cells // max(n_units, 1))
    # Below 2**32, 64-bit draws are made from the generator's 32-bit outputs exactly as 32-bit ones
    # are (a test holds it): the same indices, in half the memory, drawn and gathered faster.
    dtype = np.int32 if n_units <= np.iinfo(np.int32).max else np.int64
    done = 0
    while done < n_resamples:
        size = min(per_batch, n_resamples - done)
        yield rng.integers(0, n_units, size=(size, n_units), dtype=dtype)
        done += size


def multiplicities(indices: npt.NDArray[np.intp], n_units: int) -> npt.NDArray[np.int64]:
    """How often each unit is drawn in each resample: (resamples, n_units) from a batch of indices."""
    indices = np.atleast_2d(indices)
    offsets = (np.arange(len(indices)) * n_units)[:, None]
    return np.bincount((indices + offsets).ravel(), minlength=len(indices) * n_units).reshape(len(indices), n_units)


@contextmanager
def expected_warnings() -> Iterator[None]:
    """Silence the warnings a resample is expected to raise, and only those.

    A resample can hold degenerate data the full data does not (one category, a constant side, no
    pair): NumPy then warns of invalid or divide-by-zero arithmetic (also as ``RuntimeWarning`` from
    its reductions, e.g. the mean of an empty slice), and SciPy of constant input
    (``DegenerateDataWarning``). Those resamples give a non-finite value that is left out of the
    interval and counted, so the warning says nothing the result does not. Any other warning is
    still shown. Not thread-safe (``catch_warnings``), so it is entered once around all workers.
    """
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        yield


def percentile_interval(
    values: Sequence[float] | npt.NDArray[Any], settings: BootstrapSettings
) -> ConfidenceInterval | None:
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
    threads = BOOTSTRAP_THREADS if n_units >= THREADED_FROM_UNITS else 1
    # Bounded batches: 1,000 index arrays of 100,000 units would not fit comfortably.
    batch_cells = max(1, 4 * threads) * max(n_units, 1) if threads > 1 else BATCH_CELLS
    with expected_warnings():
        if threads <= 1:
            for batch in index_batches(n_units, n_resamples, seed, batch_cells=batch_cells):
                for units in batch:
                    yield compute(units)
            return
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bootstrap") as pool:
            for batch in index_batches(n_units, n_resamples, seed, batch_cells=batch_cells):
                yield from pool.map(compute, list(batch))

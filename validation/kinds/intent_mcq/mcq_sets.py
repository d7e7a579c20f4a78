"""IntentGrasp's evaluation sets drawn from the All Set (paper 002, §3 "Evaluation sets", App. B.1).

Pure functions over arrays, in project order:

- :func:`failed_by_every_run`: the Gem Set's candidates, "All Set instances where all the open-source
  models fail to answer correctly in their first evaluation runs" (§3). A run fails an instance when
  its answer is not exactly the key (per-instance F1 below 1) or it has no readable answer (a parse
  failure, scored 0 by the released scorer). An instance some run never saw cannot be said to be
  failed by every run: it is no candidate, and is counted apart.
- :func:`downsample_per_domain`: "then apply domain-wise downsampling to balance the number of
  instances across domains" (§3): each domain keeps at most ``per_domain`` of its candidates, drawn
  uniformly without replacement (``numpy.random.Generator.choice``) from one
  ``numpy.random.default_rng(seed)`` taken domain by domain in sorted order; a domain with fewer keeps
  them all (the paper's Gem Set: 49-50 instances in nine domains, 16-22 in three, Table 4).
- :func:`uniform_subsets`: the All Set "uniformly downsampled to three smaller subsets with three
  different random seeds (42, 43, and 44), where each subset has 470 instances" (App. B.1), drawn as
  the authors' released code draws them: per seed, ``random.seed(seed); random.sample(instances,
  size)`` from Python's standard library (``draw="python"``, the default; the paper: "the random seed
  to 42 for the Python 3.10 Random, Numpy, and PyTorch packages", App. B.1), so the same seed picks
  the same instances of the same All Set order. ``draw="numpy"`` keeps Concord's earlier draw,
  ``numpy.random.default_rng(seed).choice(n, size, replace=False)``, for subsets frozen with it.

Every function returns positions in the order given, sorted.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "DRAWS",
    "MAX_SUBSETS",
    "downsample_per_domain",
    "failed_by_every_run",
    "uniform_subsets",
]

#: How a uniform subset is drawn: as the released code does (Python's ``random``), or by numpy.
DRAWS = ("python", "numpy")
BAD_DRAW = f"draw must be one of {', '.join(DRAWS)}"
#: Subsets one ``mcq_subsets`` call draws, at most.
MAX_SUBSETS = 20

NO_RUN = "the Gem Set needs at least one run"
SHAPES_DIFFER = "every run has one F1 (and one coverage flag) per instance"
SUBSET_TOO_LARGE = "a subset of {size} instances is larger than the {n} instances to draw from"
REPEATED_SEED = "seed {seed} is given twice"
TOO_MANY_SUBSETS = f"at most {MAX_SUBSETS} subsets"


def failed_by_every_run(
    f1: Sequence[npt.ArrayLike], covered: Sequence[npt.ArrayLike]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Which instances every run fails, and which some run never saw.

    Parameters
    ----------
    f1 : sequence of array_like, one per run, shape (n_instances,)
        Each instance's F1 in the run; NaN where it has no readable answer.
    covered : sequence of array_like of bool, one per run, shape (n_instances,)
        Whether the run has an answer or a failure for the instance.

    Returns
    -------
    failed, uncovered : ndarray of bool
        ``failed``: covered by every run and failed by each (F1 < 1 or no readable answer);
        ``uncovered``: missed by at least one run.
    """
    if not f1:
        raise ValueError(NO_RUN)
    scores = np.asarray([np.asarray(values, dtype=float) for values in f1])
    seen = np.asarray([np.asarray(flags, dtype=bool) for flags in covered])
    if scores.ndim != 2 or seen.shape != scores.shape:
        raise ValueError(SHAPES_DIFFER)
    wrong = np.isnan(scores) | (scores < 1)
    everywhere = np.asarray(seen.all(axis=0))
    return everywhere & (wrong & seen).all(axis=0), ~everywhere


def downsample_per_domain(domains: Sequence[str], *, per_domain: int, seed: int) -> npt.NDArray[np.intp]:
    """Positions kept when each domain keeps at most ``per_domain`` of its instances (drawn with ``seed``)."""
    if per_domain < 1:
        raise ValueError("per_domain is at least 1")
    rng = np.random.default_rng(seed)
    members: dict[str, list[int]] = {}
    for position, domain in enumerate(domains):
        members.setdefault(domain, []).append(position)
    kept: list[int] = []
    for domain in sorted(members):
        positions = np.asarray(members[domain])
        kept += list(positions if len(positions) <= per_domain else rng.choice(positions, per_domain, replace=False))
    return np.sort(np.asarray(kept, dtype=np.intp))


def uniform_subsets(n: int, *, size: int, seeds: Sequence[int], draw: str = "python") -> list[npt.NDArray[np.intp]]:
    """One uniform draw of ``size`` of the ``n`` positions per seed, without replacement: by
    ``random.seed(seed); random.sample(...)`` (``draw="python"``; ``random.sample`` picks by position,
    so the positions of ``range(n)`` are those of the instances list) or by numpy."""
    if draw not in DRAWS:
        raise ValueError(BAD_DRAW)
    if size < 1:
        raise ValueError("a subset has at least 1 instance")
    if size > n:
        raise ValueError(SUBSET_TOO_LARGE.format(size=size, n=n))
    if len(seeds) > MAX_SUBSETS:
        raise ValueError(TOO_MANY_SUBSETS)
    for position, seed in enumerate(seeds):
        if seed in seeds[:position]:
            raise ValueError(REPEATED_SEED.format(seed=seed))
    if draw == "numpy":
        return [np.sort(np.random.default_rng(seed).choice(n, size, replace=False)).astype(np.intp) for seed in seeds]
    # random.Random(seed) is seeded as random.seed(seed) seeds the module's generator.
    return [np.sort(np.asarray(random.Random(seed).sample(range(n), size), dtype=np.intp)) for seed in seeds]

"""Published reliability data sets and small helpers the agreement tests share (sources in test_agreement.py)."""

from __future__ import annotations

import math

import numpy as np

from validation.agreement import (
    Rating,
)

nan = np.nan

# Fleiss (1971), Table 1, one row per patient (categories 1 depression, 2 personality disorder,
# 3 schizophrenia, 4 neurosis, 5 other), as R irr::diagnoses / statsmodels test_inter_rater.py.
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)

# Krippendorff (2011), section C: observers A-D (rows) x units 1-12 (columns), NaN = not coded.
KRIPPENDORFF_C = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)
KRIPPENDORFF_A = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]
KRIPPENDORFF_B = [
    ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d", "d", "a"],
    ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d", "d", "d"],
]

# Stata [R] kappa, rate.dta: radiologist A (rows) x radiologist B (columns); 1 normal, 2 benign,
# 3 suspected cancer, 4 cancer.
STATA_RATE_TABLE = [[21, 12, 0, 0], [4, 17, 1, 0], [3, 9, 15, 2], [0, 0, 0, 1]]

# Hollander & Wolfe (1973, p. 187): Hunter L values (x) and panel scores (y) of nine tuna lots.
HUNTER_L = [44.4, 45.9, 41.9, 53.3, 44.7, 44.1, 50.7, 45.2, 60.1]
PANEL_SCORE = [2.6, 3.1, 2.5, 5.0, 3.6, 4.0, 5.2, 2.8, 3.8]


def expand(table: list[list[int]], categories: list[float] | None = None) -> np.ndarray:
    """Units x 2 ratings from a contingency table (row rater, column rater)."""
    labels = categories or list(range(1, len(table) + 1))
    rows = [
        (labels[i], labels[j]) for i, line in enumerate(table) for j, count in enumerate(line) for _ in range(count)
    ]
    return np.array(rows, dtype=float)


def records_from(matrix, raters=None) -> list[Rating]:
    """Long-format records from a units x raters array (None/NaN cells become missing ratings)."""
    matrix = np.asarray(matrix, dtype=object)
    raters = raters or [f"r{j + 1}" for j in range(matrix.shape[1])]
    return [
        Rating(f"u{i + 1}", raters[j], matrix[i, j]) for i in range(matrix.shape[0]) for j in range(matrix.shape[1])
    ]


def contains_nan(value) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(contains_nan(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(contains_nan(v) for v in value)
    return False

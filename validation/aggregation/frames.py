"""A question's answers as crowd-kit reads them, from Concord's ratings."""

from __future__ import annotations

import numpy as np
import pandas as pd

from validation.ratings import RatingSet

__all__ = ["ORDINAL_NOTE", "question_frame"]

ORDINAL_NOTE = (
    "crowd-kit's models treat an ordinal scale as unordered classes (a 0/1/2 scale is three classes whose "
    "order none of them uses); the median and the mean of the people's ratings are given beside the label."
)


def question_frame(ratings: RatingSet, dimension: str, raters: list[str]) -> pd.DataFrame:
    """One dimension's ratings as crowd-kit's ``task, worker, label`` frame (task: the unit's index)."""
    matrix = ratings.matrix(dimension, raters)
    present = (matrix != None) if matrix.dtype == object else ~np.isnan(matrix.astype(float))  # noqa: E711
    units, columns = np.nonzero(present)
    values = matrix[units, columns]
    return pd.DataFrame({"task": units, "worker": np.asarray(raters, dtype=object)[columns], "label": values})

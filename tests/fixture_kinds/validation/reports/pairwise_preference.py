"""The pairwise-preference fixture kind's report: how often people preferred each response, then the
shared agreement tables on the preference."""

from __future__ import annotations

import numpy as np

from validation.reports.base import Cell, ReportBuilder, ReportContext, Row, Table

DIMENSION = "preferred"


class PairwisePreferenceReport(ReportBuilder):
    def paper_tables(self, ctx: ReportContext) -> list[Table]:
        matrix = ctx.ratings.matrix(DIMENSION, ctx.human_raters)
        given = [v for v in np.asarray(matrix, dtype=object).ravel().tolist() if v is not None and v == v]
        dimension = ctx.dimension(DIMENSION)
        rows = tuple(
            Row(
                dimension.category_label(category),
                (
                    Cell.count(given.count(category)),
                    Cell(value=given.count(category) / len(given) if given else None, format="percent"),
                ),
            )
            for category in dimension.categories
        )
        return [
            Table(
                key="pairwise_preferences",
                title="Preferences",
                caption=f"Each rater's latest preference on {ctx.ratings.n_units} pairs, {len(given)} answers.",
                columns=("Preferred", "Answers", "Share"),
                latex_columns=("Preferred", "Answers", "Share"),
                rows=rows,
            )
        ]

"""Agreement results rendered as Markdown, LaTeX and CSV tables."""

from __future__ import annotations

import csv
import io

import pytest

from tests.validation.unit.agreement_data import (
    STATA_RATE_TABLE,
    expand,
    records_from,
)
from validation import agreement
from validation.agreement import (
    DimensionAgreement,
    dimension_agreement,
)
from validation.reports.render import render_dimensions_csv, render_dimensions_latex, render_dimensions_markdown


class RendererTests:
    @pytest.fixture
    def results(self) -> dict[str, DimensionAgreement]:
        return {
            "CT_score": dimension_agreement(
                records_from(expand(STATA_RATE_TABLE), raters=["h", "llm"]),
                level="ordinal",
                reference="llm",
                bootstrap=20,
                seed=1,
            ),
            "SA": dimension_agreement(records_from([[1, 1], [1, 1]], raters=["h", "llm"]), level="ordinal"),
        }

    def test_markdown(self, results):
        text = render_dimensions_markdown(results)
        lines = text.splitlines()
        assert lines[0].startswith("| Dimension | Level | Units | Raters | Ratings | % agr. | κ |")
        assert "| CT_score | ordinal | 85 | 2 | 170 | 0.635 [" in text
        assert "| SA | ordinal | 2 | 2 | 4 | 1.000 | — |" in text
        assert "- SA, krippendorff_alpha: " + agreement.ONE_CATEGORY_ALPHA in text

    def test_latex_booktabs(self, results):
        text = render_dimensions_latex(results)
        for rule in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}", r"\end{tabular}"):
            assert rule in text
        assert r"CT\_score & ordinal & 85 & 2 & 170 & 0.635 [" in text
        assert r"SA & ordinal & 2 & 2 & 4 & 1.000 & -- &" in text
        assert "% SA, fleiss_kappa: " + agreement.ONE_CATEGORY in text

    def test_csv(self, results):
        rows = list(csv.DictReader(io.StringIO(render_dimensions_csv(results))))
        assert [row["dimension"] for row in rows] == ["CT_score", "SA"]
        assert float(rows[0]["cohen_kappa_quadratic"]) == results["CT_score"].cohen_kappa.quadratic.statistic
        assert float(rows[0]["spearman_rho"]) == results["CT_score"].spearman.statistic
        assert rows[0]["krippendorff_alpha_ci_low"] != ""
        assert rows[1]["krippendorff_alpha"] == ""
        assert agreement.ONE_CATEGORY_ALPHA in rows[1]["notes"]

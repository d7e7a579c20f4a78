"""validation.reports.render: tables as Markdown, LaTeX (booktabs) and long CSV, built without a database."""

from __future__ import annotations

import csv
import io

from validation.agreement import AgreementResult, ConfidenceInterval
from validation.reports.base import Cell, Row, Table
from validation.reports.render import format_cell, n_statement, render_csv, render_latex, render_markdown


def table() -> Table:
    kappa = AgreementResult(statistic=0.6431, confidence_interval=ConfidenceInterval(0.5, 0.75), n_units=50, method="m")
    rows = (
        Row("CT", (Cell.of(kappa), Cell(value=0.71, format="percent"))),
        Row("SA_x", (Cell(note="all ratings fall in one category"), Cell(value=-0.05))),
        Row("Overall", (Cell.of(kappa), Cell.count(50)), summary=True),
    )
    return Table(
        key="t7",
        title="Table 7",
        caption="Human-Human (κ_w (linear)) & ρ, 95% intervals",
        columns=("Factor", "κ_w", "Share"),
        latex_columns=("Factor", r"$\kappa_w$", r"\% share"),
        rows=rows,
        notes=("Factors: CT, SA.",),
    )


class CellTests:
    def test_numbers_percentages_counts_and_intervals(self):
        assert format_cell(Cell(value=0.64312, ci=(0.5, 0.75))) == "0.643 [0.500, 0.750]"
        assert format_cell(Cell(value=0.635, ci=(0.55, 0.7), format="percent")) == "63.5% [55.0%, 70.0%]"
        assert format_cell(Cell.count(85)) == "85"
        assert format_cell(Cell(note="why")) == "—"
        assert format_cell(Cell(value=0.5, format="percent"), latex=True) == r"50.0\%"
        assert format_cell(Cell(value=-0.25), latex=True) == "$-$0.250"


class RenderTests:
    def test_markdown(self):
        text = render_markdown([table()], header="> provenance")
        assert text.startswith("> provenance")
        assert "### Table 7" in text
        assert "| CT | 0.643 [0.500, 0.750] | 71.0% |" in text
        assert "| **Overall** | 0.643 [0.500, 0.750] | 50 |" in text
        assert "- SA_x, κ_w: all ratings fall in one category" in text

    def test_latex_is_a_booktabs_table_with_math_for_greek_letters(self):
        text = render_latex([table()], header="Inputs SHA-256: abc")
        for piece in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{lrr}", r"\label{tab:concord-t7}"):
            assert piece in text
        assert (
            r"\caption{Human-Human ($\kappa_w$ (linear)) \& $\rho$, 95\% intervals "
            r"Each value is computed on n = 50 units.}" in text
        )
        assert r"SA\_x & -- & $-$0.050 \\" in text
        # The summary row is set off by a rule.
        assert "\\midrule\nOverall & 0.643 [0.500, 0.750] & 50 \\\\" in text
        assert "% Inputs SHA-256: abc" in text
        # A note is a LaTeX comment, escaped like the cells, with the Greek letter set as math.
        assert "% SA\\_x, $\\kappa_w$: all ratings fall in one category\n" in text

    def test_csv_is_long_format_at_full_precision(self):
        rows = list(csv.DictReader(io.StringIO(render_csv([table()]))))
        assert rows[0] == {
            "table": "t7",
            "row": "CT",
            "column": "κ_w",
            "value": "0.6431",
            "ci_low": "0.5",
            "ci_high": "0.75",
            "note": "",
            "n": "50",
        }
        assert rows[2]["value"] == "" and rows[2]["note"] == "all ratings fall in one category"
        assert len(rows) == 6

    def test_tables_round_trip_through_json(self):
        original = table()
        assert Table.from_json_dict("t7", original.to_json_dict()) == original


class UnitCountTests:
    """A coefficient's n is the units it used (a kappa's units both raters rated), in every format."""

    def kappa_table(self) -> Table:
        # 33 units were rated; kappa used the 31 both raters rated, percent agreement all 33.
        kappa = AgreementResult(statistic=0.52, n_units=31, method="Cohen")
        share = AgreementResult(statistic=0.8, n_units=33, method="share")
        rows = (Row("Expressed", (Cell.of(kappa), Cell.of(share, format="percent"), Cell.count(33))),)
        return Table(
            key="v",
            title="Validation",
            caption="33 units rated.",
            columns=("Label", "Cohen's κ", "Share yes", "Units"),
            latex_columns=("Label", r"$\kappa$", r"\% yes", "Units"),
            rows=rows,
        )

    def test_each_value_says_its_own_n(self):
        table = self.kappa_table()
        statement = "Units each value is computed on (n): Expressed: Cohen's κ 31, Share yes 33."
        assert n_statement(table) == statement
        assert statement in render_markdown([table])
        assert r"Expressed: Cohen's $\kappa$ 31, Share yes 33.}" in render_latex([table])
        rows = list(csv.DictReader(io.StringIO(render_csv([table]))))
        assert [(r["column"], r["n"]) for r in rows] == [("Cohen's κ", "31"), ("Share yes", "33"), ("Units", "")]
        assert table.to_json_dict()["rows"][0]["cells"][0]["n"] == 31
        assert Table.from_json_dict("v", table.to_json_dict()) == table

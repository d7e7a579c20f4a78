"""Report tables fit their card (grouped, wrapping headers, a sticky first column, intervals on their own
line), a column that is empty in every row says why where it is seen, and plots are legible SVG with
distinct axis labels."""

import base64
import re

import pytest
from django.urls import reverse

from annotation.models import Project, Role
from annotation.services import membership_add
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation.plots import LABEL_PT, TICK_PT, svg
from validation.reports import ReportParameters
from validation.reports.base import Cell, Figure, Row, Table
from validation.reports.render import empty_columns
from validation.selectors import project_report
from validation.templatetags.agreement import cell_parts

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_report(make_project, make_user, judge_run, client):
    """Three people rate ten CoPA items; a judge gives the same score to every item (a constant rater)."""
    project = make_project("copa_likert", slug="copa-layout", overlap=3)
    researcher = make_user("res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    run = judge_run(project)
    for i, item in enumerate(add_items(project, [f"c{i}" for i in range(10)]).values()):
        for rater, shift in (("x1", 0), ("x2", i % 2), ("x3", 1)):
            annotate(project, item, rater, copa_value((i + shift) % 3))
        suggest(run, item, copa_value(1))
    client.force_login(researcher)
    query = {"judge": run.pk, "bootstrap": 0}
    page = client.get(reverse("report", args=[project.slug]), query, HTTP_HX_REQUEST="true")
    # The plots load after the tables, from their own URL.
    figures = client.get(reverse("report_figures", args=[project.slug]), query, HTTP_HX_REQUEST="true")
    return page.content.decode() + figures.content.decode()


class TableLayoutTests:
    def test_constant_judge_column_says_why_it_is_empty_visibly_under_the_table(self, judged_report):
        notes = re.findall(r'<ul class="table-empty-columns[^>]*>(.*?)</ul>', judged_report, re.S)
        assert notes, "an all-empty column must be explained outside the collapsed notes"
        assert any("ρ (mean vs LLM)" in n and "is empty in every row" in n and "constant" in n for n in notes)

    def test_per_dimension_table_groups_columns_and_keeps_row_labels_sticky(self, judged_report):
        table = judged_report.split('id="table-dimensions"')[1].split("</section>")[0]
        assert '<th scope="colgroup" colspan="6" class="group">Among people</th>' in table
        assert '<th scope="colgroup" colspan="6" class="group">People vs LLM</th>' in table
        assert table.count('<th scope="row" class="sticky">') == 6 and 'class="report-scroll"' in table

    def test_caption_sits_outside_the_scrolling_table(self, judged_report):
        section = judged_report.split('id="table-dimensions"')[1].split("</section>")[0]
        assert "<caption" not in section and section.index("table-caption") < section.index("report-scroll")

    def test_interval_goes_on_its_own_line(self):
        assert cell_parts(Cell(value=0.64312, ci=(0.5, 0.75))) == ("0.643", "[0.500, 0.750]")
        assert cell_parts(Cell(note="why")) == ("—", "")

    def test_empty_columns_lists_each_reason_once(self):
        table = Table(
            key="t",
            title="T",
            caption="c",
            columns=("Dimension", "a", "b"),
            latex_columns=("Dimension", "a", "b"),
            rows=(
                Row("x", (Cell(value=1.0), Cell(note="constant input"))),
                Row("y", (Cell(note="n/a"), Cell(note="constant input"))),
            ),
        )
        assert empty_columns(table) == [("b", ["constant input"])]


class PlotTests:
    def heatmap(self, rows="every ordered pair of raters on a unit", columns=None) -> Figure:
        return Figure(
            key="h",
            title="Cognitive Trust: people",
            kind="heatmap",
            data={
                "labels": ["Mismatch", "Partial", "Full"],
                "counts": [[3, 1, 0], [1, 4, 1], [0, 1, 5]],
                "rows": rows,
                "columns": columns or rows,
            },
            alt="a heatmap",
        )

    def test_plots_are_svg(self, judged_report):
        uris = re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', judged_report)
        assert uris and base64.b64decode(uris[0]).decode().lstrip().startswith("<?xml")
        assert "data:image/png" not in judged_report

    def test_plot_fonts_are_legible_at_the_size_shown(self):
        assert TICK_PT >= 10 and LABEL_PT >= 11
        document = svg(self.heatmap())
        width_pt = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', document).group(1))
        assert width_pt <= 400  # shown near its drawn size: a 10 pt font stays about 10 pt on screen

    def test_pairwise_heatmap_names_its_axes_differently(self, judged_report):
        report = project_report(
            project=Project.objects.get(slug="copa-layout"), parameters=ReportParameters(bootstrap=0)
        )
        heatmaps = [f for f in report.figures if f.kind == "heatmap"]
        assert heatmaps and all(f.data["rows"] != f.data["columns"] for f in heatmaps)
        assert heatmaps[0].data["rows"] == "one rater's rating"

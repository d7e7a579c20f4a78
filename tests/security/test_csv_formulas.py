"""Formula cells in every CSV Concord writes (runs, reports, snapshots, gold) are escaped with one
``'`` by the one writer, and every CSV import undoes exactly that escape, so a round trip is lossless."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation import csvsafe
from annotation.models import Role
from annotation.services import membership_add
from judges.models import JudgeRun, Suggestion
from judges.run_files import judge_run_import
from tests.api.conftest import client_for
from tests.judges.conftest import add_items
from validation.ratings_io import read_ratings
from validation.reports.render import render_csv
from validation.reports.tables import Cell, Row, Table

pytestmark = pytest.mark.django_db

HOSTILE = [
    '=HYPERLINK("http://evil.invalid/","open me")',
    "+SUM(1,2)",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1)",
    "\tTab first",
    "\rReturn first",
    "'=already quoted by hand",
    "''+twice",
    "\uff1dFULLWIDTH",
]
LIVE = ("=", "+", "-", "@", "\t", "\r", "\uff1d")


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def live_formulas(text: str) -> list[str]:
    """Text cells a spreadsheet would run (a negative number is a number, not a formula)."""
    rows = csv.reader(io.StringIO(text, newline=""))
    return [cell for row in rows for cell in row if cell.startswith(LIVE) and not is_number(cell)]


@pytest.fixture
def hostile_run(make_project, make_user, tmp_path):
    """A run whose model output (raw text, failure reasons) starts like spreadsheet formulas."""
    copa = make_project("copa_likert")
    researcher = make_user("res")
    membership_add(project=copa, user=researcher, role=Role.RESEARCHER)
    add_items(copa, len(HOSTILE))
    value = copa.task_kind.example_value()
    lines = [{"provenance": {"model": "=cmd|' /C calc'!A0", "prompt": "p.v1"}}]
    for index, text in enumerate(HOSTILE):
        line: dict = {"external_id": f"item-{index:05d}", "raw_output": text}
        line.update({"value": value} if index % 2 else {"error": text})
        lines.append(line)
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return judge_run_import(project=copa, path=path).run, researcher


def texts(run: JudgeRun) -> dict[str, tuple[str, str]]:
    rows = Suggestion.objects.filter(run=run).values_list("item__external_id", "raw_output", "failure_reason")
    return {external_id: (raw, reason) for external_id, raw, reason in rows}


class CellEscapeTests:
    @pytest.mark.parametrize("text", [*HOSTILE, "plain", "'plain", "", "'", "''"])
    def test_unescape_undoes_escape_exactly(self, text):
        assert csvsafe.unescape_cell(csvsafe.escape_cell(text)) == text

    def test_formula_text_gains_one_quote_and_numbers_stay_numbers(self):
        assert csvsafe.escape_cell("=1+1") == "'=1+1" and csvsafe.escape_cell("'=1") == "''=1"
        assert csvsafe.escape_cell(-1) == -1 and csvsafe.escape_cell("'plain") == "'plain"


class RunCsvTests:
    def test_page_api_and_command_write_no_live_formula(self, client, hostile_run, tmp_path):
        run, researcher = hostile_run
        client.force_login(researcher)
        page = client.get(reverse("judge_run_download", args=[run.project.slug, run.pk]), {"format": "csv"})
        api = client_for(researcher).get(f"/api/runs/{run.pk}/file/?format=csv")
        out = tmp_path / "run.csv"
        call_command("export_run", str(run.pk), "-o", str(out), stdout=io.StringIO(), stderr=io.StringIO())
        for text in (
            b"".join(page.streaming_content).decode(),
            b"".join(api.streaming_content).decode(),
            out.read_text(encoding="utf-8"),
        ):
            assert live_formulas(text) == [] and "'=HYPERLINK(" in text and "'''+twice" in text

    def test_the_escaped_file_imports_back_to_the_same_text(self, hostile_run, make_project, tmp_path):
        run, _ = hostile_run
        out = tmp_path / "run.csv"
        call_command("export_run", str(run.pk), "-o", str(out), stdout=io.StringIO(), stderr=io.StringIO())
        target = make_project("copa_likert", slug="target")
        add_items(target, len(HOSTILE))
        again = judge_run_import(project=target, path=out, model="m").run
        assert texts(again) == texts(run) and sorted(r for r, _ in texts(run).values()) == sorted(HOSTILE)

    def test_the_run_page_shows_provenance_as_text(self, client, hostile_run):
        run, researcher = hostile_run
        client.force_login(researcher)
        page = client.get(reverse("judge_run_detail", args=[run.project.slug, run.pk])).content.decode()
        assert "=cmd|&#x27; /C calc&#x27;!A0" in page and "=cmd|' /C calc'" not in page


class ReportCsvTests:
    def test_report_and_snapshot_csv_escape_text_and_keep_negative_numbers(self):
        cells = (Cell(-0.25, ci=(-0.5, 0.1), n=10), Cell.text("-1+1"))
        table = Table(
            key="t", title="T", caption="", columns=("dimension", "kappa", "note"), latex_columns=("", "", ""),
            rows=(Row(label='=HYPERLINK("x")', cells=cells),),
        )  # fmt: skip
        rows = list(csv.reader(io.StringIO(render_csv([table]))))
        assert live_formulas(render_csv([table])) == []
        assert rows[1][:6] == ["t", '\'=HYPERLINK("x")', "kappa", "-0.25", "-0.5", "0.1"] and rows[2][3] == "'-1+1"


def test_ratings_file_import_undoes_the_escape(tmp_path: Path):
    path = tmp_path / "ratings.csv"
    path.write_text("unit,rater,value\n'=u1,a,1\n'=u1,'@b,1\nu2,a,0\n", encoding="utf-8")
    ratings = read_ratings(path, level="nominal")["value"]
    assert {(r.unit, r.rater) for r in ratings} == {("=u1", "a"), ("=u1", "@b"), ("u2", "a")}

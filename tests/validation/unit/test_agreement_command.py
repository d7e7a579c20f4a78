"""``manage.py agreement SLUG``: the command-line contract of docs/cli.md, for projects.

Same JSON shape as agreement_stats (one dimension per factor, intent label or verdict); md, latex,
csv; exit 0 ok, 1 bad input, 2 usage; machine-readable output on stdout only.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.validation.conftest import add_items, annotate, copa_value, run_command, suggest
from tests.validation.unit.test_agreement import KRIPPENDORFF_C
from tests.validation.unit.test_ratings import store_matrix
from validation.models import ReportSnapshot

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_test_connection")]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_command(capsys, "agreement", *argv)


@pytest.fixture
def copa(make_project, judge_run):
    project = make_project("copa_likert")
    rng = np.random.default_rng(2)
    items = add_items(project, [f"r{i}" for i in range(15)])
    run_ = judge_run(project)  # after the items: a run covers the items that exist when it starts
    for item in items.values():
        truth = rng.integers(0, 3, 6)
        for rater in ("ann", "bob"):
            annotate(project, item, rater, copa_value(*map(int, np.where(rng.random(6) < 0.7, truth, 1))))
        suggest(run_, item, copa_value(*map(int, truth)))
    return project, run_


class AgreementCommandTests:
    def test_json_has_the_agreement_stats_shape_one_dimension_per_factor(self, copa, capsys):
        project, _ = copa
        code, out, err = run(capsys, project.slug)
        assert code == 0 and err == ""
        payload = json.loads(out)
        assert list(payload) == ["dimensions"]
        assert list(payload["dimensions"]) == ["CT", "SA", "SC", "CLM", "MS", "AMR"]
        ct = payload["dimensions"]["CT"]
        assert list(ct) == [
            "level",
            "n_units",
            "n_raters",
            "n_ratings",
            "percent_agreement",
            "cohen_kappa",
            "fleiss_kappa",
            "krippendorff_alpha",
            "n",
            "notes",
        ]
        assert (ct["level"], ct["n_units"], ct["n_raters"], ct["n_ratings"]) == ("ordinal", 15, 2, 30)
        assert set(ct["cohen_kappa"]) == {"unweighted", "linear", "quadratic"}

    def test_with_a_judge_it_is_compared_not_counted(self, copa, capsys):
        project, run_ = copa
        code, out, _ = run(capsys, project.slug, "--with-judge", str(run_.pk), "--bootstrap", "20", "--seed", "4")
        ct = json.loads(out)["dimensions"]["CT"]
        assert code == 0 and ct["n_raters"] == 2 and ct["reference"] == f"judge:{run_.pk}"
        assert ct["reference_in_coefficients"] is False
        assert set(ct["spearman"]) == {"rho", "p", "n"} and ct["spearman"]["n"] == 15
        assert set(ct["majority_vs_reference"]) == {"percent_agreement", "cohen_kappa", "n"}
        assert len(ct["ci"]["krippendorff_alpha"]) == 2 and ct["bootstrap"]["seed"] == 4
        code, out, _ = run(capsys, project.slug, "--with-judge", str(run_.pk), "--judge-as-rater")
        assert json.loads(out)["dimensions"]["CT"]["n_raters"] == 3

    def test_published_alphas_from_a_project(self, make_project, reference_kind, capsys):
        """Krippendorff (2011) section C stored as annotations: .743 / .815 / .849 from the command."""
        project = make_project(reference_kind)
        store_matrix(project, KRIPPENDORFF_C.T, raters=list("ABCD"))
        dims = json.loads(run(capsys, project.slug)[1])["dimensions"]
        assert dims["nominal"]["krippendorff_alpha"] == pytest.approx(0.743, abs=5e-4)
        assert dims["ordinal"]["krippendorff_alpha"] == pytest.approx(0.815, abs=5e-4)
        assert dims["interval"]["krippendorff_alpha"] == pytest.approx(0.849, abs=5e-4)

    @pytest.mark.parametrize(
        ("fmt", "start"),
        [("md", "| Dimension | Level |"), ("latex", r"\begin{tabular}"), ("csv", "dimension,level,n_units")],
    )
    def test_table_formats(self, copa, capsys, fmt, start):
        project, _ = copa
        code, out, _ = run(capsys, project.slug, "--format", fmt)
        first = next(line for line in out.splitlines() if not line.startswith("%"))
        assert code == 0 and first.startswith(start) and "CT" in out

    def test_the_report_tables(self, copa, capsys):
        project, run_ = copa
        code, out, _ = run(capsys, project.slug, "--report", "--format", "latex", "--bootstrap", "10")
        assert code == 0 and r"\label{tab:concord-copa_table7}" in out and "% Inputs SHA-256: " in out
        code, out, _ = run(capsys, project.slug, "--report", "--with-judge", str(run_.pk), "--bootstrap", "10")
        payload = json.loads(out)
        assert {"inputs_sha256", "parameters", "library_versions", "dimensions", "overall", "tables"} <= set(payload)
        assert payload["tables"]["copa_table7"]["columns"][2] == "Human-LLM (ρ)"

    def test_a_kappa_on_the_units_both_rated_says_that_n_in_every_format(self, copa, capsys):
        project, _ = copa
        # Two more responses only "ann" rated: 17 units rated, 15 of them by both people.
        for item in add_items(project, ["solo1", "solo2"]).values():
            annotate(project, item, "ann", copa_value(1, 1, 1, 1, 1, 1))
        ct = json.loads(run(capsys, project.slug)[1])["dimensions"]["CT"]
        assert ct["n_units"] == 17
        assert ct["n"]["cohen_kappa.linear"] == 15 and ct["n"]["krippendorff_alpha"] == 15
        markdown = run(capsys, project.slug, "--format", "md")[1]
        assert "- CT: " in markdown and "n = 15" in markdown
        latex = run(capsys, project.slug, "--format", "latex")[1]
        assert "% Units each value is computed on: CT: " in latex and "n = 15" in latex
        csv_lines = run(capsys, project.slug, "--format", "csv")[1].splitlines()
        rows = {line.split(",")[0]: line.split(",") for line in csv_lines}
        header = rows["dimension"]
        assert rows["CT"][header.index("cohen_kappa_linear_n")] == "15"
        assert rows["CT"][header.index("n_units")] == "17"
        # The paper table (CoPA Table 7) says the kappa's n too, not only the responses rated.
        report = run(capsys, project.slug, "--report", "--format", "md")[1]
        assert "17 responses rated by at least one annotator." in report
        assert "Each value is computed on n = 15 units." in report

    def test_table7_counts_the_responses_people_rated_not_those_only_the_model_scored(self, copa, capsys):
        project, run_ = copa
        for item in add_items(project, [f"model-only{i}" for i in range(5)]).values():
            suggest(run_, item, copa_value(2))
        report = run(capsys, project.slug, "--with-judge", str(run_.pk), "--report", "--format", "latex")[1]
        assert "15 responses rated by at least one annotator." in report

    def test_freeze_then_check(self, copa, capsys):
        project, _ = copa
        code, out, _ = run(capsys, project.slug, "--freeze", "--bootstrap", "10", "--title", "paper")
        frozen = json.loads(out)
        snapshot = ReportSnapshot.objects.get(pk=frozen["snapshot"])
        assert code == 0 and snapshot.title == "paper" and frozen["inputs_sha256"] == snapshot.inputs_sha256
        code, out, _ = run(capsys, project.slug, "--check", str(snapshot.pk))
        checked = json.loads(out)
        assert code == 0 and checked["numbers_match"] and checked["inputs_match"] and checked["difference_count"] == 0

    def test_bad_input_exits_1_and_usage_errors_exit_2(self, copa, capsys):
        project, _ = copa
        code, out, err = run(capsys, "no-such-project")
        assert (code, out) == (1, "") and "no project with slug 'no-such-project'" in err
        code, out, err = run(capsys, project.slug, "--with-judge", "99999")
        assert (code, out) == (1, "") and "judge run 99999 does not exist" in err
        code, out, err = run(capsys, project.slug, "--check", "12345")
        assert (code, out) == (1, "") and "no snapshot 12345" in err
        assert run(capsys, project.slug, "--format", "xlsx")[0] == 2
        assert run(capsys, project.slug, "--bootstrap", "-3")[0] == 2
        assert run(capsys, project.slug, "--report", "--freeze")[0] == 2

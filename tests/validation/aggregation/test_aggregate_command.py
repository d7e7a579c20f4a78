"""``aggregate``: a project's answers aggregated per dimension, as the command, the API and snapshots give it."""

import json

import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene

from annotation.models import Role
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.aggregation.conftest import PEOPLE
from tests.validation.conftest import run_command
from validation.aggregation.frames import ORDINAL_NOTE
from validation.aggregation.methods import METHOD_PARAMETERS

pytestmark = [pytest.mark.django_db(transaction=False), pytest.mark.usefixtures("keep_test_connection")]
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    return run_command(capsys, "aggregate", *argv)


class AggregateCommandTests:
    def test_every_dimension_is_aggregated_with_the_stable_keys(self, capsys, panel):
        code, out, _ = run(capsys, "panel", "--method", "dawid_skene")
        assert code == 0
        result = json.loads(out)
        assert {"items", "annotators", "flips", "dimensions", "method", "with_runs"} <= set(result)
        assert set(result["dimensions"]) == set(FACTORS)
        for factor in FACTORS:
            rows = [i for i in result["items"] if i["dimension"] == factor]
            assert len(rows) == 40
            assert {"external_id", "dimension", "label", "probability", "majority", "flipped", "median", "mean"} <= set(
                rows[0]
            )
            assert {a["rater"] for a in result["annotators"] if a["dimension"] == factor} == set(PEOPLE)
            assert result["dimensions"][factor]["note"] == ORDINAL_NOTE
        assert result["flips"] == sum(i["flipped"] for i in result["items"])
        assert all(not a["run"] for a in result["annotators"]) and result["with_runs"] == []

    def test_labels_posteriors_and_competence_equal_crowd_kit_on_the_same_frame(self, capsys, panel):
        code, out, _ = run(capsys, "panel", "--method", "dawid_skene", "--dimension", "SA")
        result = json.loads(out)
        project, _ = panel
        # The frame built here from the database, independently of Concord's ratings reader.
        from annotation.models import Annotation

        rows = [
            (item, rater, value["scores"]["SA"])
            for item, rater, value in Annotation.objects.filter(project=project)
            .order_by("item__external_id", "rater")
            .values_list("item__external_id", "rater", "value")
        ]
        frame = pd.DataFrame(rows, columns=["task", "worker", "label"]).astype({"label": float})
        ds = DawidSkene(**METHOD_PARAMETERS["dawid_skene"])
        probas = ds.fit_predict_proba(frame)
        for item in result["items"]:
            assert item["label"] == int(probas.loc[item["external_id"]].idxmax())
            assert item["probability"] == pytest.approx(probas.loc[item["external_id"]].max(), rel=1e-12)
        spammer = next(a for a in result["annotators"] if a["rater"] == "spammer")
        assert spammer["competence"] == min(a["competence"] for a in result["annotators"])
        assert len(spammer["confusion"]) == 3

    def test_runs_count_as_raters_only_when_named_and_are_labelled(self, capsys, panel):
        _, run_ = panel
        code, out, _ = run(capsys, "panel", "--method", "majority", "--dimension", "CT", "--with-runs", str(run_.pk))
        result = json.loads(out)
        assert code == 0 and result["with_runs"] == [run_.pk]
        runs = [a for a in result["annotators"] if a["run"]]
        assert len(runs) == 1 and runs[0]["run_id"] == run_.pk and f"run {run_.pk}" in runs[0]["rater"]

    def test_mace_gives_spamming_and_a_seeded_interval(self, capsys, panel):
        argv = ("panel", "--method", "mace", "--dimension", "MS", "--bootstrap", "3", "--seed", "2")
        _, out, _ = run(capsys, *argv)
        _, again, _ = run(capsys, *argv)
        assert out == again
        for annotator in json.loads(out)["annotators"]:
            assert 0 <= annotator["spamming"] <= 1 and len(annotator["ci"]) == 2

    @pytest.mark.parametrize(
        ("argv", "code"),
        [
            (("--method", "em"), 2),
            (("--dimension", "XX"), 1),
            (("--with-runs", "9999"), 1),
            (("--bootstrap", "-1"), 2),
        ],
    )
    def test_bad_input_exits_1_and_usage_errors_2(self, capsys, panel, argv, code):
        assert run(capsys, "panel", *argv)[0] == code

    def test_a_frozen_aggregation_checks_against_a_recomputation(self, capsys, panel):
        code, out, _ = run(capsys, "panel", "--method", "wawa", "--freeze", "--title", "t")
        snapshot = json.loads(out)["snapshot"]
        code, out, _ = run(capsys, "panel", "--check", str(snapshot))
        checked = json.loads(out)
        assert code == 0 and checked["numbers_match"] and checked["inputs_match"]

    def test_markdown_names_the_method_and_the_flips(self, capsys, panel):
        code, out, _ = run(capsys, "panel", "--method", "dawid_skene", "--format", "md")
        assert code == 0 and "Labels by Dawid–Skene against the majority vote" in out and "Annotator competence" in out


class AggregateApiTests:
    def test_researchers_read_it_annotators_do_not_and_bad_input_is_400(self, panel, make_user):
        project, _ = panel
        researcher, annotator = make_user("res"), make_user("ann")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        response = client_for(researcher).get("/api/projects/panel/aggregate/?method=majority&dimension=CT")
        assert response.status_code == 200
        body = response.json()
        assert body["method"] == "majority" and len(body["items"]) == 40
        assert client_for(annotator).get("/api/projects/panel/aggregate/?method=majority").status_code == 403
        assert client_for(researcher).get("/api/projects/panel/aggregate/?method=em").status_code == 400


class ReportSectionTests:
    def test_the_agreement_report_counts_each_models_flips_as_the_command_does(self, capsys, panel):
        from validation.reports import ReportParameters
        from validation.reports.build import build_report

        project, run_ = panel
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0, judge_run_id=run_.pk))
        table = report.table("aggregation")
        _, out, _ = run(capsys, "panel", "--method", "dawid_skene")
        flips = json.loads(out)["dimensions"]
        titles = {d.title: d.name for d in project.task_kind.rating_dimensions}
        for row in table.rows:
            factor = titles[row.label]
            assert row.cells[0].value == 40 and row.cells[2].value == flips[factor]["flips"]
            assert row.cells[1].value == flips[factor]["ties"]

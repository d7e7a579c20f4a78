"""The test on a project: the command, the API, the page and a frozen snapshot give the same numbers,
and those numbers are the authors' on their data carried through annotations and a judge run."""

from __future__ import annotations

import json

import pytest

from annotation.models import Annotation, Role
from annotation.services import membership_add
from judges.models import JudgeRun, Suggestion
from tests.api.conftest import client_for
from tests.validation.alttest.test_statistics import REFERENCE
from tests.validation.conftest import add_items, copa_value, imported_run, run_command, suggest
from validation.models import ReportSnapshot

pytestmark = pytest.mark.django_db


def _load_reference(project, dataset: str, models: tuple[str, ...]) -> dict[str, JudgeRun]:
    """The authors' annotations of ``dataset`` as people's annotations and each model's as a run."""
    data = REFERENCE["datasets"][dataset]
    items = add_items(project, [f"u{n:05d}" for n in range(data["n_units"])], payload={"text": "unit"})
    ordered = list(items.values())
    Annotation.objects.bulk_create(
        Annotation(project=project, item=ordered[unit], rater=rater, value={"value": value}, version=1)
        for rater, pairs in data["people"].items()
        for unit, value in pairs
    )
    runs = {}
    for model in models:
        run = runs[model] = imported_run(project, model)
        Suggestion.objects.bulk_create(
            Suggestion(
                judge=run.judge,
                run=run,
                item=ordered[unit],
                prompt_sha256="p" * 64,
                status="ok",
                value={"value": value},
            )
            for unit, value in data["models"][model]
        )
    return runs


class ReferenceThroughTheDatabaseTests:
    @pytest.mark.parametrize(("dataset", "dimension"), [("mtbench", "nominal"), ("lesion", "ordinal")])
    def test_the_command_gives_the_notebooks_figures(
        self, make_project, reference_kind, capsys, keep_test_connection, dataset, dimension
    ):
        project = make_project(reference_kind)
        data = REFERENCE["datasets"][dataset]
        models = tuple(data["expected"])[:2]
        runs = _load_reference(project, dataset, models)
        argv = [
            project.slug,
            *(f"--run={runs[m].pk}" for m in models),
            f"--epsilon={data['epsilon']}",
            "--scope=dimension",
            "--bootstrap=0",
        ]
        code, out, err = run_command(capsys, "alt_test", *argv)
        assert code == 0, err
        result = json.loads(out)
        assert set(result) >= {"project", "epsilon", "q", "metric", "runs"}
        for entry in result["runs"]:
            model = next(m for m in models if runs[m].pk == entry["run"])
            scope = next(s for s in entry["scopes"] if s["scope"] == dimension)
            assert scope["metric"] == data["metric"]
            assert set(scope) >= {
                "scope",
                "metric",
                "n_units",
                "winning_rate",
                "advantage_probability",
                "passed",
                "raters",
            }
            assert set(scope["raters"][0]) >= {"rater", "n", "p_value", "rejected", "model_win_share"}
            expected = data["expected"][model]
            assert [round(scope["winning_rate"], 2), round(scope["advantage_probability"], 2)] == expected
        probabilities = [e["scopes"][0]["advantage_probability"] for e in result["runs"]]
        assert probabilities == sorted(probabilities, reverse=True)


@pytest.fixture
def copa(make_project, make_user):
    """A CoPA project: 40 items rated by three people; a run that copies the first person, one that
    fails on a quarter of the items; a researcher and an annotator."""
    project = make_project("copa_likert")
    items = add_items(project, [f"c{n:02d}" for n in range(40)])
    good, patchy = imported_run(project, "copy-model"), imported_run(project, "patchy-model")
    for n, item in enumerate(items.values()):
        scores = [(n + k) % 3 for k in range(3)]
        for k, rater in enumerate(("ann1", "ann2", "ann3")):
            value = copa_value(scores[1] if k == 1 else scores[0])  # ann1 and ann3 agree: a majority
            Annotation.objects.create(project=project, item=item, rater=rater, value=value, version=1)
        suggestion = suggest(good, item, copa_value(scores[0]))
        Suggestion.objects.filter(pk=suggestion.pk).update(score=0.5 + (n % 5) / 10)
        if n % 4:
            suggest(patchy, item, copa_value((n + 1) % 3))
        else:
            suggest(patchy, item, None, failure="unparseable")
    researcher, annotator = make_user("res"), make_user("ann")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)
    membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
    return project, good, patchy, researcher, annotator


class SameNumbersEverywhereTests:
    def test_command_api_page_and_snapshot_agree(self, copa, capsys, keep_test_connection, client):
        project, good, patchy, researcher, _ = copa
        argv = [
            project.slug,
            f"--run={good.pk}",
            f"--run={patchy.pk}",
            "--epsilon=0.15",
            "--bootstrap=50",
            "--min-items=20",
        ]
        code, out, err = run_command(capsys, "alt_test", *argv)
        assert code == 0, err
        from_command = json.loads(out)
        query = {"run": [good.pk, patchy.pk], "epsilon": 0.15, "bootstrap": 50, "min_items": 20}
        response = client_for(researcher).get(f"/api/projects/{project.slug}/alt-test/", query)
        assert response.status_code == 200
        assert response.json() == from_command
        patchy_entry = next(r for r in from_command["runs"] if r["run"] == patchy.pk)
        assert patchy_entry["scopes"][0]["n_units"] == 30 * 6  # failed lines are unlabelled items
        assert [s["scope"] for s in patchy_entry["scopes"]] == ["pooled", "CT", "SA", "SC", "CLM", "MS", "AMR"]
        calibrated = {c["run"] for c in from_command["calibration"]}
        assert calibrated == {good.pk}

        client.force_login(researcher)
        page = client.get(f"/p/{project.slug}/evaluations/alt-test/", query)
        assert page.status_code == 200
        text = page.content.decode()
        good_entry = next(r for r in from_command["runs"] if r["run"] == good.pk)
        assert good_entry["verdict"] in text.replace("&#x27;", "'")
        assert "What ε means" in text
        assert f"Reliability diagram: copy-model (run {good.pk})" in text  # the run whose lines carry a score

        code, out, err = run_command(capsys, "alt_test", *argv, "--freeze")
        assert code == 0, err
        snapshot = ReportSnapshot.objects.get(pk=json.loads(out)["snapshot"])
        assert snapshot.numbers["evaluation"] == from_command
        code, out, err = run_command(capsys, "alt_test", project.slug, f"--check={snapshot.pk}")
        assert code == 0, err
        assert json.loads(out)["numbers_match"] is True

    def test_bad_input_is_refused(self, copa, capsys, keep_test_connection):
        project, good, _patchy, researcher, annotator = copa
        assert run_command(capsys, "alt_test", project.slug)[0] == 2
        assert run_command(capsys, "alt_test", project.slug, "--run=999999")[0] == 1
        assert run_command(capsys, "alt_test", project.slug, f"--run={good.pk}", "--epsilon=2")[0] == 1
        assert run_command(capsys, "alt_test", project.slug, f"--run={good.pk}", "--min-raters=1")[0] == 1
        client = client_for(researcher)
        url = f"/api/projects/{project.slug}/alt-test/"
        assert client.get(url, {"run": good.pk, "epsilon": -1}).status_code == 400
        assert client.get(url, {"run": 999999}).status_code == 400
        assert client.get(url).status_code == 400
        assert client_for(annotator).get(url, {"run": good.pk}).status_code == 403

    def test_an_annotator_under_the_minimum_is_skipped_and_counted(self, copa, capsys, keep_test_connection):
        project, good, _patchy, _researcher, _ = copa
        Annotation.objects.filter(project=project, rater="ann3", item__external_id__gte="c04").delete()
        code, out, err = run_command(
            capsys, "alt_test", project.slug, f"--run={good.pk}", "--bootstrap=0", "--scope=pooled"
        )
        assert code == 0, err
        pooled = json.loads(out)["runs"][0]["scopes"][0]
        assert [r["rater"] for r in pooled["raters"]] == ["ann1", "ann2"]
        assert pooled["skipped"] == [{"rater": "ann3", "n": 4 * 6}]


class ReportSectionTests:
    def test_a_report_with_a_judge_run_carries_the_test_as_the_command_computes_it(
        self, copa, capsys, keep_test_connection
    ):
        from validation.reports import ReportParameters, build_report

        project, good, _patchy, _researcher, _ = copa
        report = build_report(project=project, parameters=ReportParameters(judge_run_id=good.pk, bootstrap=0))
        table = report.table("alt_test")
        code, out, err = run_command(capsys, "alt_test", project.slug, f"--run={good.pk}", "--bootstrap=0")
        assert code == 0, err
        scopes = json.loads(out)["runs"][0]["scopes"]
        assert [row.label.rsplit(" · ", 1)[1] for row in table.rows] == [s["scope"] for s in scopes]
        columns = table.columns
        for row, scope in zip(table.rows, scopes, strict=True):
            assert row.cells[columns.index("Winning rate") - 1].value == scope["winning_rate"]
            assert row.cells[columns.index("Advantage prob.") - 1].value == scope["advantage_probability"]
        assert "alt_test" in report.numbers()["tables"]

    def test_without_a_judge_run_there_is_no_section(self, copa):
        from validation.reports import ReportParameters, build_report

        project, *_ = copa
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0))
        assert all(t.key != "alt_test" for t in report.tables)


class RenderingTests:
    @pytest.mark.parametrize(
        ("fmt", "marker"), [("md", "| Run · scope |"), ("latex", r"\toprule"), ("csv", "alt_test,")]
    )
    def test_the_tables_render_in_every_format(self, copa, capsys, keep_test_connection, fmt, marker):
        project, good, patchy, *_ = copa
        argv = [project.slug, f"--run={good.pk}", f"--run={patchy.pk}", "--bootstrap=0", f"--format={fmt}"]
        code, out, err = run_command(capsys, "alt_test", *argv)
        assert code == 0, err
        assert marker in out and "copy-model" in out

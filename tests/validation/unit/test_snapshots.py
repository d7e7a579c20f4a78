"""Freezing a report and checking it later: same data, same numbers; changed data, named differences."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.validation.conftest import add_items, annotate, copa_value
from validation.models import ImmutableError, ReportSnapshot
from validation.reports import ReportParameters, build_report, library_versions
from validation.services import report_snapshot_check, report_snapshot_create
from validation.snapshotting import numbers_digest

pytestmark = pytest.mark.django_db
PARAMETERS = ReportParameters(bootstrap=25, seed=3)


@pytest.fixture
def project(make_project):
    project = make_project("copa_likert")
    items = add_items(project, [f"r{i}" for i in range(12)])
    for i, item in enumerate(items.values()):
        annotate(project, item, "ann", copa_value(i % 3))
        annotate(project, item, "bob", copa_value((i + (i % 4 == 0)) % 3))
    return project


class FreezeTests:
    def test_a_snapshot_keeps_hash_parameters_versions_numbers_and_tables(self, project, make_user):
        user = make_user("researcher")
        snapshot = report_snapshot_create(project=project, parameters=PARAMETERS, user=user, title="camera-ready")
        report = build_report(project=project, parameters=PARAMETERS)
        assert snapshot.inputs_sha256 == report.inputs_sha256 and len(snapshot.inputs_sha256) == 64
        assert snapshot.parameters == PARAMETERS.to_json_dict()
        assert snapshot.library_versions == library_versions()
        assert set(snapshot.library_versions) >= {"python", "numpy", "scipy", "statsmodels", "krippendorff"}
        assert snapshot.numbers == report.numbers()
        assert snapshot.numbers_sha256 == numbers_digest(snapshot.numbers)
        assert "Table 7" in snapshot.markdown and r"\toprule" in snapshot.latex
        assert snapshot.csv.startswith("table,row,column,value,ci_low,ci_high,note")
        assert snapshot.inputs_sha256 in snapshot.markdown and snapshot.created_by == user

    def test_snapshots_never_change(self, project):
        snapshot = report_snapshot_create(project=project, parameters=PARAMETERS)
        snapshot.title = "edited"
        with pytest.raises(ImmutableError):
            snapshot.save()

    def test_a_report_for_other_parameters_is_refused(self, project):
        report = build_report(project=project, parameters=ReportParameters(bootstrap=0))
        with pytest.raises(ValueError, match="other parameters"):
            report_snapshot_create(project=project, parameters=PARAMETERS, report=report)


class CheckTests:
    def test_recomputing_unchanged_data_matches_exactly(self, project):
        snapshot = report_snapshot_create(project=project, parameters=PARAMETERS)
        check = report_snapshot_check(snapshot=snapshot)
        assert (check.inputs_match, check.numbers_match, check.versions_match) == (True, True, True)
        assert check.differences == [] and check.error == ""

    def test_an_edit_changes_the_inputs_and_the_numbers_are_listed(self, project):
        snapshot = report_snapshot_create(project=project, parameters=PARAMETERS)
        annotate(project, project.items.first(), "ann", copa_value(2, 0, 0, 0, 0, 0), version=2)
        check = report_snapshot_check(snapshot=snapshot)
        assert not check.inputs_match and not check.numbers_match
        assert check.difference_count >= 1
        paths = [d["path"] for d in check.differences]
        # Item r0 had ann 0, bob 1 on CT; ann's edit to 2 keeps one disagreement of one step, and bob's
        # marginal is uniform, so percent agreement and Cohen's kappas stay; alpha's pooled marginals move.
        assert "dimensions.CT.percent_agreement" not in paths and "dimensions.CT.cohen_kappa.linear" not in paths
        assert paths[0] == "dimensions.CT.fleiss_kappa"  # point values are listed before intervals
        changed = next(d for d in check.differences if d["path"] == "dimensions.CT.krippendorff_alpha")
        assert changed["stored"] == snapshot.numbers["dimensions"]["CT"]["krippendorff_alpha"]
        assert changed["recomputed"] != changed["stored"]
        assert ReportSnapshot.objects.get(pk=snapshot.pk).checks.count() == 1

    def test_other_library_versions_are_reported(self, project, monkeypatch):
        snapshot = report_snapshot_create(project=project, parameters=PARAMETERS)
        monkeypatch.setattr("validation.services.library_versions", lambda: {**library_versions(), "numpy": "0.0"})
        check = report_snapshot_check(snapshot=snapshot)
        assert check.numbers_match and not check.versions_match

    def test_a_report_that_cannot_be_recomputed_is_recorded(self, project, judge_run):
        run = judge_run(project)
        snapshot = report_snapshot_create(
            project=project, parameters=ReportParameters(judge_run_id=run.pk, bootstrap=0)
        )
        run.delete()
        check = report_snapshot_check(snapshot=snapshot)
        assert not check.numbers_match and "UnknownJudgeRun" in check.error


@pytest.mark.django_db(transaction=True)
class SnapshotMigrationTests:
    def test_snapshots_frozen_before_the_field_say_which_evaluation_they_are_of(self, make_project):
        """A snapshot whose kind named its evaluation keeps it in ``evaluation``; kind becomes the project's."""
        executor = MigrationExecutor(connection)
        executor.migrate([("validation", "0002_adjudication")])
        old = executor.loader.project_state([("validation", "0002_adjudication")]).apps
        Snapshot = old.get_model("validation", "ReportSnapshot")
        project = make_project("intent_mcq", slug="old")  # annotation's tables are today's
        common = {"parameters": {}, "inputs_sha256": "i", "numbers": {}, "numbers_sha256": "n", "library_versions": {}}
        common |= {"markdown": "", "latex": "", "csv": ""}
        frozen_eval = Snapshot.objects.create(project_id=project.pk, kind="mcq_eval", **common)
        frozen_report = Snapshot.objects.create(project_id=project.pk, kind="intent_mcq", **common)
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
        evaluation = ReportSnapshot.objects.get(pk=frozen_eval.pk)
        report = ReportSnapshot.objects.get(pk=frozen_report.pk)
        assert (evaluation.kind, evaluation.evaluation) == ("intent_mcq", "mcq_eval")
        assert (report.kind, report.evaluation) == ("intent_mcq", "")

"""validation.selectors: the live report is cached per state of the project's data, never stale."""

from __future__ import annotations

import pytest

from tests.validation.conftest import add_items, annotate, copa_value, suggest
from validation import selectors
from validation.reports import ReportParameters

pytestmark = pytest.mark.django_db
PARAMETERS = ReportParameters(bootstrap=5)


class ProjectReportTests:
    def test_computed_once_then_recomputed_when_data_change(self, make_project, monkeypatch, judge_run):
        project = make_project("copa_likert")
        items = add_items(project, ["a", "b"])
        annotate(project, items["a"], "ann", copa_value(1))
        annotate(project, items["a"], "bob", copa_value(2))
        builds = []
        real = selectors.build_report
        monkeypatch.setattr(selectors, "build_report", lambda **kw: builds.append(1) or real(**kw))
        first = selectors.project_report(project=project, parameters=PARAMETERS)
        again = selectors.project_report(project=project, parameters=PARAMETERS)
        assert len(builds) == 1 and again.inputs_sha256 == first.inputs_sha256
        annotate(project, items["b"], "ann", copa_value(0))
        changed = selectors.project_report(project=project, parameters=PARAMETERS)
        assert len(builds) == 2 and changed.inputs_sha256 != first.inputs_sha256
        selectors.project_report(project=project, parameters=ReportParameters(bootstrap=6))
        assert len(builds) == 3  # other parameters, other report
        run = judge_run(project)
        suggest(run, items["a"], copa_value(2))
        selectors.project_report(project=project, parameters=PARAMETERS)
        assert len(builds) == 4  # a judge's new suggestion changes the state too

"""validation.ratings: ratings from the annotation log, imported labels and judge runs.

Published data sets go through the database with the test-only ``reference_rating`` kind and must
come out with their published coefficients: Krippendorff (2011) section C (alpha nominal .743,
ordinal .815, interval .849, missing values), Fleiss (1971) Table 1 (kappa .430), Stata's rate.dta
(kappa 0.4728, linear 0.5684, quadratic 0.6714).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from annotation.importing import import_annotations
from annotation.kinds.base import RatingDimension, TaskKind
from annotation.models import Annotation
from tests.validation.conftest import add_items, annotate, copa_value, suggest
from tests.validation.unit.test_agreement import FLEISS_1971, KRIPPENDORFF_C, STATA_RATE_TABLE, expand
from validation.agreement import DimensionInput, joint_agreement
from validation.ratings import HIDDEN, SHOWN, UNRECORDED, _Collector, judge_rater_name, project_ratings

pytestmark = pytest.mark.django_db


def agreement_of(ratings, name: str, level: str, **options):
    return joint_agreement(
        {name: DimensionInput(ratings=ratings.matrix(name), level=level)}, raters=ratings.raters, **options
    ).dimensions[name]


def store_matrix(project, matrix, raters=None) -> None:
    """Units x raters into annotations of the reference kind (NaN: no annotation)."""
    matrix = np.asarray(matrix, dtype=object)
    raters = raters or [f"r{j + 1}" for j in range(matrix.shape[1])]
    items = add_items(project, [f"u{i + 1:02d}" for i in range(matrix.shape[0])])
    for i, item in enumerate(items.values()):
        for j, rater in enumerate(raters):
            value = matrix[i, j]
            if value is None or (isinstance(value, float) and np.isnan(value)):
                continue
            annotate(project, item, rater, {"value": value.item() if hasattr(value, "item") else value})


class LatestVersionTests:
    def test_each_raters_latest_version_counts(self, make_project):
        project = make_project("copa_likert")
        items = add_items(project, ["a", "b"])
        annotate(project, items["a"], "ann", copa_value(0))
        annotate(project, items["a"], "ann", copa_value(2), version=2)
        annotate(project, items["a"], "bob", copa_value(1))
        annotate(project, items["b"], "ann", copa_value(1), visible=True)
        ratings = project_ratings(project=project)
        assert ratings.raters == ("ann", "bob")
        assert list(ratings.unit_external_ids) == ["a", "b"]
        ct = ratings.matrix("CT")
        np.testing.assert_array_equal(ct, [[2, 1], [1, np.nan]])
        visible = ratings.visibility("CT")
        np.testing.assert_array_equal(visible, [[UNRECORDED, UNRECORDED], [SHOWN, UNRECORDED]])

    def test_imported_labels_count_and_sources_can_be_chosen(self, make_project, tmp_path):
        project = make_project("copa_likert")
        items = add_items(project, ["q1", "q2"])
        path = tmp_path / "labels.jsonl"
        path.write_text(
            "".join(
                json.dumps({"rater": rater, "external_id": e, "value": copa_value(s), "suggestion_visible": False})
                + "\n"
                for rater, e, s in [("expert-a", "q1", 2), ("expert-a", "q2", 0), ("expert-b", "q1", 2)]
            )
        )
        import_annotations(project=project, path=path)
        annotate(project, items["q2"], "expert-b", copa_value(1))
        everything = project_ratings(project=project)
        assert everything.raters == ("expert-a", "expert-b")
        np.testing.assert_array_equal(everything.matrix("SA"), [[2, 2], [0, 1]])
        assert everything.visibility("SA")[0, 0] == HIDDEN
        imported = project_ratings(project=project, sources=[Annotation.Source.IMPORT])
        np.testing.assert_array_equal(imported.matrix("SA"), [[2, 2], [0, np.nan]])

    def test_an_edit_after_an_import_replaces_it(self, make_project):
        project = make_project("copa_likert")
        item = add_items(project, ["q1"])["q1"]
        annotate(project, item, "ann", copa_value(0), source=Annotation.Source.IMPORT)
        annotate(project, item, "ann", copa_value(2), version=2, source=Annotation.Source.WEB)
        assert project_ratings(project=project, sources=["import"]).n_units == 0
        assert project_ratings(project=project).matrix("CT")[0, 0] == 2


class UnitTests:
    def test_ipqa_units_are_items_and_candidate_intents(self, make_project):
        project = make_project("ipqa_core_intent")
        kind = project.task_kind
        items = add_items(project, ["x", "y"])
        for item in items.values():
            annotate(project, item, "ann", kind.example_value())
        ratings = project_ratings(project=project)
        assert ratings.n_units == 4
        assert ratings.unit_labels()[0] == "x · To find someone to feed the starter"
        np.testing.assert_array_equal(ratings.matrix("core")[:, 0], [0, 1, 0, 1])

    def test_digest_ignores_database_ids_and_insertion_order(self, make_project):
        first, second = make_project("copa_likert", slug="one"), make_project("copa_likert", slug="two")
        a = add_items(first, ["a", "b"])
        annotate(first, a["a"], "ann", copa_value(1))
        annotate(first, a["b"], "bob", copa_value(2))
        b = add_items(second, ["b", "a"])  # other ids, other order
        annotate(second, b["b"], "bob", copa_value(2))
        annotate(second, b["a"], "ann", copa_value(1))
        assert project_ratings(project=first).digest() == project_ratings(project=second).digest()
        annotate(second, b["a"], "ann", copa_value(0), version=2)
        assert project_ratings(project=first).digest() != project_ratings(project=second).digest()

    def test_a_kind_that_rates_one_unit_twice_is_refused(self, make_project):
        class Twice(TaskKind):
            name = "twice"
            rating_dimensions = (RatingDimension("v", "nominal"),)

            def value_ratings(self, value, payload):
                yield "", "v", 1
                yield "", "v", 2

        project = make_project("copa_likert")
        add_items(project, ["only"])
        collector = _Collector(Twice())
        collector.add([project.items.get().pk], ["ann"], [{}], [None], [None])
        with pytest.raises(ValueError, match="item 'only' has two ratings by 'ann' in dimension 'v'"):
            collector.finish(project)


class ReferenceDataThroughTheDatabaseTests:
    def test_krippendorff_2011_section_c(self, make_project, reference_kind):
        """Krippendorff (2011), section C: 4 observers, 12 units, missing values: .743 / .815 / .849."""
        project = make_project(reference_kind)
        store_matrix(project, KRIPPENDORFF_C.T, raters=list("ABCD"))
        ratings = project_ratings(project=project)
        assert ratings.n_units == 12 and ratings.raters == ("A", "B", "C", "D")
        for level, published in (("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)):
            result = agreement_of(ratings, level, level)
            assert result.krippendorff_alpha.statistic == pytest.approx(published, abs=5e-4)
            assert (result.n_units, result.n_raters, result.n_ratings) == (12, 4, 41)

    def test_fleiss_1971(self, make_project, reference_kind):
        """Fleiss (1971), Table 1: 30 patients, 6 diagnoses each: kappa .430."""
        project = make_project(reference_kind)
        store_matrix(project, FLEISS_1971)
        result = agreement_of(project_ratings(project=project), "nominal", "nominal")
        assert result.fleiss_kappa.statistic == pytest.approx(0.430, abs=5e-4)
        assert result.percent_agreement.statistic == pytest.approx(0.556, abs=5e-4)

    def test_stata_rate_dta_weighted_kappas(self, make_project, reference_kind):
        """Stata [R] kappa, rate.dta: 0.4728, wgt(w) 0.5684, wgt(w2) 0.6714."""
        project = make_project(reference_kind)
        store_matrix(project, expand(STATA_RATE_TABLE).astype(int), raters=["rad_a", "rad_b"])
        kappa = agreement_of(project_ratings(project=project), "ordinal", "ordinal").cohen_kappa
        assert kappa.unweighted.statistic == pytest.approx(0.4728, abs=5e-5)
        assert kappa.linear.statistic == pytest.approx(0.5684, abs=5e-5)
        assert kappa.quadratic.statistic == pytest.approx(0.6714, abs=5e-5)

    def test_non_integer_ordinal_values_and_string_categories(self, make_project, reference_kind):
        project = make_project(reference_kind)
        uneven = {1: 0.5, 2: 1.25, 3: 3.0, 4: 10.0}
        matrix = np.vectorize(uneven.get)(expand(STATA_RATE_TABLE).astype(int)).astype(object)
        store_matrix(project, matrix, raters=["a", "b"])
        ratings = project_ratings(project=project)
        assert agreement_of(ratings, "ordinal", "ordinal").cohen_kappa.linear.statistic == pytest.approx(
            0.5684, abs=5e-5
        )
        words = make_project(reference_kind, slug="words")
        store_matrix(words, [["pass", "pass"], ["fail", "pass"], ["fail", "fail"]])
        strings = project_ratings(project=words)
        assert strings.dimensions["nominal"].value.dtype == object
        assert len(strings.dimensions["ordinal"]) == 0  # strings carry no order
        assert agreement_of(strings, "nominal", "nominal").percent_agreement.statistic == pytest.approx(2 / 3)


class JudgeRunTests:
    def test_a_judge_run_is_one_more_rater_and_failed_items_are_missing(self, make_project, judge_run):
        project = make_project("copa_likert")
        items = add_items(project, ["a", "b", "c"])
        for name, score in (("ann", 1), ("bob", 2)):
            for item in items.values():
                annotate(project, item, name, copa_value(score))
        run = judge_run(project)
        suggest(run, items["a"], copa_value(0))
        suggest(run, items["b"], None, failure="invalid JSON after 3 attempts")
        suggest(run, items["c"], copa_value(2))
        ratings = project_ratings(project=project, judge_run_id=run.pk)
        judge = judge_rater_name(run.pk)
        assert ratings.raters == ("ann", "bob", judge)
        column = ratings.matrix("CT", [judge])[:, 0]
        assert column[0] == 0 and np.isnan(column[1]) and column[2] == 2  # failed: missing, never 0
        assert ratings.visibility("CT", [judge])[0, 0] == UNRECORDED

    def test_mcq_f1_comes_from_the_key_in_the_payload(self, make_project, judge_run):
        project = make_project("intent_mcq")
        kind = project.task_kind
        payload = {**kind.example_payload(), "answers": [0, 2]}
        items = add_items(project, ["m1"], payload=payload)
        annotate(project, items["m1"], "ann", {"chosen": [0]})
        run = judge_run(project, backend="baseline")
        suggest(run, items["m1"], {"chosen": [0, 1, 2]})
        ratings = project_ratings(project=project, judge_run_id=run.pk)
        np.testing.assert_allclose(ratings.matrix("f1"), [[2 / 3, 0.8]])


class RatingPathTests:
    """A kind with ``rating_paths`` has the database read its ratings; they must be the decoded ones."""

    def test_ratings_read_at_the_paths_equal_the_decoded_values_ratings(self, make_project, judge_run, monkeypatch):
        project = make_project("copa_likert")
        assert project.task_kind.rating_paths
        items = add_items(project, ["a", "b", "c", "d"])
        annotate(project, items["a"], "ann", copa_value(0, 1, 2, 0, 1, 2), visible=True)
        annotate(project, items["a"], "ann", copa_value(2, 2, 2, 1, 1, 1), version=2, visible=False)
        annotate(project, items["a"], "bob", copa_value(1))
        annotate(project, items["b"], "bob", copa_value(2, 0, 1, 2, 0, 1), visible=False)
        annotate(project, items["c"], "cat", copa_value(0), visible=True)
        run = judge_run(project)
        suggest(run, items["a"], copa_value(1))
        suggest(run, items["b"], None, failure="invalid JSON after 3 attempts")
        suggest(run, items["c"], copa_value(0))
        suggest(run, items["c"], copa_value(2), prompt_sha256="q" * 64)  # the newer answer counts
        read = project_ratings(project=project, judge_run_id=run.pk)
        monkeypatch.setattr(type(project.task_kind), "rating_paths", {})
        decoded = project_ratings(project=project, judge_run_id=run.pk)
        assert read.digest() == decoded.digest()
        assert read.raters == decoded.raters == ("ann", "bob", "cat", judge_rater_name(run.pk))
        for name in read.dimensions:
            np.testing.assert_array_equal(read.matrix(name), decoded.matrix(name), strict=True)
            np.testing.assert_array_equal(read.visibility(name), decoded.visibility(name), strict=True)
        assert read.matrix("CT")[2, 3] == 2 and read.matrix("CT")[0, 0] == 2

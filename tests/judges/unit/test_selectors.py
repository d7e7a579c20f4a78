"""What other apps read: a run's values for agreement, and the suggestion an annotator may see."""

from __future__ import annotations

import pytest
from django.utils import timezone

from judges.models import JudgeRun, Suggestion
from judges.runs.services import run_cancel
from judges.selectors import run_progress, runs_for_project, suggestion_for_display, suggestion_values
from judges.services import judge_run_start
from tests.judges.conftest import add_items, make_judge, run_now
from tests.support.fake_server import Reply, valid_answer

pytestmark = pytest.mark.django_db(transaction=True)


class SuggestionValuesTests:
    def test_only_ok_values_in_item_order_failed_items_absent(self, copa, llm_server):
        items = add_items(copa, 5)
        llm_server.script = lambda r: Reply.text("{}") if "#2#" in r.text else valid_answer(r)
        run = run_now(make_judge(), copa)
        values = list(suggestion_values(run_id=run.pk))
        assert [item_id for item_id, _ in values] == [items[n].pk for n in (0, 1, 3, 4)]
        expected = dict(Suggestion.objects.filter(status="ok").values_list("item_id", "value"))
        assert dict(values) == expected
        assert all(set(v["scores"]) == {"CT", "SA", "SC", "CLM", "MS", "AMR"} for _, v in values)

    def test_a_rerun_s_values_include_the_answers_it_kept(self, copa, llm_server):
        add_items(copa, 3)
        judge = make_judge()
        first, second = run_now(judge, copa), run_now(judge, copa)
        assert list(suggestion_values(run_id=second.pk)) == list(suggestion_values(run_id=first.pk))
        assert len(list(suggestion_values(run_id=second.pk))) == 3


class SuggestionForDisplayTests:
    def test_nothing_before_any_run(self, copa):
        (item,) = add_items(copa, 1)
        assert suggestion_for_display(item=item) is None

    def test_the_most_recent_running_or_completed_run_decides(self, copa, llm_server):
        first_item, second_item = add_items(copa, 2)
        llm_judge = make_judge()
        run_now(make_judge("copa_likert", "baseline"), copa)
        assert suggestion_for_display(item=first_item).run.judge.backend == "baseline"
        llm_server.script = lambda r: Reply.text("nope") if "#1#" in r.text else valid_answer(r)
        llm_run = run_now(llm_judge, copa)
        shown = suggestion_for_display(item=first_item)
        assert (shown.run_id, shown.run.judge.backend) == (llm_run.pk, "openai")
        # The LLM failed on the second item: no suggestion rather than a stale or made-up one.
        assert suggestion_for_display(item=second_item) is None
        # A cancelled run is not shown; the latest completed one still is.
        cancelled = judge_run_start(judge=make_judge("copa_likert", "baseline", seed=1), project=copa)
        run_cancel(run=cancelled)
        assert suggestion_for_display(item=first_item).run_id == llm_run.pk

    def test_a_value_no_longer_valid_for_the_kind_is_not_shown(self, copa):
        (item,) = add_items(copa, 1)
        run_now(make_judge("copa_likert", "baseline"), copa)
        Suggestion.objects.update(value={"scores": {"CT": 1}})
        assert suggestion_for_display(item=item) is None

    def test_suggestions_of_another_kind_s_judge_are_ignored(self, make_project, copa):
        other = make_project("intent_mcq")
        add_items(other, 1)
        run_now(make_judge("intent_mcq", "baseline"), other)
        (item,) = add_items(copa, 1)
        assert suggestion_for_display(item=item) is None


class RunReadTests:
    def test_runs_newest_first(self, copa):
        add_items(copa, 1)
        first = run_now(make_judge("copa_likert", "baseline"), copa)
        second = run_now(make_judge("copa_likert", "baseline", prompt="copa_inclusion"), copa)
        assert list(runs_for_project(project=copa)) == [second, first]

    def test_rate_and_eta_from_the_last_start(self, copa):
        add_items(copa, 10)
        run = judge_run_start(judge=make_judge("copa_likert", "baseline"), project=copa)
        started = timezone.now() - timezone.timedelta(seconds=4)
        JudgeRun.objects.filter(pk=run.pk).update(resumed_at=started, ok_count=6, failed_count=2, pending_count=2)
        progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
        assert progress.items_per_s == pytest.approx(2.0, rel=0.05)
        assert progress.eta_seconds == pytest.approx(1.0, rel=0.05) and progress.percent == 80
        assert progress.as_dict()["pending"] == 2

"""The report's words: counts in the number they take, and a baseline named once."""

from validation.reports.base import JudgeInfo, counted


class ReportWordingTests:
    def test_counts_take_the_singular_for_one(self):
        assert counted(1, "person") == "1 person" and counted(15, "person") == "15 people"
        assert counted(1, "annotator") == "1 annotator" and counted(2, "annotator") == "2 annotators"

    def test_a_baseline_judge_is_called_a_baseline_once(self):
        baseline = JudgeInfo(
            run_id=1, rater="r", label="baseline · copa_jaccard.v1 seed 42 (baseline)", is_baseline=True
        )
        assert baseline.described == "baseline · copa_jaccard.v1 seed 42 (baseline)"
        llm = JudgeInfo(run_id=2, rater="r", label="gpt-4o (openai · gpt-4o), run 2", is_baseline=False)
        assert llm.described == "LLM gpt-4o (openai · gpt-4o), run 2"

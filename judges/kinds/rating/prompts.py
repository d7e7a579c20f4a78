"""The ``rating`` kind's judge: the project's design gives its messages (the design's judge_prompt, or
one written from the design's fields and questions) and its answer schema (the kind's value schema)."""

from __future__ import annotations

from judges.design_prompts import DesignPrompt

__all__ = ["PROMPTS", "RatingScaleJudge"]


class RatingScaleJudge(DesignPrompt):
    kind = "rating"


PROMPTS = [RatingScaleJudge("rating_design", 1)]

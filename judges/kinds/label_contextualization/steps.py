"""label_statement: a dataset label → a ``label_contextualization`` item with its examples, and the
model's draft intent statement kept in the item's ``meta.draft`` (a person writes or reviews the
statement; the draft is what the model proposed).

IntentGrasp (paper 002), §3 Stage 2. The prompt is the label-statement prompt judges use; its answer
must follow the kind's statement rules ("To ...", ending with a period) or be a reasoned refusal.
"""

from __future__ import annotations

from judges.baselines import label_words
from judges.generation.sources import SourceRecord
from judges.generation.sources.intent_labels import IntentLabelsReader
from judges.generation.steps import Step, StepDemo
from judges.prompting import get_prompt


class LabelStatement(Step):
    name = "label_statement"
    label = "IntentGrasp label statement drafts (label_contextualization items)"
    reader = IntentLabelsReader
    prompt_name = "intentgrasp_label_statement"
    source = "IntentGrasp (paper 002), §3 Stage 2: intent label contextualization"
    demo = StepDemo("generated-labels", "intent_labels.jsonl")

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        return dict(record.data)

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        payload = {key: data[key] for key in ("dataset", "domain", "label")}
        for key in ("guideline", "examples", "other_labels"):
            if data.get(key):
                payload[key] = data[key]
        payload["meta"] = {"draft": output}
        return [payload]

    def suggestion(self, payload: dict) -> dict | None:
        """The drafted statement (or refusal) as the kind's answer, read as the statement prompt's judge reads it."""
        draft = (payload.get("meta") or {}).get("draft")
        if not isinstance(draft, dict):
            return None
        # The statement prompt's answer needs no request to become a value (it shuffles nothing).
        return get_prompt(self.prompt_name).to_value(draft, None)  # type: ignore[arg-type]  # no request needed

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """The label's own words as a statement, "To <label words>." (as the judge baseline drafts it)."""
        return {"action": "write", "statement": f"To {label_words(data['label'])}.", "reason": ""}


STEPS = (LabelStatement,)

"""The judge prompt of a kind whose questions a project designs (annotation.kinds.designs).

Its text and its output schema come from the project's design, not from files: the messages are the
design's ``judge_prompt`` (or one written from the design) with each shown field's text in its
``$placeholder``, and the structured-output schema is the kind's value schema for that design. A
designed kind's folder, ``judges/kinds/<kind>/prompts.py``, subclasses it with its ``kind``. Bound to
a project by ``for_kind``; the registered prompt reads the kind's example design.
"""

from __future__ import annotations

from annotation.kinds.designs import DesignedKind
from judges.prompting import JudgeRequest, Prompt, sha256_json


class DesignPrompt(Prompt):
    title = "The design's judge prompt"
    source = "the project's design: its judge_prompt, or one written from its fields and questions"

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        kind = self.value_kind
        if not isinstance(kind, DesignedKind):
            raise TypeError(f"{self.key} is the prompt of a designed kind, not of {kind.name}")
        messages = kind.judge_messages(payload)
        schema = kind.value_schema
        return JudgeRequest(
            item_id=item_id,
            payload=payload,
            prompt_sha256=sha256_json({"messages": messages, "schema": schema}),
            schema=schema,
            messages=messages,
        )

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        # The answer is the kind's value as it is (the schema sent is the value schema).
        return output

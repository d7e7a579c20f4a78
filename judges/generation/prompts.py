"""A step's prompt as the backends see it: build a request per source record, read the answer back
into item payloads. The backends (openai, vllm, baseline) call it exactly as they call a judge's
prompt, so generation reuses their retries, structured output and parse-retry loops unchanged.

Reading an answer is JSON, then the prompt's schema, then the step's items checked against the
target kind's payload rules: an answer that would make an invalid item is refused like invalid JSON
(asked again, then a failure with the raw output), never a half-made item.
"""

from __future__ import annotations

import hashlib
from typing import cast

from annotation.kinds import get_kind
from judges.errors import JudgeOutputInvalid
from judges.generation.steps import Step
from judges.prompting import JudgeRequest, TemplatePrompt, get_prompt, sha256_json

BAD_ITEM = "the answer makes an invalid {kind} item: {problems}"
SHOWN_PROBLEMS = 3


def template_sha256(prompt: TemplatePrompt) -> str:
    """SHA-256 of the prompt's template and schema files: the exact text a run's prompt version is."""
    digest = hashlib.sha256()
    for path in (prompt.template_path, prompt.schema_path):
        digest.update(path.read_bytes())
    return digest.hexdigest()


class StepPrompt:
    """The step's generator prompt (or its baseline method) with the step's item checks."""

    def __init__(self, step: Step, *, options: dict[str, str], baseline: bool, version: int | None = None) -> None:
        self.step = step
        self.options = options
        self.is_baseline = baseline
        key = step.prompt_name if version is None else f"{step.prompt_name}.v{version}"
        self.template = cast(TemplatePrompt, get_prompt(key))  # a step's prompt is a template prompt
        self.kind = get_kind(step.kind)
        if baseline:
            self.name, self.version = f"{step.name}_baseline", step.baseline_version
            self.sha256 = sha256_json({"method": self.key, "schema": self.template.base_schema})
        else:
            self.name, self.version = self.template.name, self.template.version
            self.sha256 = template_sha256(self.template)

    @property
    def key(self) -> str:
        return f"{self.name}.v{self.version}"

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        if not self.is_baseline:
            return self.template.build(item_id=item_id, payload=payload, external_id=external_id, seed=seed)
        return JudgeRequest(
            item_id=item_id,
            payload=payload,
            prompt_sha256=sha256_json({"method": self.key, "input": payload}),
            schema=self.template.base_schema,
        )

    def compute(self, request: JudgeRequest) -> dict:
        """The baseline's answer (the baseline backend calls this instead of a model)."""
        return self.step.baseline(request.payload, self.options)

    def parse(self, text: str, request: JudgeRequest) -> dict:
        """``{"output": ..., "items": [payload, ...]}``, or JudgeOutputInvalid saying what is wrong."""
        output = self.template.parse(text, request)
        items = self.step.items(request.payload, output, self.options)
        problems = [str(problem) for payload in items for problem in self.kind.check_payload(payload)]
        if problems:
            more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
            shown = "; ".join(problems[:SHOWN_PROBLEMS]) + more
            raise JudgeOutputInvalid(BAD_ITEM.format(kind=self.kind.name, problems=shown))
        return {"output": output, "items": items}

"""Prompts: versioned template files and the code that fills and reads them.

Each template is two files, ``NAME.vN.txt`` (``[system]`` and ``[user]`` sections with ``$slots``)
and ``NAME.vN.schema.json`` (the JSON schema of the model's answer, sent as structured output). A
:class:`Prompt` builds one :class:`JudgeRequest` per item and reads the answer back: JSON, then the
output schema, then the task kind's own value checks. Anything that fails raises
:class:`JudgeOutputInvalid` with a reason a researcher can read; it is never turned into a score.

Judge prompts turn an item into a value of its task kind (a suggestion). Generator prompts
(``role = "generator"``) produce item data instead, such as IPQA candidate intents or a CoPA
profile; they render and validate the same way, but cannot be a project's judge. Baseline methods
(``judges.baselines``) implement the same interface without a model.

Every prompt belongs to a task kind and lives in that kind's folder, ``judges/kinds/<kind>/``: the
classes in ``prompts.py`` and ``baselines.py`` (each module lists its instances in ``PROMPTS``) and
the template files beside them. The registry below finds them by the registered kinds' names, so it
names no kind itself. A changed template is a new file with the next version, so a stored
suggestion's prompt always names the exact text it came from.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import string
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any, ClassVar

import jsonschema_rs
from jsonschema import Draft202012Validator

from annotation.kinds import KINDS, TaskKind, get_kind
from annotation.kinds.wording import describe_schema_error, field_path
from annotation.registry import Registry
from judges.backends import backend_class, backend_names
from judges.errors import JudgeOutputInvalid
from judges.kinds import kind_modules

SHOWN_SCHEMA_ERRORS = 3

NOT_JSON = "not valid JSON: {msg} at char {pos}"
NOT_AN_OBJECT = "the answer must be a JSON object, got {type}"


@dataclass(frozen=True)
class JudgeRequest:
    """One call for one item: what is sent (messages, schema) and what reading the answer needs."""

    item_id: int
    payload: dict
    prompt_sha256: str
    schema: dict
    messages: list[dict] | None = None
    #: Prompt-specific facts needed to read the answer (e.g. the shuffled option order).
    state: Any = None
    #: The seed a baseline draws from; None for model calls (the judge's seed goes to the model).
    seed: int | None = None


def sha256_json(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@cache
def _validators(schema_json: str) -> tuple[jsonschema_rs.Validator, Draft202012Validator]:
    """A compiled validator (fast path) and a full one (messages), cached per distinct schema."""
    schema = json.loads(schema_json)
    return jsonschema_rs.validator_for(schema), Draft202012Validator(schema)


def schema_problems(data: Any, schema: dict) -> list[str]:
    fast, full = _validators(json.dumps(schema, sort_keys=True))
    try:
        if fast.is_valid(data):
            return []
    except (ValueError, TypeError):  # not a JSON document: jsonschema says what is wrong
        pass
    errors = sorted(full.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    # jsonschema reports a missing field once per field; the message already names them all.
    return list(dict.fromkeys(f"{field_path(e.absolute_path) or 'answer'}: {describe_schema_error(e)}" for e in errors))


class Prompt:
    """Base of every prompt and baseline method: build a request per item, read its answer.

    Subclasses set ``kind`` (the task kind whose items they read), ``role`` and ``baseline``, and
    implement :meth:`build` and :meth:`to_value`.
    """

    kind: ClassVar[str]
    role: ClassVar[str] = "judge"
    #: A method in place of a model: it runs on backends that are baselines (``is_baseline``), and
    #: model prompts on every other backend.
    baseline: ClassVar[bool] = False
    #: What people read the prompt as (an instance may name its variant).
    title: str = ""
    #: Where the prompt comes from (paper, section, figure).
    source: str = ""
    #: The kind bound to a project's design (``for_kind``); None: the registered kind of ``kind``.
    bound_kind: TaskKind | None = None

    def __init__(self, name: str, version: int) -> None:
        self.name = name
        self.version = version

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key}>"

    @property
    def key(self) -> str:
        return f"{self.name}.v{self.version}"

    @property
    def is_judge(self) -> bool:
        return self.role == "judge"

    @property
    def value_kind(self) -> TaskKind:
        """The kind whose rules an answer must meet: the project's (design and all) once bound."""
        return self.bound_kind if self.bound_kind is not None else get_kind(self.kind)

    def for_kind(self, kind: TaskKind) -> Prompt:
        """This prompt for a project whose kind is ``kind`` (bound to its design, where it has one):
        answers are checked by that kind's rules. Prompts whose text depends on the design read it there."""
        if kind is get_kind(self.kind):
            return self
        bound = copy.copy(self)
        bound.bound_kind = kind
        return bound

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        raise NotImplementedError("subclasses of Prompt must provide build()")

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        """Map a schema-valid answer to the task kind's value (generators return the answer)."""
        raise NotImplementedError("subclasses of Prompt must provide to_value()")

    def partial_value(self, text: str, request: JudgeRequest) -> tuple[dict, int] | None:
        """What a paper's released scorer still reads from an answer that failed the checks.

        The value made of the answer's valid parts and how many distinct parts were invalid, or None
        when nothing valid can be read. Only prompts whose paper scores partial answers implement it;
        the others raise NotImplementedError (callers then score the failure as nothing).
        """
        raise NotImplementedError("this prompt's paper scores no partial answers")

    def parse(self, text: str, request: JudgeRequest) -> dict:
        """The value in ``text``, or JudgeOutputInvalid saying exactly what is wrong with it."""
        try:
            output = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JudgeOutputInvalid(NOT_JSON.format(msg=exc.msg, pos=exc.pos)) from None
        if not isinstance(output, dict):
            raise JudgeOutputInvalid(NOT_AN_OBJECT.format(type=type(output).__name__))
        problems = schema_problems(output, request.schema)
        if not problems:
            value = self.to_value(output, request)
            if self.is_judge:
                problems = [str(e) for e in self.value_kind.check_value(value, payload=request.payload)]
        if problems:
            more = f" (and {len(problems) - SHOWN_SCHEMA_ERRORS} more)" if len(problems) > SHOWN_SCHEMA_ERRORS else ""
            raise JudgeOutputInvalid("; ".join(problems[:SHOWN_SCHEMA_ERRORS]) + more)
        return value


@dataclass(frozen=True)
class Template:
    system: string.Template
    user: string.Template

    @classmethod
    def read(cls, path: Path) -> Template:
        """``# comment`` lines first, then ``[system]`` and ``[user]`` sections."""
        sections: dict[str, list[str]] = {}
        current = None
        for line in path.read_text(encoding="utf-8").splitlines():
            if current is None and (line.startswith("#") or not line.strip()):
                continue
            if line.strip() in ("[system]", "[user]"):
                current = line.strip()[1:-1]
                sections[current] = []
            elif current is None:
                raise ValueError(f"{path.name}: text before the [system] section")
            else:
                sections[current].append(line)
        if set(sections) != {"system", "user"}:
            raise ValueError(f"{path.name}: needs exactly a [system] and a [user] section")
        return cls(*(string.Template("\n".join(sections[part]).strip()) for part in ("system", "user")))


class TemplatePrompt(Prompt):
    """A prompt read from template files: fill the slots, send the schema, read the answer.

    The files sit beside the module that defines the prompt's class (its kind's folder).
    """

    #: Fixed slot values (e.g. the IntentGrasp prompting slot).
    slots: dict[str, str]

    def __init__(self, name: str, version: int, *, template: str = "", slots: dict | None = None) -> None:
        super().__init__(name, version)
        self.template_name = template or name
        self.slots = dict(slots or {})

    @property
    def directory(self) -> Path:
        """The folder of the module defining this prompt's class: ``judges/kinds/<kind>/``."""
        return Path(inspect.getfile(type(self))).resolve().parent

    @property
    def template_path(self) -> Path:
        return self.directory / f"{self.template_name}.v{self.version}.txt"

    @property
    def schema_path(self) -> Path:
        return self.directory / f"{self.template_name}.v{self.version}.schema.json"

    @cached_property
    def template(self) -> Template:
        return Template.read(self.template_path)

    @cached_property
    def base_schema(self) -> dict:
        return json.loads(self.schema_path.read_text(encoding="utf-8"))

    def request_state(self, payload: dict, *, seed: int | None, external_id: str) -> Any:
        return None

    def context(self, payload: dict, state: Any) -> dict[str, str]:
        raise NotImplementedError("subclasses of TemplatePrompt must provide context()")

    def output_schema(self, payload: dict, state: Any) -> dict:
        return self.base_schema

    def to_value(self, output: dict, request: JudgeRequest) -> dict:
        return output

    def render(self, payload: dict, state: Any = None) -> list[dict]:
        slots = {**self.slots, **self.context(payload, state)}
        return [
            {"role": "system", "content": self.template.system.substitute(slots)},
            {"role": "user", "content": self.template.user.substitute(slots).strip()},
        ]

    def build(self, *, item_id: int, payload: dict, external_id: str = "", seed: int | None = None) -> JudgeRequest:
        state = self.request_state(payload, seed=seed, external_id=external_id)
        messages = self.render(payload, state)
        schema = self.output_schema(payload, state)
        return JudgeRequest(
            item_id=item_id,
            payload=payload,
            prompt_sha256=sha256_json({"messages": messages, "schema": schema}),
            schema=schema,
            messages=messages,
            state=state,
        )


# -- formatting helpers ---------------------------------------------------------------------------


def bullets(lines: Iterable[str], empty: str = "(none)") -> str:
    text = "\n".join(f"- {line}" for line in lines if line)
    return text or empty


def numbered(lines: Iterable[str]) -> str:
    return "\n".join(f"{n}. {line}" for n, line in enumerate(lines, start=1))


def with_schema_changes(schema: dict, **properties: Any) -> dict:
    """A copy of a top-level object schema with some properties replaced (None drops one)."""
    changed = json.loads(json.dumps(schema))
    for name, spec in properties.items():
        if spec is None:
            changed["properties"].pop(name, None)
            changed["required"] = [r for r in changed["required"] if r != name]
        else:
            changed["properties"][name] = spec
    return changed


# -- generator prompts: data → item data ------------------------------------------------------------


class Generator(TemplatePrompt):
    """Produces item data, not a suggestion; its answer is checked against its own schema only."""

    role = "generator"


# -- registry -----------------------------------------------------------------------------------------


def _kinds_prompts() -> Iterator[tuple[str, Prompt]]:
    """Every registered kind's prompts, then its baselines, kind by kind in registry order."""
    for module in kind_modules("prompts", "baselines"):
        for prompt in module.PROMPTS:
            yield prompt.key, prompt


#: The prompts by ``name.vN`` (an :class:`annotation.registry.Registry`, loaded from the kinds'
#: folders again whenever the kinds change); a key declared twice is an error.
PROMPTS: Registry[Prompt] = Registry("prompt", load=_kinds_prompts, follows=KINDS)


def all_prompts() -> list[Prompt]:
    return PROMPTS.all()


def get_prompt(name: str) -> Prompt:
    """A prompt by ``name.vN``, or by bare name for its newest version. KeyError if there is none."""
    if name in PROMPTS:
        return PROMPTS.get(name)
    versions = [p for p in PROMPTS.all() if p.name == name]
    if not versions:
        raise KeyError(name)
    return max(versions, key=lambda p: p.version)


def prompts_for(*, kind: str, backend: str) -> list[Prompt]:
    """The judge prompts a judge of ``kind`` on ``backend`` may use, the default first."""
    if backend not in backend_names() or not backend_class(backend).runs_items:
        return []  # an unknown backend, or one whose outputs are imported: it runs no prompt
    baseline = backend_class(backend).is_baseline
    return [p for p in all_prompts() if p.is_judge and p.kind == kind and p.baseline == baseline]

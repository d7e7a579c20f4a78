"""Generator steps: the base every step implements, and the registry that finds them by folder.

A step is a versioned prompt, its JSON schema (the prompt's own ``.schema.json``), the source it
reads, the options it takes, and a function from (source record, model output) to item payloads of
the kind it makes. A kind's steps live in its own folder, ``judges/kinds/<kind>/steps.py``, listed
in that module's ``STEPS``: the kind a step makes is the folder's. A step is found by name
(``get_step``) or by kind (``steps_for_kind``); callers never branch on step names. Each step also
has a deterministic baseline generator (no model), always labelled a baseline, so a run can go end
to end without a GPU (the demo uses it, from the source file the step's ``demo`` names).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from annotation.errors import FieldError
from annotation.kinds import KINDS
from annotation.registry import Registry
from judges.generation.sources import SourceReader, SourceRecord
from judges.kinds import kind_modules

#: Text of one earlier question in a history line, at most (a title and the start of its body).
HISTORY_TEXT_LIMIT = 500
UNKNOWN_OPTION = "unknown value {value!r} for {name}; choose one of {choices}"


class StepInputInvalid(Exception):
    """A source record this step cannot use (e.g. no top-voted answer besides the accepted one)."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__("; ".join(map(str, errors)))
        self.errors = errors


@dataclass(frozen=True)
class StepOption:
    """An option a step takes, as forms, the command line and the API offer it."""

    name: str
    label: str
    #: (value, what it means), the default first.
    choices: tuple[tuple[str, str], ...]
    help: str = ""

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices)


@dataclass(frozen=True)
class StepDemo:
    """The demo run of a step (``make run``): its project, a source file under fixtures/sources/, options."""

    project: str
    source_file: str
    options: dict[str, str] = field(default_factory=dict)


class Step:
    """Base of a step. Subclasses set the class attributes and implement the four methods."""

    name: ClassVar[str]
    label: ClassVar[str]
    reader: ClassVar[type[SourceReader]]
    #: The generator prompt (judges/prompts/), newest version unless a run names one.
    prompt_name: ClassVar[str]
    default_temperature: ClassVar[float] = 0.0
    #: The options the step takes (forms, the command line and the API offer them).
    declared_options: ClassVar[tuple[StepOption, ...]] = ()
    #: Where the step comes from (paper, section).
    source: ClassVar[str] = ""
    baseline_version: ClassVar[int] = 1
    demo: ClassVar[StepDemo | None] = None

    def __init__(self, kind: str) -> None:
        #: The task kind of the items it makes: the kind whose folder holds the step.
        self.kind = kind

    @property
    def option_choices(self) -> dict[str, tuple[str, ...]]:
        """Option name → allowed values, the default first."""
        return {option.name: option.values for option in self.declared_options}

    def clean_options(self, options: dict[str, Any] | None) -> dict[str, str]:
        """The options with defaults filled in; ValueError naming a bad one."""
        options = dict(options or {})
        cleaned = {}
        for name, choices in self.option_choices.items():
            value = options.pop(name, None) or choices[0]
            if value not in choices:
                raise ValueError(UNKNOWN_OPTION.format(value=value, name=name, choices=", ".join(choices)))
            cleaned[name] = value
        if options:
            raise ValueError(f"step {self.name!r} takes no option {', '.join(sorted(options))}")
        return cleaned

    def input(self, record: SourceRecord, options: dict[str, str]) -> dict:
        """What the prompt reads (and what the items need) from one source record; StepInputInvalid if unusable."""
        raise NotImplementedError("subclasses of Step must provide input()")

    def external_ids(self, source_id: str, options: dict[str, str]) -> list[str]:
        """The ids of the items one record becomes, in the order :meth:`items` returns them."""
        return [source_id]

    def items(self, data: dict, output: dict, options: dict[str, str]) -> list[dict]:
        """Item payloads (without provenance; ``meta`` may hold step facts) from a valid model output."""
        raise NotImplementedError("subclasses of Step must provide items()")

    def baseline(self, data: dict, options: dict[str, str]) -> dict:
        """A deterministic output in the prompt's schema, made without a model."""
        raise NotImplementedError("subclasses of Step must provide baseline()")

    def suggestion(self, payload: dict) -> dict | None:
        """The answer of the target kind that a generated item's payload drafts, if the step drafts one.

        A step whose model output is itself an answer to the item (a drafted intent statement) returns
        it here: the run then stores it as the item's suggestion (``judges.generation.services``), so
        annotators see it only as the kind's suggestion, where the project shows suggestions. None:
        the output made the item and answers nothing.
        """
        return None


def one_line(text: str, limit: int = HISTORY_TEXT_LIMIT) -> str:
    """Whitespace collapsed, cut at ``limit`` characters (with an ellipsis)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def question_text(thread: dict) -> str:
    """A thread's question as the user wrote it: the title, then the body."""
    return f"{thread['title']}\n\n{thread['body']}".strip() if thread["body"] else thread["title"]


def earlier_question_line(question: dict) -> str:
    body = f" — {question['body']}" if question.get("body") else ""
    return one_line(f"{question['title']}{body}")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]


def _kinds_steps() -> Iterator[tuple[str, Step]]:
    """Every registered kind's steps, found in ``judges/kinds/<kind>/steps.py`` (``STEPS``)."""
    for module in kind_modules("steps"):
        kind = module.__name__.split(".")[-2]
        for step_class in module.STEPS:
            yield step_class.name, step_class(kind)


#: The generation steps by name (an :class:`annotation.registry.Registry`, loaded from the kinds'
#: folders again whenever the kinds change).
GENERATION_STEPS: Registry[Step] = Registry("step", load=_kinds_steps, follows=KINDS)


def all_steps() -> list[Step]:
    return GENERATION_STEPS.all()


def all_step_options() -> list[StepOption]:
    """Every option some step takes, once per name (the first step's wording), for the command line."""
    found: dict[str, StepOption] = {}
    for step in all_steps():
        for option in step.declared_options:
            found.setdefault(option.name, option)
    return list(found.values())


def step_names() -> list[str]:
    return GENERATION_STEPS.names()


def get_step(name: str) -> Step:
    """The step called ``name``; KeyError naming the known ones otherwise."""
    return GENERATION_STEPS.get(name)


def steps_for_kind(kind: str) -> list[Step]:
    return [step for step in GENERATION_STEPS.all() if step.kind == kind]

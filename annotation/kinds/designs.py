"""Kinds whose questions a project declares: the project stores a *design* (JSON) and the kind's
schemas, dimensions and form are derived from it (docs/formats.md, "Designs").

A designed kind is a :class:`DesignedKind` subclass whose class body sets ``design`` (its example
design: the registered kind, which the docs and the shared per-kind tests use) and says how a
design becomes the kind's attributes (``design_attributes``). ``with_design`` gives the kind bound
to a project's design: a subclass made once per distinct design, so every member of the contract
(class attributes included) reads that design and callers never know the difference.

Every designed kind shares the item shape ``{"fields": {...}, "meta": {...}}``: ``fields`` holds the
texts the design shows (Markdown + TeX, in the design's order) and everything else is hidden.
"""

from __future__ import annotations

import json
import string
import threading
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from jsonschema import Draft202012Validator

from annotation.errors import FieldError
from annotation.kinds.base import META, TEXT, TaskKind, described, object_schema
from annotation.kinds.wording import describe_schema_error, field_path

#: Names of fields, dimensions and questions: they become JSON keys, form names and report columns.
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
NAME = {
    "type": "string",
    "pattern": NAME_PATTERN,
    "description": "a name: lower-case letters, digits and _, starting with a letter, at most 40 characters",
}
MAX_FIELDS = 20
MAX_TITLE_CHARS = 200
MAX_DESCRIPTION_CHARS = 2_000
TITLE = {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS, "description": "what the form shows"}
DESCRIPTION = {"type": "string", "maxLength": MAX_DESCRIPTION_CHARS, "description": "help shown under the title"}
FIELDS = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_FIELDS,
    "items": object_schema({"name": NAME, "title": TITLE}, required=["name"]),
    "description": f"the item fields the annotator sees, in order (1 to {MAX_FIELDS}): Markdown + TeX",
}
MAX_PROMPT_CHARS = 20_000
JUDGE_PROMPT = object_schema(
    {
        "system": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_PROMPT_CHARS,
            "description": "the system message",
        },
        "user": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_PROMPT_CHARS,
            "description": "the user message: `$name` of a shown field is its text, `$fields` all of them, "
            "`$questions` what to answer",
        },
    },
    required=["user"],
    description="the LLM judge's prompt (optional; a prompt from the design is used without it). "
    "Not frozen with the design: a changed prompt is a new prompt for later runs",
)
#: The placeholder of a judge prompt that stands for what to answer (the design's questions, in words).
QUESTIONS_SLOT, FIELDS_SLOT = "questions", "fields"
UNKNOWN_PLACEHOLDER = "unknown placeholder ${name} (use a shown field's name, $fields for all of them, or $questions)"
DEFAULT_SYSTEM = "You annotate items for a research study. Follow the instructions exactly and answer with JSON only."
DEFAULT_USER = "$fields\n\nAnswer:\n$questions\n\nAnswer with JSON only, in the shape the schema gives."
#: A design is small; a larger one is refused before it is read further.
MAX_DESIGN_BYTES = 64 * 1024
DESIGN_TOO_LARGE = f"a design may have at most {MAX_DESIGN_BYTES // 1024} KiB of JSON"
NOT_A_DESIGN = "must be a JSON object (docs/formats.md, Designs)"
REPEATED_NAME = "repeats {name!r}, already at {first}"
#: Why the hidden part of a designed item is hidden.
META_HIDDEN = "the item's provenance and conditions (source, model, split): raters judge the shown fields alone"

# One bound kind per distinct design, shared by every project that has it (schemas compile once).
_BOUND: dict[tuple[str, str], TaskKind] = {}
_BOUND_LOCK = threading.Lock()
_BOUND_MAX = 512


def design_form(design: Any) -> Any:
    """What of a design people answer in: all of it but the judge's prompt (which may change later)."""
    return {k: v for k, v in design.items() if k != "judge_prompt"} if isinstance(design, dict) else design


def design_json(design: Any) -> str:
    """One spelling of a design: what two designs are compared (and bound kinds cached) by."""
    return json.dumps(design, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def repeated_names(entries: list[dict], *, path: str, key: str = "name") -> Iterator[FieldError]:
    """An error at each entry whose ``key`` an earlier entry already has."""
    first: dict[Any, int] = {}
    for index, entry in enumerate(entries):
        name = entry.get(key)
        if name in first:
            earlier = f"{path}[{first[name]}]"
            yield FieldError(f"{path}[{index}].{key}", REPEATED_NAME.format(name=name, first=earlier))
        else:
            first[name] = index


class DesignedKind(TaskKind):
    """A task kind derived from a design. Subclasses set ``design_schema``, ``design`` (the example)
    and implement ``design_attributes``; ``design_rules`` adds the checks a schema cannot state."""

    #: The JSON Schema of a design (its ``description``s are documented in docs/formats.md).
    design_schema: ClassVar[dict]
    #: The design this kind is bound to (the class body's: the example design).
    design: ClassVar[dict]
    #: The value's key that holds the answers, one per dimension or question (``ratings``, ``labels``).
    answers_key: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        design = cls.__dict__.get("design")
        if design is not None:
            for name, value in cls.design_attributes(design).items():
                setattr(cls, name, value)

    @classmethod
    def design_attributes(cls, design: dict) -> dict[str, Any]:
        """The kind's class attributes for ``design`` (schemas, dimensions, blinding), from a valid design."""
        raise NotImplementedError("subclasses of DesignedKind must provide design_attributes()")

    @classmethod
    def design_rules(cls, design: dict) -> Iterator[FieldError]:
        """Rules across a design's entries that its schema cannot state. Yields errors."""
        fields = design["fields"]
        yield from repeated_names(fields, path="fields")
        allowed = {field["name"] for field in fields} | {QUESTIONS_SLOT, FIELDS_SLOT}
        for part, text in (design.get("judge_prompt") or {}).items():
            for match in string.Template.pattern.finditer(text):
                name = match.group("named") or match.group("braced")
                if match.group("invalid") is not None or (name is not None and name not in allowed):
                    shown = name if name is not None else text[match.start() : match.start() + 20]
                    yield FieldError(f"judge_prompt.{part}", UNKNOWN_PLACEHOLDER.format(name=shown.lstrip("$")))

    # -- the LLM judge's prompt, from the design ---------------------------------------------------
    def judge_questions(self) -> str:
        """What the judge answers, in words: one line per dimension or question, with its scale or labels."""
        raise NotImplementedError("subclasses of DesignedKind must provide judge_questions()")

    def judge_messages(self, payload: dict) -> list[dict[str, str]]:
        """The judge's messages for one item: the design's prompt (or one from the design), each
        ``$field`` its shown text and ``$questions`` what to answer. Only shown fields are filled in:
        the judge sees what people see."""
        prompt = self.design.get("judge_prompt") or {}
        texts = self.shown_fields(payload)
        shown = {field["name"]: text["text"] for field, text in zip(self.design["fields"], texts, strict=True)}
        fields = "\n\n".join(f"## {entry['title']}\n{entry['text']}" for entry in texts)
        slots = {FIELDS_SLOT: fields, **shown, QUESTIONS_SLOT: self.judge_questions()}
        system = string.Template(prompt.get("system", DEFAULT_SYSTEM)).safe_substitute(slots)
        user = string.Template(prompt.get("user", DEFAULT_USER)).safe_substitute(slots)
        return [{"role": "system", "content": system}, {"role": "user", "content": user.strip()}]

    def example_refused_design(self) -> dict:
        """A design its checks refuse, for the docs (each kind shows its own kind of mistake)."""
        raise NotImplementedError("subclasses of DesignedKind must provide example_refused_design()")

    # -- the shared item shape ---------------------------------------------------------------------
    @staticmethod
    def shared_attributes(design: dict) -> dict[str, Any]:
        """The item payload and its blinding: the design's fields are shown, ``meta`` is hidden."""
        names = [field["name"] for field in design["fields"]]
        texts = {f["name"]: described(TEXT, f"the text shown as {entry_title(f)}") for f in design["fields"]}
        return {
            "payload_schema": object_schema(
                {
                    "fields": object_schema(
                        texts, required=names, description="the texts the annotator sees (Markdown + TeX)"
                    ),
                    "meta": META,
                },
                required=["fields"],
            ),
            "rater_fields": tuple(f"fields.{name}" for name in names),
            "hidden_fields": {"meta": META_HIDDEN},
        }

    def shown_fields(self, payload: dict) -> list[dict[str, str]]:
        """The design's fields of an item in order, as the form shows them (title and text); read
        by name from the design, so nothing else of the payload reaches the form."""
        texts = payload.get("fields") if isinstance(payload, dict) else None
        texts = texts if isinstance(texts, dict) else {}
        return [{"title": entry_title(field), "text": texts.get(field["name"], "")} for field in self.design["fields"]]

    def form_comment(self, data: Any) -> str | None:
        """The form's comment, where the design has a comment box (else none is read)."""
        return (data.get("comment") or None) if self.design.get("comment") else None

    def field_label(self, path: Sequence[str | int]) -> str:
        # The form shows each dimension or question by its title, and the answers as the whole form.
        if list(path[:1]) == [self.answers_key]:
            return self.field_words.get(str(path[1]), "") if len(path) > 1 else ""
        return super().field_label(path)

    def example_payload(self) -> dict:
        fields = {f["name"]: f"The {entry_title(f).lower()} of the example item." for f in self.design["fields"]}
        return {"fields": fields, "meta": {"source": "example"}}

    # -- the design contract -------------------------------------------------------------------------
    def check_design(self, design: Any) -> list[FieldError]:
        if not isinstance(design, dict):
            return [FieldError("", NOT_A_DESIGN)]
        if len(design_json(design).encode()) > MAX_DESIGN_BYTES:
            return [FieldError("", DESIGN_TOO_LARGE)]
        validator = Draft202012Validator(self.design_schema)
        errors = sorted(validator.iter_errors(design), key=lambda e: list(map(str, e.absolute_path)))
        if errors:
            found = (FieldError(field_path(e.absolute_path), _design_error(e)) for e in errors)
            return list(dict.fromkeys(found))
        return list(self.design_rules(design))

    def with_design(self, design: dict | None) -> TaskKind:
        if design is None or design_json(design) == design_json(self.design):
            return self
        key = (type(self).__qualname__, design_json(design))
        with _BOUND_LOCK:
            bound = _BOUND.get(key)
            if bound is None:
                if len(_BOUND) >= _BOUND_MAX:
                    _BOUND.clear()
                # A copy of its own: the caller's dict may change later, the bound kind must not.
                attributes = {"__module__": type(self).__module__, "__qualname__": type(self).__qualname__}
                frozen = json.loads(key[1])
                bound = _BOUND[key] = type(type(self).__name__, (type(self),), {**attributes, "design": frozen})()
        return bound


def _design_error(error: Any) -> str:
    # A name or value that does not fit its pattern is told what fits, not shown the pattern.
    if error.validator == "pattern" and error.schema.get("description"):
        return f"must be {error.schema['description']}"
    return describe_schema_error(error)


def entry_title(entry: dict) -> str:
    """What the form calls a field, dimension or question: its title, else its name in words."""
    return entry.get("title") or entry["name"].replace("_", " ").capitalize()

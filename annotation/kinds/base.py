"""The contract every task kind implements.

A task kind owns the rules of one kind of human judgement: the item payload it imports, the
annotation value it stores, and the checks between the two. Views, services and importers call
these methods and never branch on a kind's name (Django's backend pattern: one base class, one
module per implementation).

Shape checks are JSON Schemas (``payload_schema``, ``value_schema``); they double as the
structured-output schema given to LLM judges. Rules that span fields live in ``payload_rules`` and
``value_rules``. Validation runs a compiled schema first (fast path for large imports) and only
walks the full error list when a record is bad, so messages stay complete and imports stay quick.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import cached_property
from typing import Any, ClassVar

import fastjsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from annotation.errors import FieldError

TEXT = {"type": "string", "minLength": 1}
OPTIONAL_TEXT = {"type": "string"}
TEXT_LIST = {"type": "array", "items": TEXT}
# Free-form provenance (source URL, licence, dataset split): kept with the item, never validated further.
META = {"type": "object"}


def object_schema(properties: dict, *, required: Iterable[str] = (), **extra: Any) -> dict:
    """A closed JSON object: unknown keys are errors, since they are nearly always typos."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        **extra,
    }


def field_path(path: Iterable[Any], prefix: str = "") -> str:
    text = prefix
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_schema_error(error: SchemaError) -> str:
    """Turn a jsonschema error into a sentence that says what to change."""
    kind, spec, instance = error.validator, error.validator_value, error.instance
    if kind == "required":
        missing = [name for name in spec if isinstance(instance, dict) and name not in instance]
        return f"missing required field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}"
    if kind == "additionalProperties":
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(instance) - set(allowed)) if isinstance(instance, dict) else []
        return f"unknown field '{', '.join(unknown)}' (allowed: {', '.join(allowed)})"
    if kind == "type":
        return f"must be of type {spec}, got {type(instance).__name__} {json.dumps(instance)[:60]}"
    if kind == "minLength" and spec == 1:
        return "must not be empty"
    if kind == "minItems":
        return f"needs at least {spec} entr{'y' if spec == 1 else 'ies'}, got {len(instance)}"
    if kind == "maxItems":
        return f"allows at most {spec} entries, got {len(instance)}"
    if kind == "enum":
        return f"must be one of {', '.join(json.dumps(v) for v in spec)}, got {json.dumps(instance)}"
    if kind == "const":
        return f"must be {json.dumps(spec)}, got {json.dumps(instance)}"
    if kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        return f"must be {word} {spec}, got {json.dumps(instance)}"
    if kind == "uniqueItems":
        return "entries must not repeat"
    return error.message


class TaskKind:
    """Base class of a task kind. Subclasses set the class attributes and may add rules."""

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str] = ""
    payload_schema: ClassVar[dict]
    value_schema: ClassVar[dict]
    #: Where the annotator's form partial lives (rendered by the workspace).
    form_template: ClassVar[str] = ""

    # -- validation ---------------------------------------------------------------------------
    @cached_property
    def _payload_fast(self):
        return fastjsonschema.compile(self.payload_schema)

    @cached_property
    def _value_fast(self):
        return fastjsonschema.compile(self.value_schema)

    @cached_property
    def _payload_full(self) -> Draft202012Validator:
        return Draft202012Validator(self.payload_schema)

    @cached_property
    def _value_full(self) -> Draft202012Validator:
        return Draft202012Validator(self.value_schema)

    @staticmethod
    def _schema_errors(fast, explain, data: Any, prefix: str) -> list[FieldError]:
        try:
            fast(data)
            return []
        except fastjsonschema.JsonSchemaException:
            pass
        errors = sorted(explain(data), key=lambda e: list(map(str, e.absolute_path)))
        # jsonschema reports each missing field of one object apart; one message lists them all, so dedupe.
        return list(
            dict.fromkeys(FieldError(field_path(e.absolute_path, prefix), describe_schema_error(e)) for e in errors)
        )

    def explain_value(self, value: Any) -> Iterable[SchemaError]:
        """The schema errors of a bad value; kinds with alternative shapes narrow this down."""
        return self._value_full.iter_errors(value)

    def check_payload(self, payload: Any) -> list[FieldError]:
        """Every problem with an item payload; an empty list means it is valid."""
        errors = self._schema_errors(self._payload_fast, self._payload_full.iter_errors, payload, "")
        return errors or list(self.payload_rules(payload))

    def check_value(self, value: Any, *, payload: dict, prefix: str = "value") -> list[FieldError]:
        """Every problem with an annotation value given its item's payload."""
        errors = self._schema_errors(self._value_fast, self.explain_value, value, prefix)
        return errors or [
            FieldError(field_path([e.field] if e.field else [], prefix), e.message)
            for e in self.value_rules(value, payload)
        ]

    def payload_rules(self, payload: dict) -> Iterator[FieldError]:
        """Rules across payload fields that a schema cannot say. Yields errors."""
        return iter(())

    def value_rules(self, value: dict, payload: dict) -> Iterator[FieldError]:
        """Rules tying a value to its item (e.g. one judgement per candidate). Yields errors."""
        return iter(())

    # -- import formats -----------------------------------------------------------------------
    @property
    def payload_fields(self) -> list[str]:
        return list(self.payload_schema["properties"])

    def decode_csv_cell(self, field: str, cell: str) -> Any:
        """Read one CSV cell by the field's schema type: lists and objects are JSON in the cell.

        Raises ValueError with a message a person can act on.
        """
        spec = self.payload_schema["properties"].get(field, {})
        kind = spec.get("type")
        if kind in ("array", "object"):
            if cell.strip() == "":
                return [] if kind == "array" else {}
            try:
                return json.loads(cell)
            except json.JSONDecodeError as exc:
                raise ValueError(f"must hold JSON ({kind}) in this CSV cell: {exc.msg} at char {exc.pos}") from None
        if kind == "integer":
            try:
                return int(cell)
            except ValueError:
                raise ValueError(f"must be a whole number, got {cell!r}") from None
        if kind == "boolean":
            lowered = cell.strip().lower()
            if lowered in ("true", "1", "yes"):
                return True
            if lowered in ("false", "0", "no", ""):
                return False
            raise ValueError(f"must be true or false, got {cell!r}")
        return cell

    # -- documentation and demos ----------------------------------------------------------------
    def example_payload(self) -> dict:
        raise NotImplementedError("subclasses of TaskKind must provide example_payload()")

    def example_value(self) -> dict:
        raise NotImplementedError("subclasses of TaskKind must provide example_value()")

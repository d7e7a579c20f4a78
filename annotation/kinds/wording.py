"""Schema problems in words: a jsonschema error as a sentence that says what to change, a field's
path as forms and error lists name it, and the small wording helpers the kinds' messages share."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from jsonschema.exceptions import ValidationError as SchemaError


def field_path(path: Iterable[Any], prefix: str = "") -> str:
    text = prefix
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_schema_error(error: SchemaError) -> str:
    """Turn a jsonschema error into a sentence that says what to change."""
    keyword, spec, instance = error.validator, error.validator_value, error.instance
    if keyword == "required":
        missing = [name for name in spec if isinstance(instance, dict) and name not in instance]
        return f"missing required field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}"
    if keyword == "additionalProperties":
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(instance) - set(allowed)) if isinstance(instance, dict) else []
        return f"unknown field '{', '.join(unknown)}' (allowed: {', '.join(allowed)})"
    if keyword == "type":
        return f"must be of type {spec}, got {type(instance).__name__} {json.dumps(instance)[:60]}"
    if keyword == "minLength" and spec == 1:
        return "must not be empty"
    if keyword == "minItems":
        return f"needs at least {spec} entr{'y' if spec == 1 else 'ies'}, got {len(instance)}"
    if keyword == "maxItems":
        return f"allows at most {spec} entries, got {len(instance)}"
    if keyword == "enum":
        return f"must be one of {', '.join(json.dumps(v) for v in spec)}, got {json.dumps(instance)}"
    if keyword == "const":
        return f"must be {json.dumps(spec)}, got {json.dumps(instance)}"
    if keyword in ("minimum", "maximum"):
        word = "at least" if keyword == "minimum" else "at most"
        return f"must be {word} {spec}, got {json.dumps(instance)}"
    if keyword == "uniqueItems":
        return "entries must not repeat"
    return error.message


# -- errors in the annotator's words: the web form's version of a FieldError ---------------------
MISSING_FIELDS = re.compile(r"^missing required fields? (.+)$")
PATH_PART = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


def sentence(text: str) -> str:
    """``text`` as a sentence: capital first letter, closing period."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else f"{text}."


def join_words(words: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    words = [w for w in words if w]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}" if words else ""


def value_path(field: str) -> list[str | int] | None:
    """The parts of a value's field path (``value.intents[1].core`` gives ``['intents', 1, 'core']``);
    None for a field outside the value (the skip reason)."""
    parts: list[str | int] = [
        name if name is not None and name != "" else int(index) for name, index in PATH_PART.findall(field)
    ]
    if not parts or parts[0] != "value":
        return None
    return parts[1:]

"""Tables of a JSON Schema for docs/formats.md (``build_formats.py``): each field's type as a person
reads it, and its meaning from the schema's ``description``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def _choices(values: list[Any]) -> str:
    shown = [json.dumps(v, ensure_ascii=False) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _scalar(schema: dict, plural: bool = False) -> str:
    kind = schema.get("type")
    if "enum" in schema:
        return f"{kind + 's' if plural else kind}: {_choices(schema['enum'])}" if kind else _choices(schema["enum"])
    text = f"{kind}s" if plural else str(kind)
    if kind == "string" and schema.get("minLength") == 1:
        text = f"non-empty {text}"
    if "minimum" in schema and "maximum" in schema:
        text += f" {schema['minimum']}–{schema['maximum']}"
    return text


def _entries(schema: dict) -> str:
    low, high = schema.get("minItems"), schema.get("maxItems")
    parts = []
    if low and high:
        parts.append(f"{low}–{high} entries")
    elif low:
        parts.append(f"at least {low} entr{'y' if low == 1 else 'ies'}")
    elif high:
        parts.append(f"at most {high} entries")
    if schema.get("uniqueItems"):
        parts.append("no repeats")
    return ", ".join(parts)


def type_text(schema: dict) -> str:
    """A short, exact reading of a property's schema."""
    if "const" in schema:
        return f"the string {json.dumps(schema['const'])}"
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items", {})
        inner = "objects" if items.get("type") == "object" else _scalar(items, plural=True)
        limits = _entries(schema)
        return f"array of {inner}" + (f", {limits}" if limits else "")
    if kind == "object":
        if "properties" in schema:
            return "object"
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return f"object of {_scalar(extra, plural=True)}"
        return "object (any keys)"
    return _scalar(schema)


def walk(schema: dict, prefix: str = "") -> Iterator[tuple[str, dict, bool]]:
    """(path, schema, required) for each property, parents before their fields."""
    required = set(schema.get("required", ()))
    for name, spec in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        yield path, spec, name in required
        if spec.get("type") == "object" and "properties" in spec:
            yield from walk(spec, f"{path}.")
        items = spec.get("items", {}) if spec.get("type") == "array" else {}
        if items.get("type") == "object" and "properties" in items:
            yield from walk(items, f"{path}[].")


def _meaning(kind: str, path: str, spec: dict) -> str:
    if "description" not in spec:
        raise LookupError(
            f"no meaning for field {path!r} of kind {kind!r}: give it a 'description' in the kind's schema"
        )
    return spec["description"]


def field_table(kind: str, schema: dict) -> list[str]:
    rows = ["| field | type | required | meaning |", "|---|---|---|---|"]
    for path, spec, required in walk(schema):
        meaning = f"says this record is a `{spec['const']}`" if "const" in spec else _meaning(kind, path, spec)
        rows.append(f"| `{path}` | {type_text(spec)} | {'yes' if required else 'no'} | {meaning} |")
    return rows


def value_tables(kind: str, schema: dict) -> list[str]:
    """One table, or one per shape when the value has alternative shapes (``oneOf``)."""
    if "oneOf" not in schema:
        return field_table(kind, schema)
    lines: list[str] = []
    for branch in schema["oneOf"]:
        tag, const = next((name, spec["const"]) for name, spec in branch["properties"].items() if "const" in spec)
        lines += ["", f"When `{tag}` is `{json.dumps(const)}`:", ""]
        lines += field_table(kind, branch)
    return lines[1:]

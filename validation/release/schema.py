"""Column types of a release, derived once from the kind's JSON schemas: Arrow types for the Parquet
files, Hugging Face ``features`` for the dataset card and Croissant data types for ``croissant.json``.

Each kind's value and payload schemas say what a value holds (``scores.CT`` is an integer), so a
release's columns are typed from them rather than guessed from the rows: the first rows of a split
could miss an optional field, and every Parquet file of a split must share one schema. What a schema
does not pin down (free objects, mixed types), and lists of records, are kept as JSON text, which
loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa

__all__ = [
    "arrow_converter",
    "arrow_type",
    "croissant_type",
    "hf_features",
]

_SCALARS: dict[str, pa.DataType] = {
    "integer": pa.int64(),
    "number": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
}
#: The text type of a field a schema leaves open (kept as JSON text).
JSON_TEXT = pa.string()


def _json_type(schema: dict[str, Any]) -> str | None:
    """The one JSON type a schema allows, read from ``type``, ``const`` or ``enum``; None if several."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        kinds = [t for t in declared if t != "null"]
        return kinds[0] if len(kinds) == 1 else None
    examples = [schema["const"]] if "const" in schema else list(schema.get("enum", ()))
    names = {_python_json_type(v) for v in examples if v is not None}
    return names.pop() if len(names) == 1 else None


def _python_json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def _object_properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    """Every property an object may have, across ``oneOf``/``anyOf`` branches; None for a free map."""
    properties: dict[str, dict[str, Any]] = {}
    branches = [schema, *schema.get("oneOf", ()), *schema.get("anyOf", ())]
    for branch in branches:
        for name, spec in branch.get("properties", {}).items():
            if name in properties and arrow_type(properties[name]) != arrow_type(spec):
                properties[name] = {}  # two branches disagree on the type: JSON text
            else:
                properties.setdefault(name, spec)
    return properties or None


def arrow_type(schema: dict[str, Any]) -> pa.DataType:
    """The Arrow type of values valid under a JSON schema; JSON text where the schema leaves it open."""
    kind = _json_type(schema) or ("object" if "properties" in schema or "oneOf" in schema else None)
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "array" and isinstance(schema.get("items"), dict):
        items = arrow_type(schema["items"])
        # A list of records (or of lists) stays JSON text: Croissant 1.0 readers cannot read one inside a column.
        return JSON_TEXT if pa.types.is_struct(items) or pa.types.is_list(items) else pa.list_(items)
    if kind == "object":
        properties = _object_properties(schema)
        if properties:
            return pa.struct([pa.field(name, arrow_type(spec)) for name, spec in properties.items()])
    return JSON_TEXT


def _is_open(schema: dict[str, Any]) -> bool:
    return arrow_type(schema) == JSON_TEXT and _json_type(schema) != "string"


def _json_text(value: Any) -> Any:
    return None if value is None else orjson.dumps(value).decode()


def _converter(schema: dict[str, Any]) -> Callable[[Any], Any] | None:
    """What turns a valid value into its Arrow form, or None where Arrow takes it as it is (scalars,
    and records and lists with nothing open inside: Arrow ignores keys a struct does not name)."""
    if _is_open(schema):
        return _json_text
    kind = arrow_type(schema)
    if pa.types.is_list(kind):
        inner = _converter(schema["items"])
        return None if inner is None else (lambda value: None if value is None else [inner(v) for v in value])
    if pa.types.is_struct(kind):
        members = {name: c for name, spec in (_object_properties(schema) or {}).items() if (c := _converter(spec))}
        if not members:
            return None

        def record(value: Any) -> Any:
            if value is None:
                return None
            return {**value, **{name: convert(value.get(name)) for name, convert in members.items()}}

        return record
    return None


def arrow_converter(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """A function, worked out once per schema, that shapes a value valid under ``schema`` for
    :func:`arrow_type` of it: the parts the schema leaves open become JSON text, the rest stays."""
    return _converter(schema) or (lambda value: value)


_HF_DTYPES = {pa.int64(): "int64", pa.float64(): "float64", pa.string(): "string", pa.bool_(): "bool"}


def _hf_feature(kind: pa.DataType) -> Any:
    if pa.types.is_struct(kind):
        return {"struct": [{"name": f.name, **_hf_named(f.type)} for f in kind]}
    if pa.types.is_list(kind):
        inner = _hf_feature(kind.value_type)
        return {"list": inner if isinstance(inner, str) else inner}
    if pa.types.is_timestamp(kind):
        return f"timestamp[{kind.unit}, tz={kind.tz}]" if kind.tz else f"timestamp[{kind.unit}]"
    return _HF_DTYPES[kind]


def _hf_named(kind: pa.DataType) -> dict[str, Any]:
    feature = _hf_feature(kind)
    return {"dtype": feature} if isinstance(feature, str) else feature


def hf_features(schema: pa.Schema) -> list[dict[str, Any]]:
    """The dataset card's ``dataset_info.features`` for an Arrow schema, as the Hub's YAML writes them."""
    return [{"name": f.name, **_hf_named(f.type)} for f in schema]


_CROISSANT_TYPES = {
    pa.int64(): "sc:Integer",
    pa.float64(): "sc:Float",
    pa.string(): "sc:Text",
    pa.bool_(): "sc:Boolean",
}


def croissant_type(kind: pa.DataType) -> str:
    """The Croissant ``dataType`` of a scalar Arrow type (timestamps are ``sc:Date``)."""
    if pa.types.is_timestamp(kind):
        return "sc:Date"
    return _CROISSANT_TYPES[kind]

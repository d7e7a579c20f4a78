"""What of an item a rater may see: payload paths, and the rater's copy of a payload built from them.

A kind declares the paths its form shows (``TaskKind.rater_fields``) and the paths that are for
researchers only, each with the reason (``TaskKind.hidden_fields``). A path names an object key,
``a.b`` a key inside it, and ``a[]`` every entry of a list (``user_profile[].question``). The rater's
payload is built by *keeping* the shown paths, never by deleting the hidden ones: a field a kind
adds later stays out of the annotator's pages and API until the kind decides to show it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any, Literal

EACH = "[]"

#: A path tree: key -> True (keep the whole value) or a subtree; EACH applies a subtree to every list entry.
PathTree = dict[str, Any]


def path_parts(path: str) -> list[str]:
    """``"user_profile[].question"`` -> ``["user_profile", "[]", "question"]``."""
    parts: list[str] = []
    for segment in path.split("."):
        name = segment.removesuffix(EACH)
        parts.append(name)
        if name != segment:
            parts.append(EACH)
    return parts


def path_tree(paths: Iterable[str]) -> PathTree:
    """The paths as one tree; a path that keeps a whole value wins over paths below it."""
    tree: PathTree = {}
    for path in paths:
        node = tree
        parts = path_parts(path)
        for index, part in enumerate(parts):
            if index == len(parts) - 1:
                node[part] = True
            else:
                child = node.setdefault(part, {})
                if child is True:
                    break
                node = child
    return tree


def keep_paths(data: Any, tree: PathTree | Literal[True]) -> Any:
    """A copy of ``data`` with only what ``tree`` names (unknown or absent keys are skipped)."""
    if tree is True:
        return copy.deepcopy(data)
    if EACH in tree:
        return [keep_paths(entry, tree[EACH]) for entry in data] if isinstance(data, list) else None
    if not isinstance(data, dict):
        return None
    return {key: keep_paths(data[key], sub) for key, sub in tree.items() if key in data}


def schema_leaves(schema: dict, prefix: str = "") -> Iterator[str]:
    """Every field path a JSON Schema object declares, down to values without declared properties."""
    for name, spec in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        items = spec.get("items") if spec.get("type") == "array" else None
        if spec.get("properties"):
            yield from schema_leaves(spec, f"{path}.")
        elif isinstance(items, dict) and items.get("properties"):
            yield from schema_leaves(items, f"{path}{EACH}.")
        else:
            yield path


def covers(path: str, field: str) -> bool:
    """Whether the declared ``path`` is ``field`` or holds it (``a`` holds ``a.b`` and ``a[].b``)."""
    return field == path or field.startswith((f"{path}.", f"{path}{EACH}"))


def hidden_values(payload: dict, hidden: Iterable[str]) -> list[tuple[str, Any]]:
    """(path, value) of each hidden path present in ``payload``: list entries' values gathered in a list."""
    found = []
    for path in hidden:
        value: Any = payload
        for part in path_parts(path):
            if part == EACH:
                value = value if isinstance(value, list) else []
            elif isinstance(value, list):
                value = [entry.get(part) for entry in value if isinstance(entry, dict) and part in entry]
            elif isinstance(value, dict) and part in value:
                value = value[part]
            else:
                value = None
                break
        if value not in (None, []):
            found.append((path, value))
    return found

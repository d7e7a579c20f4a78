"""The design sections of docs/formats.md (``build_formats.py``): where the kinds that take a design
are, and each one's design fields, example design and a refused design with its errors."""

from __future__ import annotations

import json
from collections.abc import Callable


def designs_section(kinds, *, anchor: Callable[[str], str]) -> list[str]:
    """Where the kinds that take a design are, before the kinds' own sections."""
    designed = [kind for kind in kinds if kind.design_schema is not None]
    links = ", ".join(f"[`{kind.name}`](#{anchor(f'`{kind.name}` — {kind.label}')})" for kind in designed)
    return (
        []
        if not designed
        else [
            "## Designs\n",
            f"The kinds {links} take a *design*: a project of one stores its own questions (JSON) and the item "
            "fields its annotators see, and its item payloads and values follow from that design. Every item of "
            'such a project is `{"fields": {...}, "meta": {...}}`: `fields` holds the texts the design shows '
            "(Markdown + TeX, in the design's order), and everything else, `meta` included, is hidden from raters. "
            "Each kind's section below gives its design's fields (\"Design\"), an example design (the one its "
            "tables are derived from) and a refused design with the errors it gets.\n",
        ]
    )


def design_lines(kind, *, field_table: Callable, block: Callable) -> list[str]:
    """A designed kind's design: its fields, the example design (the one the tables of this section
    are derived from) and a refused design with its errors."""
    if kind.design_schema is None:
        return []
    refused = kind.example_refused_design()
    errors = [f"{e.field}: {e.message}" if e.field else e.message for e in kind.check_design(refused)]
    return [
        "",
        "### Design",
        "",
        f"A `{kind.name}` project stores its *design*: the item fields annotators see and the questions they "
        "answer. Give it when the project is created (`create_project SLUG --kind "
        f'{kind.name} --design FILE.json`, `POST /api/projects/` with `"design"`, or the New project page); '
        "the payload and value tables of this section follow from the design below, and a project's own "
        "follow from its own. The design is frozen once the first answer exists (a changed design is a new "
        "project); while items exist its `fields` stay as they are. A design is at most 64 KiB of JSON.",
        "",
        *field_table(kind.name, kind.design_schema),
        "",
        "The example design (a project created without a design gets it):",
        "",
        *block("json", json.dumps(kind.design, ensure_ascii=False, indent=2)),
        "",
        "A refused design, and what the refusal says (each problem at its path in the design; nothing is stored):",
        "",
        *block("json", json.dumps(refused, ensure_ascii=False)),
        "",
        *block("text", "\n".join(errors)),
    ]

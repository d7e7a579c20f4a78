"""The dataset card (``README.md``): a YAML header the Hugging Face Hub reads, and a body that says
how the data was annotated."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from validation.release.schema import hf_features

__all__ = ["CardFacts", "SplitFile", "dataset_card", "size_category"]


@dataclass(frozen=True)
class SplitFile:
    """One written Parquet file of a split."""

    split: str
    path: str  # relative to the release folder, with forward slashes
    rows: int
    bytes: int
    sha256: str


@dataclass(frozen=True)
class CardFacts:
    """What the card and Croissant say, gathered once by the release build."""

    title: str
    slug: str
    description: str
    license: str
    language: tuple[str, ...]
    creators: tuple[str, ...]
    citation: str
    url: str
    version: str
    date_published: str
    kind_label: str
    kind_description: str
    task_categories: tuple[str, ...]
    guidelines: str
    overlap: int
    people: int
    mean_people_per_item: float | None
    suggestion_exposure: str
    agreement_markdown: str
    agreement_summary: str
    snapshot: str
    models: tuple[str, ...]
    annotator_demographics: str
    splits: Mapping[str, Any]  # split name → validation.release.splits.Split
    files: Sequence[SplitFile]


_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a row count."""
    return next((label for limit, label in _SIZES if rows < limit), "1M<n<10M" if rows < 10_000_000 else "n>10M")


def _header(facts: CardFacts) -> dict[str, Any]:
    rows = {name: sum(f.rows for f in facts.files if f.split == name) for name in facts.splits}
    largest = max(rows.values(), default=0)
    return {
        "pretty_name": facts.title,
        "license": facts.license or "other",
        "language": list(facts.language),
        "task_categories": list(facts.task_categories),
        "annotations_creators": ["expert-generated", *(["machine-generated"] if facts.models else [])],
        "size_categories": [size_category(largest)],
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": name, "path": f"data/{name}-*.parquet"}],
                **({"default": True} if index == 0 else {}),
            }
            for index, name in enumerate(facts.splits)
        ],
        "dataset_info": [
            {
                "config_name": name,
                "features": hf_features(split.schema),
                "splits": [
                    {
                        "name": name,
                        "num_bytes": sum(f.bytes for f in facts.files if f.split == name),
                        "num_examples": rows[name],
                    }
                ],
            }
            for name, split in facts.splits.items()
        ],
    }


def _fields_table(split: Any) -> str:
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for field in split.schema:
        lines.append(f"| `{field.name}` | {field.type} | {split.meanings[field.name]} |")
    return "\n".join(lines)


def _demote(markdown: str) -> str:
    """The report's headings two levels down, under the card's own."""
    return re.sub(r"^(#+) ", lambda m: "#" * min(6, len(m.group(1)) + 2) + " ", markdown, flags=re.MULTILINE)


def dataset_card(facts: CardFacts) -> str:
    """The whole ``README.md``: YAML front matter, then the card's sections."""
    header = yaml.safe_dump(_header(facts), sort_keys=False, allow_unicode=True, width=1000)
    per_item = "" if facts.mean_people_per_item is None else f" (on average {facts.mean_people_per_item:.2f})"
    parts = [
        f"---\n{header}---\n",
        f"# {facts.title}\n",
        (facts.description or f"Human validation of model annotations: {facts.kind_label}.") + "\n",
        "## How the data was annotated\n",
        f"- Task: {facts.kind_label}. {facts.kind_description}".rstrip() + "\n"
        f"- People: {facts.people}, named here by pseudonym; each item was to be answered by {facts.overlap} "
        f"of them{per_item}.\n"
        f"- Model suggestions: {facts.suggestion_exposure}.\n"
        "- Platform: Concord (human validation of LLM annotations).\n",
    ]
    if facts.guidelines.strip():
        parts += ["### Guidelines shown to the annotators\n", facts.guidelines.strip() + "\n"]
    parts += ["## Agreement\n", f"{facts.snapshot}\n", _demote(facts.agreement_markdown.strip()) + "\n"]
    if facts.models:
        parts += ["## Models\n", "\n".join(f"- {m}" for m in facts.models) + "\n"]
    if facts.annotator_demographics.strip():
        parts += ["## Annotators\n", facts.annotator_demographics.strip() + "\n"]
    parts.append("## Files\n")
    for name, split in facts.splits.items():
        files = [f for f in facts.files if f.split == name]
        listing = ", ".join(f"`{f.path}` ({f.rows} rows, SHA-256 `{f.sha256}`)" for f in files)
        parts += [f"### {name}\n", f"{split.description} {listing}\n", _fields_table(split) + "\n"]
    if facts.citation.strip():
        parts += ["## Citation\n", f"```\n{facts.citation.strip()}\n```\n"]
    return "\n".join(parts)

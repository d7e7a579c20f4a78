"""``croissant.json``: Croissant 1.0 metadata (MLCommons), with its Responsible-AI fields filled from
what Concord recorded about the annotation.

Every Parquet file is a ``cr:FileObject`` with its SHA-256; each split is a ``cr:RecordSet`` whose
fields name their column. A struct column is a field with one sub-field per member (read by a JSON
path into the column), a list column a repeated field, so a Croissant reader gets the same values the
Parquet holds.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from validation.release.card import CardFacts
from validation.release.schema import croissant_type

__all__ = ["CONFORMS_TO", "croissant_metadata"]

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
PARQUET = "application/x-parquet"

#: Croissant 1.0's JSON-LD context, as the specification's examples write it.
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _field(
    record_id: str, name: str, kind: pa.DataType, source: dict[str, Any], json_path: str | None = None
) -> dict[str, Any]:
    """One field over ``column`` (``json_path`` inside it for a struct member)."""
    field_id = f"{record_id}/{name}"
    field: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": name}
    repeated = pa.types.is_list(kind)
    inner = kind.value_type if repeated else kind
    if repeated:
        field["repeated"] = True
    if pa.types.is_struct(inner):
        # A list of structs is read whole by each member's path, so members of a repeated struct read
        # ``[*].member`` and come back as lists.
        prefix = f"{json_path}." if json_path else ""
        field["subField"] = [
            _field(field_id, member.name, member.type, source, f"{prefix}{'[*].' if repeated else ''}{member.name}")
            for member in inner
        ]
        return field
    field["dataType"] = croissant_type(inner)
    field["source"] = {**source, **({"transform": {"jsonPath": json_path}} if json_path else {})}
    return field


def _source(facts: CardFacts, split: str, column: str) -> dict[str, Any]:
    files = [f for f in facts.files if f.split == split]
    if len(files) == 1:
        return {"fileObject": {"@id": files[0].path}, "extract": {"column": column}}
    return {"fileSet": {"@id": f"{split}-files"}, "extract": {"column": column}}


def _distribution(facts: CardFacts) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": f.path,
            "name": f.path,
            "contentUrl": f.path,
            "contentSize": f"{f.bytes} B",
            "encodingFormat": PARQUET,
            "sha256": f.sha256,
        }
        for f in facts.files
    ]
    for name in facts.splits:
        if sum(f.split == name for f in facts.files) > 1:
            out.append(
                {
                    "@type": "cr:FileSet",
                    "@id": f"{name}-files",
                    "name": f"{name}-files",
                    "encodingFormat": PARQUET,
                    "includes": f"data/{name}-*.parquet",
                }
            )
    return out


def _record_sets(facts: CardFacts) -> list[dict[str, Any]]:
    sets = []
    for name, split in facts.splits.items():
        if not any(f.split == name for f in facts.files):
            continue
        fields = []
        for column in split.schema:
            field = _field(name, column.name, column.type, _source(facts, name, column.name))
            field["description"] = split.meanings[column.name]
            fields.append(field)
        sets.append(
            {"@type": "cr:RecordSet", "@id": name, "name": name, "description": split.description, "field": fields}
        )
    return sets


def croissant_metadata(facts: CardFacts) -> dict[str, Any]:
    """The release's Croissant 1.0 JSON-LD document."""
    creators = [{"@type": "sc:Person", "name": name} for name in facts.creators]
    metadata: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": facts.slug,
        "description": facts.description or f"{facts.title}: human validation of model annotations.",
        "license": facts.license or "other",
        "url": facts.url or f"https://example.invalid/{facts.slug}",
        "creator": creators or [{"@type": "sc:Organization", "name": facts.title}],
        "datePublished": facts.date_published,
        "version": facts.version,
        "citeAs": facts.citation or f"{facts.title} ({facts.date_published[:4]}), version {facts.version}.",
        "inLanguage": list(facts.language),
        "distribution": _distribution(facts),
        "recordSet": _record_sets(facts),
        "rai:dataAnnotationProtocol": (
            f"{facts.kind_label}. {facts.kind_description} Each item was to be answered by {facts.overlap} "
            f"people; model suggestions: {facts.suggestion_exposure}."
            + (f" Guidelines: {facts.guidelines.strip()}" if facts.guidelines.strip() else "")
        ),
        "rai:dataAnnotationPlatform": "Concord (human validation of LLM annotations)",
        "rai:dataAnnotationAnalysis": facts.agreement_summary,
        "rai:annotationsPerItem": (
            f"{facts.overlap}"
            if facts.mean_people_per_item is None
            else f"{facts.overlap} planned; {facts.mean_people_per_item:.2f} on average"
        ),
        "rai:machineAnnotationTools": list(facts.models),
    }
    if facts.annotator_demographics.strip():
        metadata["rai:annotatorDemographics"] = facts.annotator_demographics.strip()
    return metadata

"""Building a release folder from a project, or from one of its frozen snapshots.

The folder is written aside and renamed into place when complete, so a failed release leaves nothing
half written. Parquet files are cut at ``CONCORD_RELEASE_SHARD_BYTES`` (500 MB by default) and named
as the Hub names shards: ``data/<split>-00000-of-00002.parquet``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings

from annotation.errors import FieldError, ValidationFailed
from annotation.models import Project, SuggestionExposure
from judges.models import JudgeRun
from judges.run_files.export import run_provenance
from validation.models import ReleaseSettings, ReportSnapshot
from validation.release.card import CardFacts, SplitFile, dataset_card
from validation.release.croissant import croissant_metadata
from validation.release.splits import SPLITS, Split, rater_pseudonyms, split_rows
from validation.reports import ReportParameters
from validation.selectors import project_report
from validation.services import render_report

__all__ = [
    "NOT_A_REPORT_SNAPSHOT",
    "OUTPUT_EXISTS",
    "SNAPSHOT_STALE",
    "UNKNOWN_SPLIT",
    "Release",
    "release_archive",
    "release_build",
    "release_zip",
]

UNKNOWN_SPLIT = "unknown split {name!r}; choose from {choices}"
NO_SPLIT = "name at least one split"
OUTPUT_EXISTS = "{path} exists and is not empty: a release is written into a new folder"
NOT_A_REPORT_SNAPSHOT = "snapshot {id} is not an agreement report snapshot of {slug}"
SNAPSHOT_STALE = (
    "the answers changed since snapshot {id} was frozen (inputs {then}… now {now}…): release from the live "
    "project, or freeze a new snapshot first"
)
_BATCH = 5_000


@dataclass(frozen=True)
class Release:
    """A written release: its folder, files and the rows of each split."""

    path: Path
    files: tuple[SplitFile, ...]
    rows: dict[str, int]
    snapshot_id: int | None


def _check_splits(names: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    if not chosen:
        raise ValidationFailed([FieldError("splits", NO_SPLIT)])
    for name in chosen:
        if name not in SPLITS:
            raise ValidationFailed([FieldError("splits", UNKNOWN_SPLIT.format(name=name, choices=", ".join(SPLITS)))])
    return tuple(n for n in SPLITS if n in chosen)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_split(split: Split, folder: Path) -> list[SplitFile]:
    """The split's rows as Parquet shards of at most the configured size (one shard at least)."""
    limit = settings.CONCORD_RELEASE_SHARD_BYTES
    shards: list[tuple[Path, int]] = []
    writer: pq.ParquetWriter | None = None
    current: Path | None = None
    rows_in_shard = 0
    rows = split.rows()
    while True:
        batch = list(islice(rows, _BATCH))
        if not batch and (writer is not None or shards):
            break
        if writer is None:
            current = folder / f".{split.name}-{len(shards)}.parquet"
            writer = pq.ParquetWriter(str(current), split.schema)
            rows_in_shard = 0
        writer.write_table(pa.Table.from_pylist(batch, schema=split.schema))
        rows_in_shard += len(batch)
        if not batch or current is None:
            break
        if current.stat().st_size >= limit:
            writer.close()
            shards.append((current, rows_in_shard))
            writer = None
    if writer is not None and current is not None:
        writer.close()
        shards.append((current, rows_in_shard))
    out = []
    for number, (path, count) in enumerate(shards):
        name = f"{split.name}-{number:05d}-of-{len(shards):05d}.parquet"
        final = path.with_name(name)
        path.rename(final)
        out.append(SplitFile(split.name, f"data/{name}", count, final.stat().st_size, _sha256(final)))
    return out


def _snapshot(project: Project, snapshot_id: int) -> ReportSnapshot:
    snapshot = ReportSnapshot.objects.filter(pk=snapshot_id, project=project, evaluation="").first()
    if snapshot is None:
        raise ValidationFailed(
            [FieldError("snapshot", NOT_A_REPORT_SNAPSHOT.format(id=snapshot_id, slug=project.slug))]
        )
    return snapshot


def _pseudonymised(text: str, pseudonyms: dict[str, str]) -> str:
    """``text`` with every rater's name, as a whole word, replaced by their pseudonym."""
    for name in sorted(pseudonyms, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.@+-]){re.escape(name)}(?![\w.@+-])", pseudonyms[name], text)
    return text


def _agreement(project: Project, snapshot: ReportSnapshot | None) -> tuple[str, str, str]:
    """The agreement tables (Markdown), a one-paragraph summary, and which numbers they are."""
    if snapshot is None:
        # The report page's own computation: a release right after reading the report reuses it.
        report = project_report(project=project, parameters=ReportParameters())
        markdown, numbers = render_report(report, "md"), report.numbers()
        which = f"Computed at release ({report.inputs_sha256[:12]}…)."
    else:
        parameters = ReportParameters.from_json_dict(snapshot.parameters)
        report = project_report(project=project, parameters=parameters)
        if report.inputs_sha256 != snapshot.inputs_sha256:
            raise ValidationFailed(
                [
                    FieldError(
                        "snapshot",
                        SNAPSHOT_STALE.format(
                            id=snapshot.pk, then=snapshot.inputs_sha256[:12], now=report.inputs_sha256[:12]
                        ),
                    )
                ]
            )
        markdown, numbers = snapshot.markdown, snapshot.numbers
        title = f" ({snapshot.title})" if snapshot.title else ""
        frozen = f"{snapshot.created_at:%Y-%m-%d}"
        which = f"From snapshot {snapshot.pk}{title}, frozen {frozen}; inputs {snapshot.inputs_sha256}."
    summary = []
    for name, numbers_of in numbers.get("dimensions", {}).items():
        alpha = numbers_of.get("krippendorff_alpha")
        text = "undefined" if alpha is None else f"{alpha:.3f}"
        summary.append(
            f"{name}: Krippendorff's alpha {text} ({numbers_of.get('level')}, {numbers_of.get('n_units')} items)"
        )
    return markdown, "; ".join(summary) or "No agreement could be computed (fewer than two people per item).", which


def _models(project: Project) -> tuple[str, ...]:
    lines = []
    for run in JudgeRun.objects.filter(project=project).select_related("judge").order_by("pk"):
        provenance = run_provenance(run)
        prompt = f", prompt {provenance['prompt']}" if provenance.get("prompt") else ""
        lines.append(f"run {run.pk}: {provenance.get('model', run.judge.backend_label)}{prompt}")
    return tuple(lines)


def _exposure(project: Project) -> str:
    if project.suggestion_exposure == SuggestionExposure.RANDOMISED:
        return f"shown at random with probability {project.suggestion_probability:g} per item and annotator"
    shown = project.suggestion_exposure == SuggestionExposure.SHOWN
    return "shown beside every item" if shown else "never shown"


def release_build(
    *,
    project: Project,
    directory: str | Path,
    splits: Iterable[str] = SPLITS,
    snapshot_id: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Release:
    """Write the release folder: ``data/*.parquet``, ``README.md`` (the dataset card) and
    ``croissant.json``. With ``snapshot_id`` the agreement is the snapshot's, and the release is
    refused if the answers changed since it was frozen.

    Raises
    ------
    ValidationFailed
        An unknown split, a snapshot of another project or a stale one, or a folder that is not empty.
    """
    chosen = _check_splits(splits)
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ValidationFailed([FieldError("output", OUTPUT_EXISTS.format(path=target))])
    snapshot = _snapshot(project, snapshot_id) if snapshot_id is not None else None
    say = progress or (lambda _step: None)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        say("agreement")
        markdown, summary, which = _agreement(project, snapshot)
        pseudonyms = rater_pseudonyms(project)
        (work / "data").mkdir()
        built = {name: split_rows(project, name) for name in chosen}
        files: list[SplitFile] = []
        for name, split in built.items():
            say(f"split {name}")
            files += _write_split(split, work / "data")
        rows = {name: sum(f.rows for f in files if f.split == name) for name in chosen}
        facts = _facts(project, built, files, markdown, summary, which, pseudonyms)
        say("card and croissant")
        (work / "README.md").write_text(dataset_card(facts), encoding="utf-8")
        (work / "croissant.json").write_text(
            json.dumps(croissant_metadata(facts), indent=2, ensure_ascii=False), encoding="utf-8"
        )
        if target.exists():
            target.rmdir()
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Release(path=target, files=tuple(files), rows=rows, snapshot_id=snapshot.pk if snapshot else None)


def _facts(
    project: Project,
    built: dict[str, Split],
    files: list[SplitFile],
    markdown: str,
    summary: str,
    which: str,
    pseudonyms: dict[str, str],
) -> CardFacts:
    meta = ReleaseSettings.objects.filter(project=project).first() or ReleaseSettings(project=project)
    kind = project.task_kind
    answers = project.annotations.values("item_id", "rater").distinct().count()
    answered_items = project.annotations.values("item_id").distinct().count()
    return CardFacts(
        title=project.title,
        slug=project.slug,
        description=meta.description,
        license=meta.license,
        language=tuple(c.strip() for c in meta.language.split(",") if c.strip()) or ("en",),
        creators=tuple(line.strip() for line in meta.creators.splitlines() if line.strip()),
        citation=meta.citation,
        url=meta.url,
        version=meta.version,
        date_published=datetime.now(UTC).date().isoformat(),
        kind_label=kind.label,
        kind_description=kind.description,
        task_categories=kind.hub_task_categories,
        guidelines=_pseudonymised(project.guidelines, pseudonyms),
        overlap=project.overlap,
        people=len(pseudonyms),
        mean_people_per_item=answers / answered_items if answered_items else None,
        suggestion_exposure=_exposure(project),
        agreement_markdown=_pseudonymised(markdown, pseudonyms),
        agreement_summary=summary,
        snapshot=which,
        models=_models(project),
        annotator_demographics=meta.annotator_demographics,
        splits=built,
        files=files,
    )


def release_zip(release: Release, path: str | Path) -> Path:
    """The release folder as one .zip (the folder's name at its root)."""
    target = Path(path)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(release.path.rglob("*")):
            if file.is_file():
                archive.write(file, arcname=str(Path(release.path.name) / file.relative_to(release.path)))
    return target


def release_archive(*, project: Project, splits: Iterable[str] = SPLITS, snapshot_id: int | None = None) -> BinaryIO:
    """The release as an open .zip, for a download: built in a temporary folder that is gone when this
    returns (the open handle keeps the archive's bytes until it is closed)."""
    scratch = Path(tempfile.mkdtemp(prefix="concord-release-"))
    try:
        release = release_build(
            project=project, directory=scratch / f"{project.slug}-release", splits=splits, snapshot_id=snapshot_id
        )
        archive = release_zip(release, scratch / "release.zip")
        handle = archive.open("rb")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return handle

"""A release folder holds what a venue and the Hub read: Parquet splits with typed columns, a dataset card
whose YAML names every split, and a croissant.json that mlcroissant validates and loads row for row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from django.conf import settings

from annotation.errors import ValidationFailed
from annotation.kinds import all_kinds
from tests.validation.conftest import annotate
from tests.validation.release.conftest import RATERS
from tests.validation.release.conftest import study as _study
from validation.goldset import gold_summary
from validation.models import ReleaseSettings
from validation.release import SPLITS, release_build
from validation.release.build import OUTPUT_EXISTS, SNAPSHOT_STALE, UNKNOWN_SPLIT
from validation.reports import ReportParameters
from validation.services import report_snapshot_create

pytestmark = pytest.mark.django_db


def _card_header(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def _croissant_rows(folder: Path) -> dict[str, list[dict]]:
    """Every record set of the release as mlcroissant reads it (in a process of its own)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.validation.release.croissant_reader", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=settings.BASE_DIR,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("kind_name", [k.name for k in all_kinds()])
def test_every_kind_releases_typed_splits_a_card_and_croissant(kind_name, make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, kind_name)
    release = release_build(project=project, directory=tmp_path / "release")
    folder = release.path
    assert release.rows == {"gold": gold_summary(project=project).ready, "answers": 12, "runs": 2}
    header = _card_header(folder)
    assert [c["config_name"] for c in header["configs"]] == list(SPLITS)
    assert {i["config_name"] for i in header["dataset_info"]} == set(SPLITS)
    assert header["annotations_creators"] == ["expert-generated", "machine-generated"]
    read = _croissant_rows(folder)
    for split in SPLITS:
        files = sorted((folder / "data").glob(f"{split}-*.parquet"))
        assert [f.name for f in files] == [f"{split}-00000-of-00001.parquet"]
        table = pq.read_table(files[0])
        assert table.num_rows == release.rows[split]
        # The card's features are the Parquet's, as `datasets` reads them.
        from datasets import Features

        info = next(i for i in header["dataset_info"] if i["config_name"] == split)
        assert Features._from_yaml_list(info["features"]) == Features.from_arrow_schema(table.schema)
        rows = read[split]
        assert len(rows) == table.num_rows
        ids = sorted(r[f"{split}/external_id"] for r in rows)
        assert ids == sorted(table.column("external_id").to_pylist())
    answers = pq.read_table(folder / "data" / "answers-00000-of-00001.parquet").to_pylist()
    assert {a["rater"] for a in answers} == {"rater-01", "rater-02", "rater-03"}
    runs = pq.read_table(folder / "data" / "runs-00000-of-00001.parquet").to_pylist()
    assert sorted(r["status"] for r in runs) == ["failed", "ok"]
    assert next(r for r in runs if r["status"] == "failed")["value"] is None


def test_no_rater_name_reaches_any_file(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    project.guidelines = "Ask bob if unsure."
    project.save(update_fields=["guidelines"])
    release = release_build(project=project, directory=tmp_path / "release")
    for path in release.path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for name in RATERS:
                assert name.encode() not in data, (path.name, name)
    assert "Ask rater-02 if unsure." in (release.path / "README.md").read_text()


def test_values_are_typed_from_the_kind_schema_and_match_croissant(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    release = release_build(project=project, directory=tmp_path / "release")
    table = pq.read_table(release.path / "data" / "gold-00000-of-00001.parquet")
    assert str(table.schema.field("gold").type) == (
        "struct<scores: struct<CT: int64, SA: int64, SC: int64, CLM: int64, MS: int64, AMR: int64>, comment: string>"
    )
    gold = {r["external_id"]: r for r in table.to_pylist()}
    rows = _croissant_rows(release.path)["gold"]
    for row in rows:
        # mlcroissant hands a struct nested in a struct back beside its parent, keyed by its full path.
        scores = row["gold/gold/scores"]
        expected = gold[row["gold/external_id"]]["gold"]["scores"]
        assert {key.rsplit("/", 1)[1]: value for key, value in scores.items()} == expected


def test_croissant_carries_hashes_and_the_annotation_fields(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    ReleaseSettings.objects.create(
        project=project,
        license="cc-by-4.0",
        creators="Ada Lovelace\nAlan Turing",
        citation="@misc{x, title={X}}",
        url="https://example.org/data",
        annotator_demographics="Three graduate students.",
    )
    release = release_build(project=project, directory=tmp_path / "release")
    metadata = json.loads((release.path / "croissant.json").read_text())
    assert metadata["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert [c["name"] for c in metadata["creator"]] == ["Ada Lovelace", "Alan Turing"]
    assert metadata["license"] == "cc-by-4.0" and metadata["citeAs"] == "@misc{x, title={X}}"
    by_path = {f.path: f for f in release.files}
    for entry in metadata["distribution"]:
        assert entry["sha256"] == by_path[entry["contentUrl"]].sha256
    assert metadata["rai:annotationsPerItem"].startswith("3 planned; 3.00")
    run = project.judge_runs.select_related("judge").get()
    assert metadata["rai:machineAnnotationTools"] == [f"run {run.pk}: test-llm-7b, prompt {run.judge.prompt_key}"]
    assert "Krippendorff's alpha" in metadata["rai:dataAnnotationAnalysis"]
    assert metadata["rai:annotatorDemographics"] == "Three graduate students."
    assert len(_croissant_rows(release.path)["gold"]) == 4  # mlcroissant validated the whole document first


def test_demographics_are_left_out_unless_entered(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    release = release_build(project=project, directory=tmp_path / "release", splits=["gold"])
    metadata = json.loads((release.path / "croissant.json").read_text())
    assert "rai:annotatorDemographics" not in metadata
    assert [r["name"] for r in metadata["recordSet"]] == ["gold"]
    assert sorted(p.name for p in (release.path / "data").iterdir()) == ["gold-00000-of-00001.parquet"]


def test_large_splits_are_cut_into_shards_that_croissant_reads_whole(make_project, judge_run, tmp_path, settings):
    settings.CONCORD_RELEASE_SHARD_BYTES = 1  # every batch of rows closes a file
    project = _study(make_project, judge_run, "copa_likert", items=12)
    import validation.release.build as build

    original = build._BATCH
    build._BATCH = 5
    try:
        release = release_build(project=project, directory=tmp_path / "release", splits=["answers"])
    finally:
        build._BATCH = original
    names = sorted(p.name for p in (release.path / "data").iterdir())
    assert names == [f"answers-0000{i}-of-00008.parquet" for i in range(8)]
    assert sum(pq.read_metadata(release.path / "data" / n).num_rows for n in names) == 36
    assert len(_croissant_rows(release.path)["answers"]) == 36
    header = _card_header(release.path)
    assert header["configs"][0]["data_files"] == [{"split": "answers", "path": "data/answers-*.parquet"}]


def test_a_snapshot_release_uses_its_tables_and_is_refused_once_answers_change(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    snapshot = report_snapshot_create(project=project, parameters=ReportParameters(bootstrap=0), title="camera-ready")
    release = release_build(project=project, directory=tmp_path / "one", snapshot_id=snapshot.pk)
    assert f"From snapshot {snapshot.pk} (camera-ready)" in (release.path / "README.md").read_text()
    item = project.items.first()
    annotate(project, item, "bob", {"scores": dict.fromkeys(("CT", "SA", "SC", "CLM", "MS", "AMR"), 0)}, version=2)
    with pytest.raises(ValidationFailed) as refused:
        release_build(project=project, directory=tmp_path / "two", snapshot_id=snapshot.pk)
    assert refused.value.errors[0].field == "snapshot"
    assert refused.value.errors[0].message.startswith(SNAPSHOT_STALE.split("{")[0])
    assert not (tmp_path / "two").exists()


def test_bad_requests_write_nothing(make_project, judge_run, tmp_path):
    project = _study(make_project, judge_run, "copa_likert")
    with pytest.raises(ValidationFailed) as unknown:
        release_build(project=project, directory=tmp_path / "a", splits=["gold", "secrets"])
    assert unknown.value.errors[0].message == UNKNOWN_SPLIT.format(name="secrets", choices="gold, answers, runs")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "keep.txt").write_text("mine")
    with pytest.raises(ValidationFailed) as exists:
        release_build(project=project, directory=tmp_path / "b")
    assert exists.value.errors[0].message == OUTPUT_EXISTS.format(path=tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    other = _study(make_project, judge_run, "intent_mcq")
    snapshot = report_snapshot_create(project=other, parameters=ReportParameters(bootstrap=0))
    with pytest.raises(ValidationFailed):
        release_build(project=project, directory=tmp_path / "c", snapshot_id=snapshot.pk)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]

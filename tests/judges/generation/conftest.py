"""Fixtures for generation runs: source files written from the samples in fixtures/sources/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judges.models import GenerationRun

SOURCES = Path(__file__).resolve().parents[3] / "fixtures" / "sources"
THREADS = SOURCES / "stackexchange_threads.jsonl"
LABELS = SOURCES / "intent_labels.jsonl"


def sample_threads() -> list[dict]:
    return [json.loads(line) for line in THREADS.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_threads(path: Path, count: int, change=None) -> Path:
    """``count`` threads from the samples, each with its own question id and a marker ``#<n>#`` in
    its title, so a server script can tell the records apart."""
    threads = sample_threads()
    with path.open("w", encoding="utf-8") as handle:
        for n in range(count):
            thread = json.loads(json.dumps(threads[n % len(threads)]))
            thread["question_id"] = 900_000 + n
            thread["title"] = f"#{n}# {thread['title']}"
            if change:
                change(n, thread)
            handle.write(json.dumps(thread, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def threads_file(tmp_path) -> Path:
    return write_threads(tmp_path / "threads.jsonl", 6)


def run_now(**options) -> GenerationRun:
    """Start a generation run and send its chunks; with in-process tasks it is finished on return."""
    from judges.generation.services import generation_run_start
    from judges.tasks import run_dispatch

    if options.get("backend") != "baseline":
        options.setdefault("model", "test-model")
    run = generation_run_start(**options)
    run_dispatch(run_type="generation", run_id=run.pk)
    return GenerationRun.objects.get(pk=run.pk)

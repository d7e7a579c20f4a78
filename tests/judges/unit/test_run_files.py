"""Imported runs (judges.run_files): every kind imports good and failed lines; a bad file stores nothing
and names line and field; export writes the same format back, losslessly."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.errors import ImportRejected
from annotation.importing import BATCH
from annotation.jsonsafe import NUL_CHARACTER
from annotation.kinds import all_kinds
from judges.backends import backend_class, runnable_backend_names
from judges.errors import NOT_RUNNABLE, JudgeInvalid
from judges.models import Judge, JudgeRun, Suggestion
from judges.run_files import (
    BOTH_VALUE_AND_ERROR,
    IMPORTED_BEFORE,
    MODEL_MISSING,
    NEITHER_VALUE_NOR_ERROR,
    NO_OPTIONS,
    NO_SUCH_ITEM,
    NOT_SCORE,
    judge_run_export,
    judge_run_import,
)
from judges.run_files.lines import MAX_LATENCY_MS, NOT_MILLISECONDS
from judges.services import judge_run_start
from tests.judges.conftest import add_items

KINDS = [k.name for k in all_kinds()]


def write_jsonl(folder: Path, lines: list[dict], name: str = "run.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def stored(run: JudgeRun) -> dict[str, tuple]:
    return {
        s.item.external_id: (s.status, s.value, s.failure_reason, s.raw_output)
        for s in Suggestion.objects.filter(run=run).select_related("item")
    }


@pytest.mark.django_db
class ImportedRunEveryKindTests:
    @pytest.mark.parametrize("kind", KINDS)
    def test_good_and_failed_lines_become_one_run_with_its_provenance(self, kind, make_project, tmp_path):
        project = make_project(kind)
        add_items(project, 3)
        value = project.task_kind.example_value()
        path = write_jsonl(
            tmp_path,
            [
                {"provenance": {"model": "org/model-7b", "prompt": "house_prompt.v3", "producer_run_id": "batch_1",
                                "sampling": {"temperature": 0.7, "seed": 7}}},
                {"external_id": "item-00000", "value": value, "raw_output": json.dumps(value), "latency_ms": 812.5,
                 "prompt_tokens": 900, "completion_tokens": 40, "score": 0.9},
                {"external_id": "item-00001", "error": "not JSON", "raw_output": "Sure! Here is"},
            ],
        )  # fmt: skip
        result = judge_run_import(project=project, path=path)
        run = result.run
        assert (result.ok, result.failed) == (1, 1)
        assert (run.status, run.total, run.ok_count, run.failed_count) == ("completed", 2, 1, 1)
        assert run.judge.backend == "imported" and run.judge.backend_label == "imported · org/model-7b"
        assert run.judge.is_baseline is False and run.judge.prompt_key == "house_prompt.v3" and run.judge.seed == 7
        assert run.provenance["producer_run_id"] == "batch_1" and len(run.provenance["file_sha256"]) == 64
        assert stored(run) == {
            "item-00000": ("ok", value, "", json.dumps(value)),
            "item-00001": ("failed", None, "not JSON", "Sure! Here is"),
        }
        ok = Suggestion.objects.get(run=run, status="ok")
        assert (ok.tokens_in, ok.tokens_out, ok.latency_ms, ok.score) == (900, 40, 812.5, 0.9)

    @pytest.mark.parametrize("kind", KINDS)
    def test_a_bad_line_stores_nothing_and_names_line_and_field(self, kind, make_project, tmp_path):
        project = make_project(kind)
        add_items(project, 3)
        value = project.task_kind.example_value()
        path = write_jsonl(
            tmp_path,
            [
                {"external_id": "item-00000", "value": value},
                {"external_id": "nope", "value": value},
                {"external_id": "item-00001", "value": {"not": "the schema"}},
                {"external_id": "item-00002", "value": value, "error": "both"},
                {"external_id": "item-00002"},
                {"external_id": "item-00000", "error": "again", "score": 2},
                {"external_id": "item-00001", "value": value, "latency_ms": 10**400},  # past a double
                {"external_id": "item-00001", "value": value, "latency_ms": MAX_LATENCY_MS + 1},
            ],
        )
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=project, path=path, model="m")
        errors = {(e.line, e.field) for e in refused.value.errors}
        messages = [str(e) for e in refused.value.errors]
        assert (2, "external_id") in errors and any(NO_SUCH_ITEM.format(external_id="nope") in m for m in messages)
        assert any(line == 3 and f.startswith("value") for line, f in errors)
        assert (4, "error") in errors and any(BOTH_VALUE_AND_ERROR in m for m in messages)
        assert (5, "value") in errors and any(NEITHER_VALUE_NOR_ERROR in m for m in messages)
        assert (6, "score") in errors and any(NOT_SCORE in m for m in messages)
        assert {(7, "latency_ms"), (8, "latency_ms")} <= errors and any(NOT_MILLISECONDS in m for m in messages)
        assert not JudgeRun.objects.exists() and not Judge.objects.exists() and not Suggestion.objects.exists()

    @pytest.mark.parametrize("kind", KINDS)
    def test_export_then_import_elsewhere_is_lossless(self, kind, make_project, tmp_path):
        source, target = make_project(kind, slug="source"), make_project(kind, slug="target")
        add_items(source, 3)
        add_items(target, 3)
        value = source.task_kind.example_value()
        lines = [
            {"external_id": "item-00000", "value": value, "raw_output": "{...}", "latency_ms": 3.5,
             "prompt_tokens": 10, "completion_tokens": 2, "score": 0.25},
            {"external_id": "item-00002", "error": "refused", "raw_output": "I cannot"},
        ]  # fmt: skip
        first = judge_run_import(project=source, path=write_jsonl(tmp_path, lines), model="m", prompt="free label")
        out = io.StringIO()
        assert judge_run_export(run=first.run, out=out, fmt="jsonl") == 2
        exported = [json.loads(line) for line in out.getvalue().splitlines()]
        assert exported[0] == {"provenance": {"model": "m", "prompt": "free label"}}
        assert exported[1:] == lines
        again = judge_run_import(project=target, path=write_jsonl(tmp_path, exported, "again.jsonl"))
        assert stored(again.run) == stored(first.run)
        assert again.run.judge.model == "m" and again.run.judge.prompt_key == "free label"


@pytest.mark.django_db
class SameOutputsTests:
    """A run exported and imported again into its project is named, not stored twice (issue 41, point 9)."""

    def test_a_re_imported_export_is_refused_naming_the_run_unless_allowed(self, copa, tmp_path):
        add_items(copa, 3)
        lines = [
            {"external_id": "item-00000", "value": copa.task_kind.example_value()},
            {"external_id": "item-00001", "error": "refused", "raw_output": "I cannot"},
        ]
        first = judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m").run
        out = io.StringIO()
        judge_run_export(run=first, out=out, fmt="jsonl")
        exported = write_jsonl(tmp_path, [json.loads(line) for line in out.getvalue().splitlines()], "again.jsonl")
        runs = JudgeRun.objects.count()
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=exported, model="m (exported)")
        assert str(refused.value.errors[0]).startswith(f"same outputs as run {first.pk}")
        assert JudgeRun.objects.count() == runs and Suggestion.objects.count() == 2
        with pytest.raises(CommandError) as command:
            call_command("import_run", copa.slug, str(exported), "--model", "m (exported)")
        assert f"same outputs as run {first.pk}" in str(command.value)
        again = judge_run_import(project=copa, path=exported, model="m (exported)", allow_same_outputs=True).run
        assert stored(again) == stored(first)
        # A failure on another item makes another run.
        lines[1]["external_id"] = "item-00002"
        judge_run_import(project=copa, path=write_jsonl(tmp_path, lines, "other.jsonl"), model="m2")


@pytest.mark.django_db
class ImportedRunRulesTests:
    def test_the_imported_backend_is_registered_calls_nothing_and_cannot_be_run(self, copa, tmp_path):
        assert "imported" not in runnable_backend_names() and backend_class("imported").is_baseline is False
        add_items(copa, 1)
        path = write_jsonl(tmp_path, [{"external_id": "item-00000", "error": "x"}])
        run = judge_run_import(project=copa, path=path, model="m").run
        with pytest.raises(JudgeInvalid) as refused:
            judge_run_start(judge=run.judge, project=copa)
        assert refused.value.message == NOT_RUNNABLE.format(judge=run.judge.name, backend="imported")

    def test_the_same_file_twice_is_refused_naming_the_first_run(self, copa, tmp_path):
        add_items(copa, 1)
        path = write_jsonl(tmp_path, [{"external_id": "item-00000", "error": "x"}])
        run = judge_run_import(project=copa, path=path, model="m").run
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=path, model="m")
        assert refused.value.errors[0].message == IMPORTED_BEFORE.format(run=run.pk)
        assert JudgeRun.objects.count() == 1

    def test_a_model_is_needed_from_the_options_or_the_file(self, copa, tmp_path):
        add_items(copa, 1)
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, [{"external_id": "item-00000", "error": "x"}]))
        assert refused.value.errors[0].message == MODEL_MISSING

    def test_a_repeated_id_is_refused_with_its_lines(self, copa, tmp_path):
        add_items(copa, 2)
        lines = [{"external_id": "item-00000", "error": "x"}, {"external_id": "item-00000 ", "error": "y"}]
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        assert [(e.line, e.field) for e in refused.value.errors] == [(1, "external_id")]
        assert "lines 1, 2" in refused.value.errors[0].message
        assert not Suggestion.objects.exists()

    def test_an_id_repeated_batches_apart_is_refused_with_its_lines(self, copa, tmp_path):
        """Suggestions are written batch by batch as the file is read: a repeat of a line already
        written is found all the same, and nothing of the file stays."""
        add_items(copa, BATCH + 10)
        lines = [{"external_id": f"item-{n:05d}", "error": "x"} for n in range(BATCH + 10)]
        lines.append({"external_id": "item-00003", "error": "again"})
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        assert [(e.line, e.field) for e in refused.value.errors] == [(4, "external_id")]
        assert f"lines 4, {BATCH + 11}" in refused.value.errors[0].message
        assert not Suggestion.objects.exists() and not JudgeRun.objects.exists()

    def test_repeated_ids_past_the_error_cap_are_named_in_line_order_then_counted(self, copa, tmp_path, settings):
        settings.CONCORD_IMPORT_ERROR_CAP = 3
        add_items(copa, 10)
        lines = [{"external_id": f"item-{n:05d}", "error": "x"} for n in range(10)]
        lines += [{"external_id": f"item-{n:05d}", "error": "again"} for n in (7, 2, 5, 1, 0)]
        lines.append({"external_id": "item-00007", "error": "thrice"})
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        # The first three ids found repeated (7, 2, 5) named by their first lines; two more counted.
        assert [e.line for e in refused.value.errors] == [3, 6, 8]
        assert "lines 8, 11, 16" in refused.value.errors[2].message
        assert refused.value.total == 5
        assert not Suggestion.objects.exists() and not JudgeRun.objects.exists()

    def test_repeats_are_found_alike_when_item_ids_are_spread_too_thin_for_cells(self, copa, tmp_path, monkeypatch):
        from judges.run_files import services as store

        monkeypatch.setattr(store._FileIds, "MAX_CELLS", 0)
        add_items(copa, 3)
        lines = [{"external_id": f"item-{n:05d}", "error": "x"} for n in (0, 1, 2, 1)]
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        assert [(e.line, e.field) for e in refused.value.errors] == [(2, "external_id")]
        assert "lines 2, 4" in refused.value.errors[0].message

    def test_a_write_the_database_refuses_fails_the_import_and_stores_nothing(self, copa, tmp_path):
        """Suggestions are written while the file is read: a row the table refuses (here: the
        judge's suggestion for an item it already has) fails the call, not later nor silently."""
        from django.db import IntegrityError, transaction

        from annotation.errors import ErrorCollector
        from annotation.importing import Record
        from judges.run_files import judge_run_store_outputs

        add_items(copa, BATCH + 5)
        first = judge_run_import(
            project=copa, path=write_jsonl(tmp_path, [{"external_id": "item-00001", "error": "x"}]), model="m"
        )
        records = [Record(n + 1, {"external_id": f"item-{n:05d}", "error": "x"}) for n in range(BATCH + 5)]
        with pytest.raises(IntegrityError), transaction.atomic():
            judge_run_store_outputs(
                project=copa, judge=first.run.judge, records=records, errors=ErrorCollector(cap=50),
                provenance={}, prompt_sha256=first.run.judge.suggestions.get().prompt_sha256,
            )  # fmt: skip
        assert Suggestion.objects.count() == 1

    def test_suggestions_follow_the_file_order_across_batches(self, copa, tmp_path):
        add_items(copa, BATCH + 10)
        order = [f"item-{n:05d}" for n in reversed(range(BATCH + 10))]
        judge_run_import(
            project=copa, path=write_jsonl(tmp_path, [{"external_id": i, "error": "x"} for i in order]), model="m"
        )
        written = Suggestion.objects.order_by("pk").values_list("item__external_id", flat=True)
        assert list(written) == order

    def test_text_the_copy_format_escapes_is_stored_exactly(self, copa, tmp_path):
        """Rows go to PostgreSQL as COPY text: tabs, line breaks, backslashes and a literal \\N in
        any text, and numbers of every form, come back as the file gave them."""
        add_items(copa, 2)
        tricky = 'a\tb\nc\r\nd \\ e \\N "q" \\t é \U0001f600'
        value = {**copa.task_kind.example_value(), "comment": tricky}
        lines = [
            {"external_id": "item-00000", "value": value, "raw_output": tricky, "latency_ms": 1e-05,
             "prompt_tokens": 0, "completion_tokens": 2**31 - 1, "score": 1},
            {"external_id": "item-00001", "error": tricky, "raw_output": "\\N", "latency_ms": 7},
        ]  # fmt: skip
        result = judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        rows = {s.item.external_id: s for s in Suggestion.objects.filter(run=result.run).select_related("item")}
        good, failed = rows["item-00000"], rows["item-00001"]
        assert (good.value, good.raw_output, good.failure_reason) == (value, tricky, "")
        assert (good.latency_ms, good.tokens_in, good.tokens_out, good.score) == (1e-05, 0, 2**31 - 1, 1.0)
        assert (failed.value, failed.raw_output, failed.failure_reason) == (None, "\\N", tricky.strip())
        assert (failed.latency_ms, failed.tokens_in, failed.score) == (7.0, None, None)

    def test_a_nul_character_is_refused_naming_line_and_field(self, copa, tmp_path):
        add_items(copa, 2)
        value = copa.task_kind.example_value()
        lines = [
            {"external_id": "item-00000", "value": value, "raw_output": "fine"},
            {"external_id": "item-00001", "value": value, "raw_output": "cut\u0000here"},
        ]
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        assert [(e.line, e.field, e.message) for e in refused.value.errors] == [(2, "raw_output", NUL_CHARACTER)]
        assert not Suggestion.objects.exists()

    def test_option_order_is_refused_for_a_kind_without_options(self, copa, tmp_path):
        add_items(copa, 1)
        value = copa.task_kind.example_value()
        lines = [{"external_id": "item-00000", "value": value, "option_order": [0, 1]}]
        with pytest.raises(ImportRejected) as refused:
            judge_run_import(project=copa, path=write_jsonl(tmp_path, lines), model="m")
        assert refused.value.errors[0].message == NO_OPTIONS.format(kind="copa_likert")

    def test_csv_runs_import_like_jsonl(self, copa, tmp_path):
        add_items(copa, 2)
        value = copa.task_kind.example_value()
        path = tmp_path / "run.csv"
        path.write_text(
            "external_id,value,error,raw_output,latency_ms,score\n"
            f'item-00000,"{json.dumps(value).replace(chr(34), chr(34) * 2)}",,,12.5,0.5\n'
            "item-00001,,timed out,,,\n",
            encoding="utf-8",
        )
        result = judge_run_import(project=copa, path=path, model="m")
        assert (result.ok, result.failed) == (1, 1)
        assert stored(result.run)["item-00000"][1] == value


@pytest.mark.django_db
class ImportRunCommandTests:
    def test_prints_the_run_and_its_counts(self, copa, tmp_path):
        add_items(copa, 2)
        value = copa.task_kind.example_value()
        path = write_jsonl(
            tmp_path, [{"external_id": "item-00000", "value": value}, {"external_id": "item-00001", "error": "x"}]
        )
        out = io.StringIO()
        call_command("import_run", copa.slug, str(path), "--model", "gpt-4o", "--prompt", "p.v2", stdout=out)
        result = json.loads(out.getvalue())
        run = JudgeRun.objects.get()
        assert result == {"run": run.pk, "ok": 1, "failed": 1}
        exported = tmp_path / "out.jsonl"
        out = io.StringIO()
        call_command("export_run", str(run.pk), "-o", str(exported), stdout=out)
        assert json.loads(out.getvalue())["lines"] == 2
        assert json.loads(exported.read_text().splitlines()[0])["provenance"]["model"] == "gpt-4o"

    def test_a_bad_file_exits_1_naming_line_and_field(self, copa, tmp_path):
        add_items(copa, 1)
        path = write_jsonl(tmp_path, [{"external_id": "nope", "error": "x"}])
        with pytest.raises(CommandError) as failed:
            call_command("import_run", copa.slug, str(path), "--model", "m")
        assert failed.value.returncode == 1 and "line 1" in str(failed.value) and "external_id" in str(failed.value)

    def test_sampling_that_is_not_json_is_a_usage_error(self, copa, tmp_path):
        with pytest.raises(CommandError) as failed:
            call_command("import_run", copa.slug, str(tmp_path / "x.jsonl"), "--model", "m", "--sampling", "{")
        assert failed.value.returncode == 2


@pytest.mark.django_db
class FormatsDocRunExamplesTests:
    """Every run file example of docs/formats.md imports into the items of its kind's example, and its
    CSV form stores what its JSONL form stores."""

    @pytest.mark.parametrize("kind", KINDS)
    def test_the_kind_s_run_examples_import_alike(self, kind, make_project, tmp_path):
        from annotation.importing import import_items
        from tests.annotation.test_formats_doc import EXAMPLES, write_example

        def example(target: str, fmt: str) -> dict:
            # The kind section's examples: items -0001 and -0002 (the page also has a one-item example).
            chosen = [e for e in EXAMPLES if (e["kind"], e["target"], e["fmt"]) == (kind, target, fmt)]
            return next(e for e in chosen if f"{kind}-0002" in e["body"])

        found = []
        for fmt in ("jsonl", "csv"):
            project = make_project(kind, slug=f"doc-{fmt}")
            import_items(project=project, path=write_example(tmp_path, example("items", "jsonl"), f"items-{fmt}"))
            result = judge_run_import(
                project=project, path=write_example(tmp_path, example("runs", fmt)), model="Qwen/Qwen3-32B"
            )
            assert (result.ok, result.failed) == (1, 1)
            found.append(
                sorted(
                    Suggestion.objects.filter(run=result.run).values_list(
                        "item__external_id",
                        "status",
                        "value",
                        "failure_reason",
                        "raw_output",
                        "latency_ms",
                        "tokens_in",
                        "tokens_out",
                        "score",
                        "option_order",
                    )  # fmt: skip
                )
            )
        assert found[0] == found[1]

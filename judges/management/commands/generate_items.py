"""generate_items SLUG --from FILE --step STEP --backend openai|vllm|baseline [--model M] [--endpoint NAME]
[--temperature T] [--max-tokens N] [--seed S] [--limit N] [--profile-from preceding|current]
[--concurrency N] [--failures] [--wait]

Exit codes are a contract (docs/cli.md): 0 when the run finished (its failed records are counted,
and listed with --failures), 1 on bad input (the file's line and field, an unknown endpoint, a run
that stopped), 2 on usage. stdout is one JSON object; with --wait, progress goes to stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from annotation.errors import ImportRejected, ValidationFailed
from annotation.models import Project
from judges.backends import get_backend
from judges.errors import MODEL_REQUIRED, JudgeError
from judges.generation.execution import GENERATION_RUNS
from judges.generation.selectors import generation_failures, generation_summary
from judges.generation.services import generation_run_start
from judges.generation.steps import StepOption, all_step_options, get_step, step_names
from judges.management.commands._runs import BAD_INPUT, USAGE, RunCommand, add_call_arguments
from judges.models import MAX_CONCURRENCY, GenerationRun
from judges.services import DEFAULT_MAX_TOKENS, DEFAULT_SEED
from judges.tasks import run_dispatch

#: Failures listed by --failures, at most (the run page lists them all).
FAILURES_SHOWN = 1000
RAW_SHOWN = 2000


OPTION_NOT_TAKEN = "{flag} is not an option of --step {step}"


def _given_options(o: dict) -> list[StepOption]:
    return [option for option in all_step_options() if o.get(f"option_{option.name}")]


class Command(RunCommand):
    run_model = GenerationRun
    stopped_waiting = "stopped waiting; generation run {run} goes on in the workers"
    help = "Generate items for a project from a source file (threads, label inventories) with an LLM step."

    def add_arguments(self, parser) -> None:
        add_call_arguments(parser)
        parser.add_argument("--from", dest="source", required=True, help="source file (.jsonl) on this machine")
        parser.add_argument("--step", required=True, choices=step_names())
        parser.add_argument("--temperature", type=float, default=None, help="default: the step's (0.7 for rationales)")
        parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
        parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
        parser.add_argument("--limit", type=int, default=None, help="only the first N records of the file")
        for option in all_step_options():
            parser.add_argument(
                f"--{option.name.replace('_', '-')}",
                dest=f"option_{option.name}",
                choices=option.values,
                default=None,
                help=f"{option.help or option.label} (steps that take it)",
            )
        parser.add_argument("--failures", action="store_true", help="list the failed records in the JSON")

    def handle(self, *args, **o) -> None:
        self._check_usage(o)
        path = Path(o["source"])
        if not path.is_file():
            raise CommandError(f"no file {o['source']!r}", returncode=BAD_INPUT)
        try:
            project = Project.objects.get(slug=o["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"no project with slug {o['slug']!r}", returncode=BAD_INPUT) from None
        options = {option.name: o[f"option_{option.name}"] for option in _given_options(o)}
        try:
            run = generation_run_start(
                project=project,
                step=o["step"],
                path=path,
                backend=o["backend"],
                model=o["model"],
                endpoint=o["endpoint"],
                temperature=o["temperature"],
                max_tokens=o["max_tokens"],
                seed=o["seed"],
                options=options,
                limit=o["limit"],
                concurrency=o["concurrency"],
            )
        except ImportRejected as exc:
            for error in exc.errors:
                self.stderr.write(str(error))
            if exc.total > len(exc.errors):
                self.stderr.write(f"… and {exc.total - len(exc.errors)} more")
            message = f"{exc.total} problem(s) in {path.name}; nothing was started"
            raise CommandError(message, returncode=BAD_INPUT) from None
        except (JudgeError, ValidationFailed) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        run_dispatch(run_type=GENERATION_RUNS, run_id=run.pk)
        if o["wait"]:
            run = self.wait(run, show=o["verbosity"] > 0)
        run = GenerationRun.objects.select_related("project").get(pk=run.pk)
        summary = generation_summary(run=run)
        if o["failures"]:
            summary["failures"] = [
                {
                    "line": r.line,
                    "record": r.source_id,
                    "reason": r.failure_reason,
                    "raw_output": r.raw_output[:RAW_SHOWN],
                    "attempts": r.attempts,
                }
                for r in generation_failures(run=run)[:FAILURES_SHOWN]
            ]
        self.stdout.write(json.dumps(summary, ensure_ascii=False))
        if run.status in (GenerationRun.Status.FAILED, GenerationRun.Status.CANCELLED):
            raise CommandError(
                f"generation run {run.pk} {run.get_status_display().lower()}: {run.last_error or 'no reason'}",
                returncode=BAD_INPUT,
            )

    def _check_usage(self, o: dict) -> None:
        if o["concurrency"] is not None and not 1 <= o["concurrency"] <= MAX_CONCURRENCY:
            raise CommandError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}", returncode=USAGE)
        if o["limit"] is not None and o["limit"] < 1:
            raise CommandError("--limit must be at least 1", returncode=USAGE)
        if o["max_tokens"] < 1:
            raise CommandError("--max-tokens must be at least 1", returncode=USAGE)
        if o["temperature"] is not None and not 0.0 <= o["temperature"] <= 2.0:
            raise CommandError("--temperature must be between 0 and 2", returncode=USAGE)
        taken = get_step(o["step"]).option_choices
        for option in _given_options(o):
            if option.name not in taken:
                flag = f"--{option.name.replace('_', '-')}"
                raise CommandError(OPTION_NOT_TAKEN.format(flag=flag, step=o["step"]), returncode=USAGE)
        if get_backend(o["backend"]).needs_model and not (o["model"] or settings.JUDGE_MODEL):
            raise CommandError(MODEL_REQUIRED.format(backend=o["backend"]), returncode=USAGE)

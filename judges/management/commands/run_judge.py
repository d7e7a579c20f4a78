"""run_judge SLUG --backend openai|vllm|baseline [--model M] [--endpoint NAME] [--prompt NAME]
[--concurrency N] [--seed S | --no-shuffle] [--wait]

``--no-shuffle`` makes a judge without a seed: multiple-choice options keep the item's order (the
"no shuffle" session of IntentGrasp's Table 8) and the model call carries no sampling seed.

Exit codes are a contract (docs/cli.md): 0 success, 1 bad input, 2 usage error. The run's JSON goes
to stdout; with --wait, progress goes to stderr while the workers run it.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import CommandError

from annotation.errors import ValidationFailed
from annotation.models import Project
from judges.backends import get_backend
from judges.errors import MODEL_REQUIRED, JudgeError
from judges.execution import JUDGE_RUNS
from judges.management.commands._runs import BAD_INPUT, USAGE, RunCommand, add_call_arguments
from judges.models import MAX_CONCURRENCY, JudgeRun
from judges.selectors import run_progress
from judges.services import DEFAULT_SEED, judge_get_or_create, judge_run_start
from judges.tasks import run_dispatch


class Command(RunCommand):
    run_model = JudgeRun
    stopped_waiting = "stopped waiting; run {run} goes on in the workers (cancel it on its page)"
    help = "Pre-annotate a project's items with an LLM judge or a baseline, on the Celery workers."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--prompt", default="", help="NAME or NAME.vN; default: the kind's default prompt")
        add_call_arguments(parser)
        seeds = parser.add_mutually_exclusive_group()
        seeds.add_argument(
            "--seed", type=int, default=DEFAULT_SEED, help="sampling seed; orders multiple-choice options"
        )
        seeds.add_argument(
            "--no-shuffle",
            action="store_true",
            help="no seed: multiple-choice options keep the item's order (IntentGrasp's no-shuffle session)",
        )

    def handle(self, *args, **o) -> None:
        if o["concurrency"] is not None and not 1 <= o["concurrency"] <= MAX_CONCURRENCY:
            raise CommandError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}", returncode=USAGE)
        if get_backend(o["backend"]).needs_model and not (o["model"] or settings.JUDGE_MODEL):
            raise CommandError(MODEL_REQUIRED.format(backend=o["backend"]), returncode=USAGE)
        try:
            project = Project.objects.get(slug=o["slug"])
        except Project.DoesNotExist:
            raise CommandError(f"no project with slug {o['slug']!r}", returncode=BAD_INPUT) from None
        try:
            judge, created = judge_get_or_create(
                project=project,
                backend=o["backend"],
                model=o["model"],
                endpoint=o["endpoint"],
                prompt=o["prompt"],
                seed=None if o["no_shuffle"] else o["seed"],
            )
            run = judge_run_start(judge=judge, project=project, concurrency=o["concurrency"])
        except (JudgeError, ValidationFailed) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        run_dispatch(run_type=JUDGE_RUNS, run_id=run.pk)
        summary = {
            "project": project.slug,
            "kind": project.kind,
            "judge": judge.pk,
            "judge_created": created,
            "label": judge.backend_label,
            "baseline": judge.is_baseline,
            "backend": judge.backend,
            "model": judge.model,
            "prompt": judge.prompt_key,
            "seed": judge.seed,
        }
        if o["wait"]:
            run = self.wait(run, show=o["verbosity"] > 0)
        progress = run_progress(run=JudgeRun.objects.get(pk=run.pk))
        self.stdout.write(json.dumps({**summary, **progress.as_dict()}))
        if progress.run.status in (JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED):
            raise CommandError(
                f"run {run.pk} {progress.run.get_status_display().lower()}: {progress.run.last_error or 'no reason'}",
                returncode=BAD_INPUT,
            )

"""What the run commands share: exit codes, the call options, and waiting for a run with progress on stderr."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from celery import current_app
from django.core.management.base import BaseCommand, CommandError

from judges.backends import runnable_backend_names
from judges.models import RunState
from judges.selectors import run_progress

BAD_INPUT, USAGE = 1, 2
POLL_SECONDS = 0.5
LOG_EVERY_SECONDS = 5.0  # progress lines when stderr is not a terminal (logs, pipelines)


def plain(text: str) -> str:
    """Progress is not an error: no red on a terminal."""
    return text


def add_call_arguments(parser: Any) -> None:
    """The options every command that starts a run takes: where the calls go, how many at once, and --wait."""
    parser.add_argument("slug", help="project slug")
    parser.add_argument("--backend", required=True, choices=runnable_backend_names())
    parser.add_argument("--model", default="", help="model name (openai, vllm); default: JUDGE_MODEL")
    parser.add_argument(
        "--endpoint", default="", help="a configured endpoint by name (openai backend); default: default"
    )
    parser.add_argument("--concurrency", type=int, default=None, help="requests in flight per worker")
    parser.add_argument("--wait", action="store_true", help="wait for the run; progress on stderr")


class RunCommand(BaseCommand):
    """A command that starts a run and may wait for it. Subclasses name the run model."""

    run_model: ClassVar[type[RunState]]
    #: What the command says when Ctrl-C stops the waiting (the run goes on in the workers).
    stopped_waiting: ClassVar[str] = "stopped waiting; run {run} goes on in the workers"

    def progress_line(self, run: Any) -> str:
        """One line of progress, in the run type's words ("run 4 running: 20/50 done (19 ok, 1 failed)")."""
        p = run_progress(run=run)
        rt = p.run_type
        rate = f", {p.items_per_s:.1f} {rt.unit}/s" if p.items_per_s else ""
        eta = f", ETA {p.eta_text}" if p.eta_text else ""
        before = run.settled_at_start
        made = f", {before} already made" if before else ""
        return (
            f"{rt.label} {run.pk} {run.status}: {p.done}/{run.total} {rt.counted} "
            f"({run.ok_count} ok, {run.failed_count} failed{made}){rate}{eta}"
        )

    def wait(self, run: Any, *, show: bool) -> Any:
        """The run once it has ended, with progress on stderr when ``show``."""
        if current_app.conf.task_always_eager:
            # Tasks ran in this process and are over; a run still running now has no worker left to finish it.
            run = self.run_model.objects.get(pk=run.pk)
            if run.is_active:
                errors = "; ".join(filter(None, run.chunks.values_list("last_error", flat=True))) or "no error recorded"
                raise CommandError(f"run {run.pk} did not finish in this process: {errors}", returncode=BAD_INPUT)
            if show:
                self.stderr.write(self.progress_line(run), style_func=plain)
            return run
        tty = self.stderr.isatty()
        last_line = 0.0
        try:
            while True:
                run = self.run_model.objects.get(pk=run.pk)
                now = time.monotonic()
                finished = not run.is_active
                if show and (finished or tty or now - last_line >= LOG_EVERY_SECONDS):
                    last_line = now
                    line = ("\r" if tty else "") + self.progress_line(run)
                    self.stderr.write(line, style_func=plain, ending="" if tty else "\n")
                    self.stderr.flush()
                if finished:
                    if show and tty:
                        self.stderr.write("")
                    return run
                time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            self.stderr.write("\n" + self.stopped_waiting.format(run=run.pk))
            raise SystemExit(130) from None

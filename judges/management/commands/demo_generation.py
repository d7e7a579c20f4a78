"""demo_generation: one finished generation run per step (baseline, demo content); used by make run."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ImportRejected
from judges.errors import JudgeError
from judges.generation.demo import demo_generation_load

BAD_INPUT = 1


class Command(BaseCommand):
    help = "Create the demo generation runs (one per step, baseline generators, demo content). Safe to rerun."

    def handle(self, *args, **options) -> None:
        try:
            results = demo_generation_load()
        except (ImportRejected, JudgeError) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        for r in results:
            state = "created" if r.created else "unchanged"
            self.stdout.write(f"{r.slug:<22} {r.step:<16} run {r.run} {r.status}, {r.items_created} items ({state})")

"""demo_estimates: a sampled CoPA project with a baseline judge run and simulated labels; used by make run."""

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ConcordError
from validation.kinds.copa_likert.estimates_demo import demo_estimates_load

BAD_INPUT = 1


class Command(BaseCommand):
    help = "Create the estimates demo (validation sample, baseline judge run, simulated labels). Safe to rerun."

    def handle(self, *args, **options) -> None:
        try:
            demo = demo_estimates_load()
        except ConcordError as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None
        state = "created" if demo.created else "unchanged"
        self.stdout.write(f"{demo.slug:<22} run {demo.run}, {demo.items} items, {demo.sampled} sampled ({state})")

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import jsonsafe
from annotation.kinds import kind_choices
from annotation.management.commands._base import (
    add_exposure_arguments,
    chosen_exposure,
    read_design,
    read_guidelines,
    refused,
)
from annotation.models import Project, SuggestionExposure
from annotation.services import project_create


class Command(BaseCommand):
    help = "Create a project of one task kind."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--kind", required=True, choices=[name for name, _ in kind_choices()])
        parser.add_argument("--title", default="")
        parser.add_argument("--overlap", type=int, default=2, help="distinct annotators per item (k)")
        parser.add_argument("--guidelines", default="", help="a Markdown file shown to annotators")
        parser.add_argument(
            "--design",
            default="",
            metavar="FILE.json",
            help="the questions of a kind that takes a design (docs/formats.md, Designs)",
        )
        add_exposure_arguments(parser, hide=False)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--adjudication-rules",
            type=jsonsafe.argument,
            metavar="JSON",
            help='which disagreements go to an expert, e.g. \'{"ordinal_distance": 2, "llm_majority": true}\'',
        )
        parser.add_argument(
            "--qualification-rate",
            type=float,
            default=0.0,
            metavar="R",
            help="share of served items that are known-answer items",
        )

    def handle(self, *args, **o) -> None:
        if Project.objects.filter(slug=o["slug"]).exists():
            raise CommandError(f"a project with slug {o['slug']!r} already exists", returncode=1)
        guidelines = read_guidelines(o["guidelines"]) if o["guidelines"] else ""
        design = read_design(o["design"]) if o["design"] else None
        exposure, probability = chosen_exposure(o) or (SuggestionExposure.HIDDEN, None)
        try:
            project = project_create(
                slug=o["slug"],
                kind=o["kind"],
                title=o["title"],
                overlap=o["overlap"],
                guidelines=guidelines,
                suggestion_exposure=exposure,
                suggestion_probability=0.5 if probability is None else probability,
                seed=o["seed"],
                qualification_rate=o["qualification_rate"],
                adjudication_rules=o["adjudication_rules"],
                design=design,
            )
        except ValidationError as exc:
            raise refused(exc) from None
        self.stdout.write(json.dumps({"project": project.slug, "kind": project.kind, "id": project.pk}))

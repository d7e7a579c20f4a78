import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.kinds import kind_choices
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
        exposure = parser.add_mutually_exclusive_group()
        exposure.add_argument("--show-suggestions", action="store_true", help="show LLM suggestions to annotators")
        exposure.add_argument(
            "--randomise-suggestions",
            type=float,
            metavar="P",
            help="show each suggestion with probability P per (item, annotator)",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--adjudication-rules",
            type=json.loads,
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
        guidelines = ""
        if o["guidelines"]:
            try:
                with open(o["guidelines"], encoding="utf-8-sig") as handle:
                    guidelines = handle.read()
            except OSError as exc:
                raise CommandError(f"cannot read {o['guidelines']}: {exc.strerror}", returncode=1) from None
        exposure, probability = SuggestionExposure.HIDDEN, 0.5
        if o["show_suggestions"]:
            exposure = SuggestionExposure.SHOWN
        elif o["randomise_suggestions"] is not None:
            exposure, probability = SuggestionExposure.RANDOMISED, o["randomise_suggestions"]
        try:
            project = project_create(
                slug=o["slug"],
                kind=o["kind"],
                title=o["title"],
                overlap=o["overlap"],
                guidelines=guidelines,
                suggestion_exposure=exposure,
                suggestion_probability=probability,
                seed=o["seed"],
                qualification_rate=o["qualification_rate"],
                adjudication_rules=o["adjudication_rules"],
            )
        except ValidationError as exc:
            lines = [f"{field}: {'; '.join(msgs)}" for field, msgs in exc.message_dict.items()]
            raise CommandError("\n".join(lines), returncode=1) from None
        self.stdout.write(json.dumps({"project": project.slug, "kind": project.kind, "id": project.pk}))

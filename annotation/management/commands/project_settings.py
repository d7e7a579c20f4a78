import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation import jsonsafe
from annotation.kinds import kind_choices
from annotation.management.commands._base import (
    add_exposure_arguments,
    chosen_exposure,
    project_or_fail,
    read_design,
    read_guidelines,
    refused,
)
from annotation.services import project_update

NO_CHANGES = "nothing to change: give at least one setting (see --help)"


class Command(BaseCommand):
    help = (
        "Change a project's settings; only the options given change. Refused (nothing stored) when a change "
        "breaks what is done: a new kind or seed once items exist, or k below the annotators an item has."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--title")
        parser.add_argument("--kind", choices=[name for name, _ in kind_choices()])
        parser.add_argument("--overlap", type=int, metavar="K", help="distinct annotators per item (k)")
        parser.add_argument("--guidelines", metavar="FILE", help="a Markdown file shown to annotators")
        parser.add_argument(
            "--design", metavar="FILE.json", help="a new design (docs/formats.md, Designs); refused once answers exist"
        )
        add_exposure_arguments(parser, hide=True)
        parser.add_argument("--seed", type=int)
        parser.add_argument("--qualification-rate", type=float, metavar="R")
        reveal = parser.add_mutually_exclusive_group()
        reveal.add_argument(
            "--reveal", action="append", metavar="FIELD",
            help="show raters a field the task kind hides from them, on purpose (repeat for more; replaces the list)",
        )  # fmt: skip
        reveal.add_argument("--reveal-none", action="store_true", help="hide every such field again (the default)")
        experts = parser.add_mutually_exclusive_group()
        experts.add_argument(
            "--adjudicators-see-hidden", action="store_true", dest="adjudicators_see_hidden",
            help="show experts the kind's hidden fields when they adjudicate (logged; gold exports say so)",
        )  # fmt: skip
        experts.add_argument(
            "--adjudicators-blind", action="store_true", help="keep those fields from experts again (the default)"
        )
        rules = parser.add_mutually_exclusive_group()
        rules.add_argument(
            "--adjudication-rules", type=jsonsafe.argument, metavar="JSON", help="e.g. '{\"ordinal_distance\": 2}'"
        )
        rules.add_argument("--default-adjudication", action="store_true", help="use the task kind's rules")

    def handle(self, *args, **o) -> None:
        project = project_or_fail(o["slug"])
        changes = {
            name: o[name] for name in ("title", "kind", "overlap", "seed", "qualification_rate") if o[name] is not None
        }
        if o["guidelines"]:
            changes["guidelines"] = read_guidelines(o["guidelines"])
        if o["design"]:
            changes["design"] = read_design(o["design"])
        if exposure := chosen_exposure(o):
            changes["suggestion_exposure"], probability = exposure
            if probability is not None:
                changes["suggestion_probability"] = probability
        if o["adjudication_rules"] is not None:
            changes["adjudication_rules"] = o["adjudication_rules"]
        elif o["default_adjudication"]:
            changes["adjudication_rules"] = None
        if o["reveal"] is not None:
            changes["revealed_fields"] = o["reveal"]
        elif o["reveal_none"]:
            changes["revealed_fields"] = []
        if o["adjudicators_see_hidden"] or o["adjudicators_blind"]:
            changes["adjudicators_see_hidden"] = bool(o["adjudicators_see_hidden"])
        if not changes:
            raise CommandError(NO_CHANGES, returncode=2)
        try:
            project = project_update(project=project, **changes)
        except ValidationError as exc:
            raise refused(exc) from None
        self.stdout.write(json.dumps({"project": project.slug, "changed": sorted(changes)}))

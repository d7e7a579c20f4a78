import argparse
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.exports import write_jsonl
from validation.goldset import label_statements
from validation.management.commands._shared import non_negative_int
from validation.mcq import TEXT_FORMS, BuildCounts, mcq_instances

#: --text-form options, at most.
MAX_TEXT_FORMS = 500


def text_form_option(text: str) -> tuple[str, str]:
    dataset, _, form = text.rpartition("=")
    if not dataset or form not in TEXT_FORMS:
        raise argparse.ArgumentTypeError(f"{text!r}: give DATASET=FORM with FORM one of {', '.join(TEXT_FORMS)}")
    return dataset, form


class Command(BaseCommand):
    help = "Build IntentGrasp MCQ instances (JSONL, importable into an intent_mcq project) from approved statements."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="a label_contextualization project")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("-o", "--output", required=True)
        parser.add_argument(
            "--max-per-dataset",
            type=non_negative_int,
            metavar="N",
            help="keep at most N instances per dataset, drawn at random from the seed (IntentGrasp: 500)",
        )
        parser.add_argument(
            "--text-form",
            type=text_form_option,
            action="append",
            default=[],
            metavar="DATASET=FORM",
            help="text form of a dataset's contexts where its labels' meta.text_form does not say (query)",
        )

    def handle(self, *args, slug: str, seed: int, output: str, **options) -> None:
        project = project_or_fail(slug)
        if len(options["text_form"]) > MAX_TEXT_FORMS:
            raise CommandError(f"at most {MAX_TEXT_FORMS} --text-form options", returncode=BAD_INPUT)
        try:
            statements = label_statements(project=project)
        except ValueError as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        counts = BuildCounts()
        records = mcq_instances(
            statements,
            seed=seed,
            max_per_dataset=options["max_per_dataset"],
            text_forms=dict(options["text_form"]),
            counts=counts,
        )
        try:
            count = write_jsonl(output, records)
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc.strerror}", returncode=BAD_INPUT) from None
        summary = {
            "project": slug,
            "seed": seed,
            "instances": count,
            "labels": len(statements),
            "downsampled": counts.downsampled,
            "too_many_answers": counts.too_many_answers,
        }
        self.stdout.write(json.dumps(summary))

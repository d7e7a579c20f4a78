import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.exports import write_jsonl
from validation.goldset import label_statements
from validation.mcq import mcq_instances


class Command(BaseCommand):
    help = "Build IntentGrasp MCQ instances (JSONL, importable into an intent_mcq project) from approved statements."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="a label_contextualization project")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("-o", "--output", required=True)

    def handle(self, *args, slug: str, seed: int, output: str, **options) -> None:
        project = project_or_fail(slug)
        try:
            statements = label_statements(project=project)
        except ValueError as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        try:
            count = write_jsonl(output, mcq_instances(statements, seed=seed))
        except OSError as exc:
            raise CommandError(f"cannot write {output}: {exc.strerror}", returncode=BAD_INPUT) from None
        self.stdout.write(json.dumps({"project": slug, "seed": seed, "instances": count, "labels": len(statements)}))

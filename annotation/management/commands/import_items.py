from annotation.management.commands._base import ImportCommand
from annotation.models import ImportJob


class Command(ImportCommand):
    help = "Import items from a .jsonl or .csv file into a project: all of them or, on any bad line, none."
    target = ImportJob.Target.ITEMS

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--existing",
            choices=ImportJob.Existing.values,
            default=ImportJob.Existing.REFUSE,
            help="an external id the project already has: refuse the file (default), skip the line, or update "
            "the item's payload (only while the item has no answer)",
        )

    def job_options(self, options: dict) -> dict:
        return {"existing": options["existing"]}

    def summary(self, job: ImportJob) -> dict:
        return {"skipped": job.rows_skipped, "updated": job.rows_updated}

from annotation.management.commands._base import ImportCommand
from annotation.models import ImportJob


class Command(ImportCommand):
    help = "Import existing human labels (rater, external_id, value) from .jsonl or .csv, atomically."
    target = ImportJob.Target.ANNOTATIONS

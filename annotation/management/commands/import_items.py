from annotation.management.commands._base import ImportCommand
from annotation.models import ImportJob


class Command(ImportCommand):
    help = "Import items from a .jsonl or .csv file into a project: all of them or, on any bad line, none."
    target = ImportJob.Target.ITEMS

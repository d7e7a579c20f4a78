import json

from django.core.management.base import BaseCommand

from annotation.management.commands._base import project_or_fail
from annotation.services import project_archive


class Command(BaseCommand):
    help = (
        "Archive a project: hidden from its annotators, no new items handed out; data, reports and exports "
        "are kept. --undo restores it."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--undo", action="store_true", help="restore an archived project")

    def handle(self, *args, slug: str, undo: bool, **options) -> None:
        project = project_archive(project=project_or_fail(slug), archived=not undo)
        archived_at = project.archived_at.isoformat() if project.archived_at else None
        self.stdout.write(json.dumps({"project": project.slug, "archived_at": archived_at}))

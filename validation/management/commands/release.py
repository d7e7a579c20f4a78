import json

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import ValidationFailed
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from validation.release import SPLITS, release_build, release_zip
from validation.release.services import SETTINGS_FIELDS, release_settings_update


class Command(BaseCommand):
    help = (
        "Write a dataset release: data/<split>-*.parquet, README.md (a Hugging Face dataset card) and "
        "croissant.json (Croissant 1.0 with its Responsible-AI fields)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("-o", "--output", required=True, help="a new (or empty) folder to write the release into")
        parser.add_argument(
            "--splits", default=",".join(SPLITS), help=f"comma-separated, from {', '.join(SPLITS)} (default: all)"
        )
        parser.add_argument(
            "--snapshot", type=int, help="agreement from this frozen report snapshot (refused if answers changed since)"
        )
        parser.add_argument("--zip", help="also write the folder as this .zip file")
        for name in SETTINGS_FIELDS:
            # Django's commands all take --version (Django's own): the release's is --release-version.
            flag = "release-version" if name == "version" else name.replace("_", "-")
            parser.add_argument(f"--{flag}", dest=f"set_{name}", help=f"set the project's release {name} (remembered)")

    def handle(self, *args, slug: str, output: str, splits: str, snapshot: int | None, zip: str | None, **options):
        project = project_or_fail(slug)
        updates = {name: options[f"set_{name}"] for name in SETTINGS_FIELDS if options.get(f"set_{name}") is not None}
        try:
            if updates:
                release_settings_update(project=project, data=updates)
            release = release_build(
                project=project,
                directory=output,
                splits=splits.split(","),
                snapshot_id=snapshot,
                progress=lambda step: self.stderr.write(f"release {slug}: {step}"),
            )
            if zip:
                release_zip(release, zip)
        except (ValidationFailed, OSError) as exc:
            raise CommandError(str(exc), returncode=BAD_INPUT) from None
        self.stdout.write(
            json.dumps(
                {
                    "project": slug,
                    "path": str(release.path),
                    "snapshot": release.snapshot_id,
                    "rows": release.rows,
                    "files": [
                        {"path": f.path, "rows": f.rows, "bytes": f.bytes, "sha256": f.sha256} for f in release.files
                    ],
                    **({"zip": zip} if zip else {}),
                }
            )
        )

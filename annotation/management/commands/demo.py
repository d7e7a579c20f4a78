from django.core.management.base import BaseCommand, CommandError

from annotation.demo import DemoConflict, demo_load
from annotation.errors import ImportRejected

BAD_INPUT = 1


class Command(BaseCommand):
    help = "Create the demo projects (one per task kind), their items and the demo users. Safe to rerun."

    def handle(self, *args, **options) -> None:
        try:
            summary = demo_load()
        except (DemoConflict, ImportRejected) as exc:
            raise CommandError(exc.message, returncode=BAD_INPUT) from None

        rows: list[tuple[str, ...]] = [("project", "kind", "items", "qualification", "this run")]
        for p in summary.projects:
            done = "created" if p.created else ("imported items" if p.imported else "unchanged")
            rows.append((p.slug, p.kind, str(p.items), str(p.qualification_items), done))
        self._table(rows)
        self.stdout.write("")

        rows = [("username", "password", "role", "this run")]
        for login in summary.logins:
            # An account that existed keeps its own password; say so rather than print a wrong one.
            password = login.password if login.created else f"{login.password} (if unchanged)"
            rows.append((login.username, password, login.role, "created" if login.created else "existed"))
        self._table(rows)

    def _table(self, rows: list[tuple[str, ...]]) -> None:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for number, row in enumerate(rows):
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
            if number == 0:
                self.stdout.write("  ".join("-" * width for width in widths))

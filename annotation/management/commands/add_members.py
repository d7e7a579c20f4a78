"""Add people to a project from a CSV (username,email,role) or one by one; atomic, JSON on stdout."""

import json

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from annotation import member_services as team
from annotation.errors import ValidationFailed
from annotation.management.commands._base import BAD_INPUT, project_or_fail
from annotation.member_csv import members_from_csv
from annotation.models import Role

USAGE = 2


class Command(BaseCommand):
    help = "Add members to a project: every line of a CSV (username,email,role) or, on any bad line, none."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", help="project slug")
        parser.add_argument("file", nargs="?", help=f"a CSV: username,email,role (≤ {team.MAX_ROWS} rows)")
        parser.add_argument("--user", metavar="NAME", help="add one person by username (instead of a file)")
        parser.add_argument("--email", default="", help="with --user: their e-mail (checked, or kept on a new account)")
        parser.add_argument("--role", choices=Role.values, help="with --user: the role to give")
        parser.add_argument(
            "--accounts",
            choices=team.ACCOUNT_CHOICES,
            default=team.NO_NEW_ACCOUNTS,
            help="usernames no account has: none refuses the line (default), invite creates the account with a "
            "one-time invitation link, password with a temporary password (both printed once)",
        )

    def handle(self, *args, slug: str, file: str | None, user: str | None, email: str, role: str | None, **o) -> None:
        if (file is None) == (user is None):
            raise CommandError("give either FILE or --user NAME --role ROLE", returncode=USAGE)
        if user is not None and role is None:
            raise CommandError("--user needs --role", returncode=USAGE)
        if file is not None and (role is not None or email):
            raise CommandError("--role and --email go with --user, not with a file", returncode=USAGE)
        project = project_or_fail(slug)
        try:
            if file is not None:
                specs = members_from_csv(self._read(file))
            else:
                assert user is not None and role is not None  # checked above
                specs = [team.MemberSpec(username=user.strip(), email=email.strip(), role=role)]
            added = team.members_add(project=project, actor=None, specs=specs, accounts=o["accounts"])
        except ValidationFailed as exc:
            where = file or "--user"
            more = f"\n... and {exc.total - len(exc.errors)} more errors" if exc.total > len(exc.errors) else ""
            raise CommandError(
                f"{where}: nobody added, {exc.total} error(s):\n{exc.message}{more}", returncode=BAD_INPUT
            ) from None
        rows = [
            {
                "username": entry.username,
                "role": entry.role,
                "created": entry.created,
                "already": entry.already,
                "outcome": entry.outcome,
                # The token in the fragment: no access log or Referer ever holds it.
                "invitation_path": reverse("invitation") + "#" + entry.invitation_token
                if entry.invitation_token
                else None,
                "temporary_password": entry.temporary_password or None,
            }
            for entry in added
        ]
        self.stdout.write(json.dumps({"project": project.slug, "added": rows}))

    @staticmethod
    def _read(path: str) -> bytes:
        try:
            with open(path, "rb") as handle:
                return handle.read(team.MAX_CSV_BYTES + 1)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}", returncode=BAD_INPUT) from None

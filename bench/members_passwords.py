"""Adding people with temporary passwords: how long other people's writes wait meanwhile.

    python bench/members_passwords.py [--accounts 10]

A researcher adds ``--accounts`` new people with temporary passwords in one request (the most one
request may: annotation.member_services.MAX_TEMPORARY_PASSWORDS). Each password is hashed with the
site's hasher, which is slow on purpose. Meanwhile a second thread, as another user would, writes one
small row every 10 ms and records how long each write took. On the embedded SQLite one writer holds
the database at a time, so the longest of those writes is how long the add kept everyone else out.
The last line is ``RESULT accounts=<n> add_s=<n> other_write_max_ms=<n> other_write_median_ms=<n>``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import setup_django  # noqa: E402

SLUG = "bench-members"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=10)
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import close_old_connections, connection

    from annotation import member_services as team
    from annotation.models import Project, Role
    from annotation.services import membership_add, project_create

    call_command("migrate", verbosity=0)
    users = get_user_model()
    Project.objects.filter(slug__startswith=SLUG).delete()
    users.objects.filter(username__startswith="bench-m-").delete()
    project = project_create(slug=SLUG, kind="copa_likert")
    other = project_create(slug=f"{SLUG}-other", kind="copa_likert")
    researcher = users.objects.create_user("bench-m-res")
    membership_add(project=project, user=researcher, role=Role.RESEARCHER)

    waits: list[float] = []
    done = threading.Event()

    def other_writer() -> None:
        n = 0
        while not done.is_set():
            started = time.perf_counter()
            Project.objects.filter(pk=other.pk).update(title=f"other {n}")
            waits.append(time.perf_counter() - started)
            n += 1
            time.sleep(0.01)
        close_old_connections()
        connection.close()

    writer = threading.Thread(target=other_writer)
    writer.start()
    time.sleep(0.2)
    specs = [team.MemberSpec(username=f"bench-m-{n}") for n in range(args.accounts)]
    started = time.perf_counter()
    team.members_add(project=project, actor=researcher, specs=specs, accounts=team.TEMPORARY_PASSWORD)
    add_s = time.perf_counter() - started
    time.sleep(0.2)
    done.set()
    writer.join()

    Project.objects.filter(slug__startswith=SLUG).delete()
    users.objects.filter(username__startswith="bench-m-").delete()
    worst, median = max(waits) * 1000, statistics.median(waits) * 1000
    print(f"database: {connection.vendor}")
    print(f"{args.accounts} accounts with temporary passwords added in {add_s:.2f} s")
    print(f"another user's {len(waits)} writes meanwhile: longest {worst:.0f} ms, median {median:.1f} ms")
    print(
        f"RESULT accounts={args.accounts} add_s={add_s:.2f} other_write_max_ms={worst:.0f}"
        f" other_write_median_ms={median:.1f}"
    )


if __name__ == "__main__":
    main()

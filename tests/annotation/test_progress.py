"""One definition of an annotator's quota and done count, the same on every page, never past 100 %."""

import random
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from annotation.assignments import assignment_claim_next, assignment_skip, assignment_submit
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.members import project_member
from annotation.models import Assignment, Role
from annotation.selectors import (
    annotator_progress,
    annotator_quota,
    annotator_stats,
    open_items_key,
    projects_for_user,
)
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")


@pytest.fixture
def build(make_project, make_user, tmp_path):
    def build(*, items=4, overlap=1, annotators=("ann1", "ann2"), qualification=0, kind="copa_likert"):
        project = make_project(kind, overlap=overlap, qualification_rate=0.5 if qualification else 0)
        records = list(synthetic_records(get_kind(kind), items + qualification))
        for record in records[items:]:
            record["gold"] = get_kind(kind).example_value()
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", iter(records)))
        people = {}
        for name in annotators:
            people[name] = make_user(name)
            membership_add(project=project, user=people[name], role=Role.ANNOTATOR)
        researcher = make_user("res")
        membership_add(project=project, user=researcher, role=Role.RESEARCHER)
        return project, people, researcher

    return build


def do(project, user, n, *, skip=False):
    """Claim and finish up to ``n`` items; the number actually finished."""
    for count in range(n):
        held = assignment_claim_next(project=project, user=user)
        if held is None:
            return count
        if skip:
            assignment_skip(assignment=held, reason="not sure")
        else:
            assignment_submit(assignment=held, value=get_kind(project.kind).example_value())
    return n


def shown_everywhere(client, project, user, researcher):
    """(done, quota) as the home page, the workspace and the researcher's table show them."""
    client.force_login(user)
    home = next(r for r in client.get(reverse("home")).context["rows"] if r.project.pk == project.pk)
    cache.delete(open_items_key(project.pk))  # the workspace keeps this count a few seconds: read it fresh
    workspace = client.get(reverse("workspace", args=[project.slug])).context["progress"]
    client.force_login(researcher)
    table = client.get(reverse("project_detail", args=[project.slug])).context["annotators"]
    row = next(r for r in table if r.username == user.username)
    return (home.my_done, home.my_target), (workspace.done, workspace.target), (row.submitted, row.target)


class QuotaDefinitionTests:
    @pytest.mark.parametrize(
        ("share", "done", "available", "quota"),
        [
            (5, 0, 100, 5),
            (5, 2, 1, 3),
            (4, 6, 0, 6),
            (4, 6, 3, 7),
            (5, 5, 0, 5),
            (5, 5, 2, 6),
            (0, 0, 0, 0),
            (0, 3, 9, 4),
        ],
    )
    def test_quota_is_the_rest_of_the_share_at_least_one_while_any_is_left_at_most_what_is_left(
        self, share, done, available, quota
    ):
        assert annotator_quota(share=share, done=done, available=available) == quota


class ProgressAgreesEverywhereTests:
    def test_home_workspace_and_researcher_table_show_the_same_numbers(self, client, build):
        project, people, researcher = build(items=6, overlap=2, annotators=("ann1", "ann2", "ann3"))
        do(project, people["ann1"], 2)
        first = assignment_claim_next(project=project, user=people["ann1"])  # held: not done yet
        assert first is not None
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (2, 4)  # ceil(6 items x 2 raters / 3 annotators)

    def test_an_annotator_who_did_more_than_the_share_is_at_100_percent_not_past_it(self, client, build):
        project, people, researcher = build(items=4, overlap=1)
        assert do(project, people["ann1"], 10) == 4  # share is 2, but every item was open to them
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (4, 4)
        client.force_login(people["ann1"])
        response = client.get(reverse("workspace", args=[project.slug]))
        assert b"Nothing left for you here" in response.content and response.context["progress"].percent == 100

    def test_nothing_left_means_done_equals_quota_even_below_the_share(self, client, build):
        project, people, researcher = build(items=4, overlap=1)
        do(project, people["ann2"], 3)
        assert do(project, people["ann1"], 10) == 1  # only one item was left for them
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (1, 1)

    def test_qualification_items_count_in_done_and_in_the_quota(self, client, build):
        project, people, researcher = build(items=4, overlap=1, qualification=2)
        do(project, people["ann1"], 1)
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (1, 4)  # 2 regular items of the share + 2 known-answer items
        do(project, people["ann1"], 10)
        assert shown_everywhere(client, project, people["ann1"], researcher)[0] == (6, 6)

    def test_skipped_items_are_neither_done_nor_left_to_do(self, client, build):
        project, people, researcher = build(items=2, overlap=1, annotators=("ann1",))
        do(project, people["ann1"], 1, skip=True)
        do(project, people["ann1"], 1)
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (1, 1)

    def test_done_never_exceeds_the_quota_in_a_random_session(self, build):
        project, people, _ = build(items=12, overlap=2, annotators=("a", "b", "c"), qualification=2)
        rng = random.Random(7)
        users = list(people.values())
        for _ in range(60):
            user = rng.choice(users)
            do(project, user, 1, skip=rng.random() < 0.15)
            for someone in users:
                cached = annotator_progress(project=project, user=someone, roles={Role.ANNOTATOR})
                fresh = annotator_progress(project=project, user=someone, roles={Role.ANNOTATOR}, cached=False)
                assert 0 <= fresh.done <= fresh.target and cached.done <= cached.target
        stats = {row.username: (row.submitted, row.target) for row in annotator_stats(project=project)}
        for user in users:
            do(project, user, 50)
            assert assignment_claim_next(project=project, user=user) is None
            progress = annotator_progress(project=project, user=user, roles={Role.ANNOTATOR}, cached=False)
            assert progress.done == progress.target  # nothing left: 100 %, as the workspace says
            assert stats[user.username][0] <= stats[user.username][1]

    def test_experts_have_no_share_and_do_not_lower_the_annotators_share(self, client, build, make_user):
        project, people, researcher = build(items=4, overlap=1, annotators=("ann1",))
        expert = make_user("expert")
        membership_add(project=project, user=expert, role=Role.EXPERT)
        home, workspace, table = shown_everywhere(client, project, people["ann1"], researcher)
        assert home == workspace == table == (0, 4)  # 4 items x k=1 / one annotator: the expert is not counted
        (row,) = projects_for_user(user=expert)
        assert (row.my_done, row.my_target) == (0, 1)  # no share: one ahead while the workspace has items


def nothing_left_for(project, user) -> bool:
    """Whether the workspace has nothing more for the user, asked without keeping what it claims."""

    class Undo(Exception):
        pass

    try:
        with transaction.atomic():
            found = assignment_claim_next(project=project, user=user)
            raise Undo
    except Undo:
        return found is None


def everywhere(project, user) -> set[tuple[int, int]]:
    """(done, quota) as the home page, the Team page and its API, the project page and the workspace
    compute them (the pages show these numbers: ProgressAgreesEverywhereTests)."""
    home = next(r for r in projects_for_user(user=user) if r.project.pk == project.pk)
    member = project_member(project=project, username=user.username)
    table = next(r for r in annotator_stats(project=project) if r.username == user.username)
    progress = annotator_progress(project=project, user=user, roles={Role.ANNOTATOR}, cached=False)
    return {
        (home.my_done, home.my_target),
        (member.submitted, member.target),
        (table.submitted, table.target),
        (progress.done, progress.target),
    }


class ProgressAtEveryStepTests:
    def test_twenty_items_k2_three_annotators(self, client, build, make_user, settings):
        """At every step each annotator's progress is the same everywhere, and reads 100 % exactly
        when the workspace has nothing more for them, also while others hold the items left."""
        settings.CONCORD_HOLD_SECONDS = 600
        project, people, researcher = build(items=20, overlap=2, annotators=("ann1", "ann2", "ann3"))
        membership_add(project=project, user=make_user("expert"), role=Role.EXPERT)  # no quota, not counted
        users = list(people.values())
        rng = random.Random(20)
        left_open = None
        for step in range(48):
            user = rng.choice(users)
            client.force_login(user)
            cache.delete(open_items_key(project.pk))  # the workspace keeps this count a few seconds
            response = client.get(reverse("workspace", args=[project.slug]))
            shown = response.context["progress"]
            held = response.context["assignment"]
            assert (shown.done == shown.target) == (held is None), step
            assert everywhere(project, user) == {(shown.done, shown.target)}, step
            if held is not None:
                if left_open is None and step == 20:
                    left_open = held  # left on screen: others meet it as held, then as expired
                else:
                    assignment_submit(assignment=held, value=COPA.example_value())
            if step == 36 and left_open is not None:
                Assignment.objects.filter(pk=left_open.pk).update(opened_at=timezone.now() - timedelta(seconds=601))
            for someone in users:
                (numbers,) = everywhere(project, someone)
                done, quota = numbers
                assert done <= quota and (done == quota) == nothing_left_for(project, someone), (step, someone)
        for user in users:
            do(project, user, 40)
        finished = [everywhere(project, user) for user in users]
        assert all(len(numbers) == 1 for numbers in finished)
        done = [numbers.pop() for numbers in finished]
        assert all(d == quota for d, quota in done) and sum(d for d, _ in done) == 40  # 20 items x k = 2

"""The annotator's pages after the first walk-through: edits land where they started, errors speak the
annotator's language, skipped items can be answered after all, and every page has a way onward."""

import datetime as dt

import pytest
from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from annotation.assignments import (
    ITEM_NOW_FULL,
    NOT_SKIPPED,
    AssignmentClosed,
    ItemFull,
    assignment_claim_next,
    assignment_skip,
    assignment_submit,
    assignment_unskip,
)
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Item, Role
from annotation.pace import annotator_pace
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from annotation.templatetags.concord import answer_summary, item_text
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
IPQA = get_kind("ipqa_core_intent")
SCORES = COPA.example_value()["scores"]


@pytest.fixture
def team(make_project, make_user, tmp_path):
    def team(kind="copa_likert", *, items=3, overlap=1, annotators=("ann1", "ann2")):
        project = make_project(kind, overlap=overlap)
        import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(get_kind(kind), items)))
        people = {}
        for name in annotators:
            people[name] = make_user(name)
            membership_add(project=project, user=people[name], role=Role.ANNOTATOR)
        return project, people

    return team


def url(name, project, *args):
    return reverse(name, args=[project.slug, *args])


class EditLandsWhereItStartedTests:
    """Defect 1: a saved edit dropped the whole history page into the item panel."""

    def test_saving_an_edit_opened_by_undo_serves_the_next_item_in_the_panel_at_the_workspace_url(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        first = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_submit", project, first.pk), SCORES)
        edit_url = client.post(url("annotation_undo", project))["Location"]
        assert edit_url == url("annotation_edit", project, first.pk)
        assert 'name="return_to"' not in client.get(edit_url).content.decode()
        response = client.post(
            url("assignment_submit", project, first.pk), {**SCORES, "CT": "0"}, HTTP_HX_REQUEST="true"
        )
        page = response.content.decode()
        assert response.status_code == 200 and "<html" not in page and "Your answers in" not in page
        assert response["HX-Replace-Url"] == url("workspace", project)
        assert response.context["assignment"].item_id != first.item_id  # on to the next item
        assert "is saved as a new version" in page
        assert Annotation.objects.filter(item=first.item).count() == 2

    def test_saving_an_edit_opened_from_history_navigates_the_whole_page_back_to_history(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        first = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_submit", project, first.pk), SCORES)
        history = client.get(url("annotation_history", project)).content.decode()
        assert f"{url('annotation_edit', project, first.pk)}?from=history" in history
        edit = client.get(url("annotation_edit", project, first.pk) + "?from=history").content.decode()
        assert '<input type="hidden" name="return_to" value="history">' in edit
        data = {**SCORES, "CT": "0", "return_to": "history"}
        response = client.post(url("assignment_submit", project, first.pk), data, HTTP_HX_REQUEST="true")
        assert response["HX-Redirect"] == url("annotation_history", project) and response.content == b""
        plain = client.post(url("assignment_submit", project, first.pk), {**data, "CT": "1"})
        assert plain.status_code == 302 and plain["Location"] == url("annotation_history", project)

    def test_an_unknown_return_to_is_ignored(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        first = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_submit", project, first.pk), SCORES)
        edit = client.get(url("annotation_edit", project, first.pk) + "?from=https://elsewhere.example")
        assert 'name="return_to"' not in edit.content.decode()
        response = client.post(url("assignment_submit", project, first.pk), {**SCORES, "return_to": "//evil"})
        assert response["Location"] == url("workspace", project)


class FriendlyErrorTests:
    """Defect 7: pages speak the annotator's language; the API and imports keep the precise form."""

    def test_the_page_says_intent_2_choose_expressed_and_core_and_the_api_names_the_field(self, client, team):
        project, people = team("ipqa_core_intent", items=2)
        client.force_login(people["ann1"])
        held = client.get(url("workspace", project)).context["assignment"]
        page = client.post(url("assignment_submit", project, held.pk), {"expressed-0": "yes", "core-0": "no"})
        text = page.content.decode()
        assert page.status_code == 422 and "Intent 2: choose Expressed and Core." in text
        assert "value.intents" not in text and "missing required" not in text
        api = client_for(people["ann1"]).post(
            f"/api/assignments/{held.pk}/submit/",
            {"value": {"intents": [{"intent": held.item.payload["candidate_intents"][0], "expressed": True}]}},
            format="json",
        )
        assert api.status_code == 400
        assert {"field": "value.intents[0]", "message": "missing required field 'core'", "line": None} in api.json()[
            "errors"
        ]
        assert not Annotation.objects.exists()

    @pytest.mark.parametrize(
        ("kind", "data", "sentence"),
        [
            ("intent_mcq", {}, "Options: choose at least one."),
            ("rationale_inspection", {}, "Choose Pass or Fail."),
            ("label_contextualization", {"action": "cannot_contextualize"}, "Say why this label cannot be"),
            ("label_contextualization", {"action": "write"}, "Write the intent statement"),
        ],
    )
    def test_each_kind_asks_for_what_is_missing_in_words(self, client, team, make_user, kind, data, sentence):
        project, people = team(kind, items=1)
        membership_add(project=project, user=people["ann1"], role=Role.EXPERT)
        client.force_login(people["ann1"])
        held = client.get(url("workspace", project)).context["assignment"]
        response = client.post(url("assignment_submit", project, held.pk), data)
        assert response.status_code == 422 and sentence in response.content.decode()

    def test_a_skip_without_reason_is_asked_for_as_a_sentence(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        held = client.get(url("workspace", project)).context["assignment"]
        response = client.post(url("assignment_skip", project, held.pk), {"reason": " "})
        assert response.status_code == 422 and "<li>Say why you skip this item.</li>" in response.content.decode()


class SkippedItemsTests:
    """Defect 10: history lists skipped items, each can be answered after all; Alt+U reopens a skip."""

    def test_history_shows_the_answer_given_and_the_skipped_items_with_answer_now(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        first = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_submit", project, first.pk), {**SCORES, "CT": "2"})
        second = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_skip", project, second.pk), {"reason": "not in English"})
        page = client.get(url("annotation_history", project)).content.decode()
        assert "Cognitive Trust: 2 Full · Situational Anchoring: 2 Full" in page  # the answer given, on one line
        assert f"<code>#{second.pk}</code>" in page and "not in English" in page
        assert f'action="{url("assignment_unskip", project, second.pk)}"' in page and "Answer now" in page

    def test_answer_now_reopens_the_skipped_item_and_serves_it_next(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        skipped = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_skip", project, skipped.pk), {"reason": "unsure"})
        response = client.post(url("assignment_unskip", project, skipped.pk))
        assert response["Location"] == url("workspace", project)
        assert client.get(url("workspace", project)).context["assignment"].pk == skipped.pk
        assert Item.objects.get(pk=skipped.item_id).assigned_count == 1

    def test_the_history_offers_answer_now_only_where_it_would_work(self, client, team):
        """A skipped item that has meanwhile reached k shows why it cannot be answered, not a button that fails."""
        project, people = team(items=2)
        skips = []
        for _ in range(2):
            skips.append(assignment_claim_next(project=project, user=people["ann1"]))
            assignment_skip(assignment=skips[-1], reason="unsure")
        taken = assignment_claim_next(project=project, user=people["ann2"]).item_id  # k = 1: now full
        (full,) = [a for a in skips if a.item_id == taken]
        (still_open,) = [a for a in skips if a.item_id != taken]
        client.force_login(people["ann1"])
        history = client.get(url("annotation_history", project)).content.decode()
        assert url("assignment_unskip", project, still_open.pk) in history
        assert url("assignment_unskip", project, full.pk) not in history
        assert "has its 1 annotator now" in history

    def test_answer_now_is_refused_once_the_item_has_its_k_annotators(self, client, team):
        project, people = team(items=1)
        skipped = assignment_claim_next(project=project, user=people["ann1"])
        assignment_skip(assignment=skipped, reason="unsure")
        taken = assignment_claim_next(project=project, user=people["ann2"])
        assert taken.item_id == skipped.item_id  # the place the skip gave back went to ann2
        with pytest.raises(ItemFull) as refused:
            assignment_unskip(assignment=skipped)
        assert refused.value.message == ITEM_NOW_FULL.format(overlap=1)
        client.force_login(people["ann1"])
        response = client.post(url("assignment_unskip", project, skipped.pk), follow=True)
        assert "reached its 1 annotators" in response.content.decode()
        assert Assignment.objects.get(pk=skipped.pk).status == Assignment.Status.SKIPPED
        assert Item.objects.get(pk=skipped.item_id).assigned_count == 1

    def test_only_a_skipped_item_can_be_reopened_and_only_by_its_annotator(self, client, team):
        project, people = team()
        done = assignment_claim_next(project=project, user=people["ann1"])
        assignment_submit(assignment=done, value=COPA.example_value())
        with pytest.raises(AssignmentClosed) as refused:
            assignment_unskip(assignment=done)
        assert refused.value.message == NOT_SKIPPED
        skipped = assignment_claim_next(project=project, user=people["ann1"])
        assignment_skip(assignment=skipped, reason="unsure")
        client.force_login(people["ann2"])
        assert client.post(url("assignment_unskip", project, skipped.pk)).status_code == 404
        opened = client.get(url("assignment_unskip", project, skipped.pk))
        assert opened["Location"] == url("annotation_history", project)
        assert Assignment.objects.get(pk=skipped.pk).status == Assignment.Status.SKIPPED

    def test_undo_after_a_skip_reopens_the_skipped_item_not_the_answer_before_it(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        answered = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_submit", project, answered.pk), SCORES)
        skipped = client.get(url("workspace", project)).context["assignment"]
        client.post(url("assignment_skip", project, skipped.pk), {"reason": "unsure"})
        page = client.get(url("workspace", project)).content.decode()
        assert 'id="undo-link"' in page
        # A plain GET changes nothing (it leads to the history); the workspace's undo button posts.
        assert client.get(url("annotation_undo", project))["Location"] == url("annotation_history", project)
        assert Assignment.objects.get(pk=skipped.pk).status == Assignment.Status.SKIPPED
        assert client.post(url("annotation_undo", project))["Location"] == url("workspace", project)
        assert client.get(url("workspace", project)).context["assignment"].pk == skipped.pk

    def test_undo_is_offered_after_a_first_skip(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        held = client.get(url("workspace", project)).context["assignment"]
        assert 'id="undo-link"' not in client.get(url("workspace", project)).content.decode()
        client.post(url("assignment_skip", project, held.pk), {"reason": "unsure"})
        assert 'id="undo-link"' in client.get(url("workspace", project)).content.decode()


class WayOnwardTests:
    """Defect 10: the done card, error pages and the favicon."""

    def test_the_done_card_links_onward(self, client, team):
        project, people = team(items=1)
        client.force_login(people["ann1"])
        held = client.get(url("workspace", project)).context["assignment"]
        page = client.post(url("assignment_submit", project, held.pk), SCORES, follow=True).content.decode()
        assert "Nothing left for you here" in page
        done_card = page.split('class="card done"', 1)[1].split("</div>", 1)[0]
        for target in (reverse("home"), url("annotation_history", project), reverse("my_pace")):
            assert f'href="{target}"' in done_card

    def test_404_and_403_pages_have_the_site_layout_and_a_way_home(self, client, team, make_user):
        project, people = team()
        client.force_login(people["ann1"])
        missing = client.get("/p/no-such-project-at-all/nothing/")
        assert missing.status_code == 404
        assert 'class="topbar"' in missing.content.decode() and "Page not found" in missing.content.decode()
        client.force_login(make_user("res"))
        membership_add(project=project, user=type(people["ann1"]).objects.get(username="res"), role=Role.RESEARCHER)
        denied = client.get(url("workspace", project))
        text = denied.content.decode()
        assert denied.status_code == 403 and 'class="topbar"' in text
        assert "Only the project&#x27;s annotators and experts annotate." in text and 'href="/"' in text

    def test_the_500_page_renders_without_a_request(self):
        page = render_to_string("500.html")
        assert "Something went wrong" in page and "concord.css" in page and 'href="/"' in page

    def test_favicon_ico_is_served_on_every_site_path(self, client):
        response = client.get("/favicon.ico")
        assert response.status_code == 301 and response["Location"].endswith("concord/favicon.ico")
        assert finders.find("concord/favicon.ico") and finders.find("concord/favicon.svg")

    def test_start_annotating_history_and_pace_are_separate_links(self, client, team):
        project, people = team()
        client.force_login(people["ann1"])
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert '<p class="link-row"><a class="button primary"' in page and reverse("my_pace") in page


class LabelFormTests:
    def test_only_the_box_of_the_chosen_action_is_shown(self, client, team):
        project, people = team("label_contextualization", items=1)
        client.force_login(people["ann1"])
        page = client.get(url("workspace", project)).content.decode()
        assert '<div data-when-action="write">' in page
        assert '<div data-when-action="cannot_contextualize" hidden>' in page
        held = client.get(url("workspace", project)).context["assignment"]
        refused = client.post(url("assignment_submit", project, held.pk), {"action": "cannot_contextualize"})
        text = refused.content.decode()
        assert '<div data-when-action="write" hidden>' in text
        assert '<div data-when-action="cannot_contextualize">' in text


class ItemTextTests:
    """Defect 8: item text renders Markdown safely and keeps TeX for KaTeX."""

    def test_markdown_renders_and_script_is_stripped(self):
        html = item_text("**Bold** and a [link](https://example.org)\n\n<script>alert(1)</script><img src=x>")
        assert "<strong>Bold</strong>" in html and 'rel="noopener noreferrer nofollow"' in html
        assert "<script" not in html and "alert(1)" not in html and "<img" not in html

    def test_tex_is_kept_out_of_markdown_and_marked_for_katex(self):
        html = item_text(r"Let $x_1 = y_2$ and $$\begin{align} a_1 &= b_2 \\ c &= d \end{align}$$ costs $5 or $10.")
        assert '<span class="math math-inline" data-math>x_1 = y_2</span>' in html
        assert (
            r'<span class="math math-display" data-math>\begin{align} a_1 &amp;= b_2 \\ c &amp;= d \end{align}</span>'
            in html
        )
        assert "costs $5 or $10." in html  # prices are not math
        assert "<em>" not in html  # underscores inside TeX are not Markdown emphasis

    def test_bracket_delimiters_and_code_are_respected(self):
        html = item_text(r"\(a_b\) then \[c_d\] and `echo $HOME $PATH`")
        assert '<span class="math math-inline" data-math>a_b</span>' in html
        assert '<span class="math math-display" data-math>c_d</span>' in html
        assert "<code>echo $HOME $PATH</code>" in html

    def test_tex_cannot_smuggle_markup(self):
        html = item_text('$<img src=x onerror="alert(1)">$ and [x]($a$)')
        assert "<img" not in html and "onerror=" not in html.replace("&quot;", '"').split("data-math>")[0]
        assert "&lt;img" in html

    def test_workspace_renders_item_text_and_loads_katex_from_static(self, client, make_project, make_user):
        project = make_project("copa_likert", overlap=1)
        payload = {**COPA.example_payload(), "question": r"Why is $\sum_{i=1}^n i = \frac{n(n+1)}{2}$? **Proof**"}
        Item.objects.create(project=project, external_id="tex-1", payload=payload)
        user = make_user("ann1")
        membership_add(project=project, user=user, role=Role.ANNOTATOR)
        client.force_login(user)
        page = client.get(url("workspace", project)).content.decode()
        assert r"data-math>\sum_{i=1}^n i = \frac{n(n+1)}{2}</span>" in page and "<strong>Proof</strong>" in page
        assert "/static/vendor/katex/katex.min.js" in page and "/static/concord/math.js" in page
        assert finders.find("vendor/katex/katex.min.js") and finders.find("vendor/katex/fonts/KaTeX_Main-Regular.woff2")


class HistorySummaryTests:
    def test_an_answer_reads_on_one_line_in_the_kinds_words(self):
        copa = answer_summary(COPA, {"scores": {**SCORES, "CT": 0}}, COPA.example_payload())
        assert copa.startswith("Cognitive Trust: 0 Mismatch · Situational Anchoring: 2 Full")
        mcq = get_kind("intent_mcq")
        chosen = answer_summary(mcq, {"chosen": [1]}, mcq.example_payload())
        assert chosen == "2. To report a lost or stolen card.: chosen"  # options not chosen are left out
        long = answer_summary(get_kind("rationale_inspection"), {"verdict": 1, "note": "x" * 500}, {})
        assert long.endswith("…") and len(long) == 240


class PaceTests:
    """Defect 11: the annotator's own page with their pace over time."""

    def test_pace_counts_first_answers_per_day_with_the_median_seconds(self, team):
        project, people = team(items=3)
        for seconds in (10, 30):
            held = assignment_claim_next(project=project, user=people["ann1"])
            assignment_submit(assignment=held, value=COPA.example_value())
            Annotation.objects.filter(item=held.item).update(seconds_on_item=seconds)
        assignment_submit(assignment=held, value={"scores": {**SCORES, "CT": 0}})  # an edit is not a new item
        yesterday = timezone.now() - dt.timedelta(days=1)
        Annotation.objects.filter(version=1, seconds_on_item=10).update(created_at=yesterday)
        pace = annotator_pace(user=people["ann1"], days=7)
        assert len(pace.days) == 7 and pace.items == 2 and pace.busiest == 1
        assert [(d.items, d.median_seconds) for d in pace.days[-2:]] == [(1, 10), (1, 30)]
        assert pace.median_seconds == 20

    def test_pace_page_shows_a_table_and_a_chart_and_is_linked_from_home(self, client, team):
        project, people = team()
        held = assignment_claim_next(project=project, user=people["ann1"])
        assignment_submit(assignment=held, value=COPA.example_value())
        client.force_login(people["ann1"])
        assert f'href="{reverse("my_pace")}"' in client.get(reverse("home")).content.decode()
        page = client.get(reverse("my_pace")).content.decode()
        assert "1 item in the last 30 days" in page
        assert '<svg class="pace-chart"' in page and page.count('class="pace-bar"') == 30
        assert '<table class="table pace-table">' in page

    def test_pace_needs_sign_in(self, client):
        assert client.get(reverse("my_pace")).status_code == 302

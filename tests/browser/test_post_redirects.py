"""No POST leaves the browser on an address that answers 405 to GET, and none that succeeds leaves it on a
page a reload would post again (post/redirect/get).

As the demo researcher, in Chromium: open each demo project's pages (the project page and every page it
links to inside the project, and the profile), and submit every form there that posts (one per form
address, numbers in it ignored), as a plain form submission without its script, which is what a browser
without JavaScript, or htmx's fallback, sends. The POST must answer a redirect or a refusal (4xx with the
form and its errors), never a 2xx page; and the address the browser ends on must answer a GET with
anything but 405.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from annotation.demo import DEMO_PASSWORD, PROJECTS
from annotation.member_services import INVITE, MemberSpec, members_add
from annotation.models import Project, Role
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_every_page import _seed_demo_data, same_origin_links
from validation.evaluations.registry import paper_evaluations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Forms never submitted: signing out ends the session the walk runs in.
SKIPPED_ACTIONS = re.compile(r"/accounts/logout/")
#: Links not followed: downloads, the admin, the API.
SKIPPED_LINKS = re.compile(r"(/download[./]|[?&]format=|/admin/|/api/|/static/)")
POST_FORMS = """() => [...document.querySelectorAll("form")]
  .filter(f => (f.getAttribute("method") || "").toLowerCase() === "post" || f.hasAttribute("hx-post"))
  .map(f => f.action)"""


def pattern(url: str) -> str:
    """A form's address with ids and the project's slug left out: one submission per kind of form."""
    return re.sub(r"/\d+(?=/|$)", "/{n}", re.sub(r"^/p/[\w-]+/", "/p/{slug}/", urlsplit(url).path))


def submit_form(page, action: str) -> None:
    """Submit the first posting form with this action as a plain browser submission (no validation, no htmx)."""
    page.evaluate(
        """action => {
          const form = [...document.querySelectorAll("form")].find(
            f => ((f.getAttribute("method") || "").toLowerCase() === "post" || f.hasAttribute("hx-post"))
                 && f.action === action);
          form.method = "post";
          if (form.hasAttribute("hx-post") && !form.getAttribute("action")) form.action = form.getAttribute("hx-post");
          HTMLFormElement.prototype.submit.call(form);
        }""",
        action,
    )


def goto(page, url: str) -> None:
    """Open a page and let what it loads by htmx (the report's body and its freeze form) arrive."""
    page.goto(url)
    # A page that keeps polling never idles: what is there after 10 s is what is submitted.
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_load_state("networkidle", timeout=10_000)


def test_no_post_leaves_the_browser_on_an_address_that_answers_405(browser, live_server, sign_in):
    _seed_demo_data()
    # Someone invited who has not signed in yet, so the Team page offers "New invitation link".
    first = Project.objects.get(slug=PROJECTS[0].slug)
    members_add(
        project=first,
        actor=None,
        specs=[MemberSpec(username="newcomer", email="", role=Role.ANNOTATOR)],
        accounts=INVITE,
    )
    origin = live_server.url
    context = browser.new_context(viewport={"width": 1366, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    sign_in(page, "researcher", DEMO_PASSWORD)
    # Two links deep inside each project (the evaluations and estimates hang off the report), one page per
    # kind of address: a page shown for every project is visited for the first only.
    pages = [f"{origin}/accounts/profile/"]
    page_patterns: set[str] = set()
    for spec in PROJECTS:
        frontier = [f"{origin}/p/{spec.slug}/"]
        for _depth in range(3):
            found = []
            for url in frontier:
                if pattern(url) in page_patterns:
                    continue
                page_patterns.add(pattern(url))
                pages.append(url)
                if _depth < 2:
                    goto(page, url)
                    found += [
                        link
                        for link, download in same_origin_links(page, origin)
                        if not download
                        and urlsplit(link).path.startswith(f"/p/{spec.slug}/")
                        and not SKIPPED_LINKS.search(link)
                    ]
            frontier = list(dict.fromkeys(found))
        # The evaluation pages of the project's kind and its estimates, wherever the report links them.
        extra = [
            f"/p/{spec.slug}/evaluations/{evaluation.slug}/"
            for evaluation in paper_evaluations().values()
            if evaluation.kind == spec.kind
        ]
        for path in [f"/p/{spec.slug}/estimates/", *extra]:
            if pattern(path) not in page_patterns:
                page_patterns.add(pattern(path))
                pages.append(origin + path)
    problems: list[str] = []
    submitted: list[str] = []
    seen: set[str] = set()
    for url in dict.fromkeys(pages):
        goto(page, url)
        actions = page.evaluate(POST_FORMS)
        for action in actions:
            key = pattern(action or url)
            if key in seen or SKIPPED_ACTIONS.search(key):
                continue
            seen.add(key)
            if page.url != url:
                goto(page, url)
            posts: list = []

            def on_response(response, posts=posts) -> None:
                request = response.request
                if request.method == "POST" and request.is_navigation_request() and response.frame == page.main_frame:
                    posts.append(response)

            page.on("response", on_response)
            try:
                with page.expect_navigation(wait_until="load"):
                    submit_form(page, action)
            except PlaywrightError as exc:  # a download ends no navigation: note it and go on
                if "download" not in str(exc).lower():
                    problems.append(f"{key} from {url}: {exc}")
                continue
            finally:
                page.remove_listener("response", on_response)
            submitted.append(key)
            for response in posts[:1]:
                if 200 <= response.status < 300:
                    problems.append(
                        f"{key} from {url}: the POST answered {response.status} with a page, not a redirect"
                    )
            landed = page.url
            status = context.request.get(landed, max_redirects=0).status
            if status == 405:
                problems.append(f"{key} from {url}: left the browser on {landed}, which answers 405 to GET")
    context.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "post-redirects.txt").write_text(
        "\n".join(["pages:", *pages, "", "submitted:", *submitted, "", "problems:", *problems]) + "\n"
    )
    # The forms the issue names were among those submitted.
    for expected in ("/team/add/", "/team/{n}/invite/", "/report/freeze/", "/accounts/profile/tokens/"):
        assert any(key.endswith(expected) for key in submitted), f"no form posting to {expected} was submitted"
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)

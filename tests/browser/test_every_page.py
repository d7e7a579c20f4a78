"""Every page the app links to, for every demo role and every task kind, loads cleanly in Chromium.

Signs in as each demo role, starts from the home page and follows every same-origin link it finds.
A page fails on an HTTP 4xx/5xx (its own or any request it makes), a console error, an uncaught
exception, a loading indicator still there after 10 s, a page wider than the window at 1366 px or
390 px, TeX left untypeset (item text and guidelines carry it), or a table cell that breaks a word
across lines at 1366 px. Downloads are fetched and only their status checked. Each page is saved as a screenshot under
``test-artifacts/every-page/`` so a person can look through them.

URLs are deduplicated by pattern (numbers in the path and query values ignored) so the walk stays
at a few minutes: one adjudication item per kind, one run page per kind, and so on.
"""

from __future__ import annotations

import io
import re
import shutil
from collections import deque
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import pytest
from django.core.management import call_command

from annotation.demo import DEMO_PASSWORD, PROJECTS
from annotation.models import Item, Project
from judges.models import Suggestion
from judges.prompting import prompts_for
from judges.services import judge_get_or_create, judge_run_start
from judges.tasks import run_dispatch
from tests.browser.conftest import ARTIFACTS
from tests.browser.layout import broken_words, untypeset_math
from tests.validation.conftest import annotate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROLES = ("researcher", "expert", "annotator1")
WIDTHS = (1366, 390)
SPINNER_TIMEOUT_MS = 10_000
MAX_PAGES_PER_ROLE = 150
SHOTS = ARTIFACTS / "every-page"
#: Paths never visited: signing out ends the walk, the admin and the API are not pages the app links to.
SKIPPED_PATHS = re.compile(r"^/(accounts/logout|admin/|api/(?!docs/)|static/|media/)")
#: Links that download a file rather than show a page: fetched for their status only.
DOWNLOADS = re.compile(r"(/download[./]|[?&]format=)")
#: Something still loading: an indeterminate progress bar, an htmx request in flight, a busy region.
LOADING = "progress:not([value]), .htmx-request, [aria-busy='true']"
#: The first elements reaching past the window's right edge (outside a scrolling table), to name the culprit.
WIDEST_ELEMENTS = """width => {
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.getBoundingClientRect().right > width + 1 && !el.closest(".report-scroll")) {
      const classes = typeof el.className === "string" && el.className ? "." + el.className.split(" ").join(".") : "";
      out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + classes);
      if (out.length > 2) break;
    }
  }
  return out.join(", ");
}"""


@dataclass
class Walk:
    origin: str
    problems: list[str] = field(default_factory=list)
    seen_patterns: set[tuple] = field(default_factory=set)
    visited: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)

    def fail(self, role: str, url: str, what: str) -> None:
        self.problems.append(f"[{role}] {url}: {what}")


def url_pattern(role: str, url: str) -> tuple:
    """A page's pattern: numbers in the path stand for any id; query keys count, their values do not."""
    parts = urlsplit(url)
    path = re.sub(r"/\d+(?=/|$|\.)", "/{n}", parts.path)
    return role, path, tuple(sorted({key for key, _ in parse_qsl(parts.query, keep_blank_values=True)}))


def same_origin_links(page, origin: str) -> list[str]:
    hrefs = page.eval_on_selector_all(
        "a[href]", "els => els.map(e => [e.href, e.hasAttribute('download') ? 'download' : ''])"
    )
    found = []
    for href, download in hrefs:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != origin:
            continue
        clean = urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))
        found.append((clean, bool(download)))
    return found


def _seed_demo_data() -> None:
    """The demo projects with something on every page: two raters on one item (a disagreement where
    the kind allows), one rater on another (waiting for raters), and a baseline run where the kind
    has a baseline."""
    call_command("demo", stdout=io.StringIO())  # the command's table of logins is not under test here
    for spec in PROJECTS:
        project = Project.objects.get(slug=spec.slug)
        kind = project.task_kind
        items = list(Item.objects.filter(project=project, gold_value__isnull=True).order_by("pk")[:3])
        values = {}
        if prompts_for(kind=project.kind, backend="baseline"):
            judge, _ = judge_get_or_create(project=project, backend="baseline")
            run = judge_run_start(judge=judge, project=project)
            run_dispatch(run_type="judge", run_id=run.pk)  # tasks run in-process in tests: the run is done on return
            values = dict(Suggestion.objects.filter(run=run, status="ok").values_list("item_id", "value"))
        for item in items:
            value = values.get(item.pk) or kind.example_value()
            if kind.check_value(value, payload=item.payload):
                continue
            annotate(project, item, "annotator1", value)
            if item is items[0]:
                other = {"scores": dict.fromkeys(value["scores"], 2)} if "scores" in value else value
                annotate(project, item, "annotator2", other)


@pytest.fixture
def demo_site(live_server):
    _seed_demo_data()
    return live_server


def visit(page, walk: Walk, role: str, url: str) -> list[tuple[str, bool]]:
    """Open one page, check it at both widths, save its pictures, and return its links."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"uncaught exception: {exc}"))

    def on_response(response) -> None:
        if response.status >= 400 and response.url.startswith(walk.origin) and response.url != url:
            errors.append(f"HTTP {response.status} for {response.url}")

    page.on("response", on_response)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    response = page.goto(url, wait_until="load")
    if response is None or response.status >= 400:
        walk.fail(role, url, f"HTTP {response.status if response else 'no response'}")
    try:
        page.wait_for_function(f"() => !document.querySelector({LOADING!r})", timeout=SPINNER_TIMEOUT_MS)
    except Exception:  # noqa: BLE001 - Playwright's timeout: report it as a finding, keep walking
        walk.fail(role, url, "still loading after 10 s")
    if untypeset := untypeset_math(page):
        walk.fail(role, url, f"TeX left untypeset: {untypeset}")
    name = re.sub(r"[^A-Za-z0-9]+", "-", urlsplit(url).path + "-" + urlsplit(url).query).strip("-") or "home"
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(50)  # let layout settle after the resize
        wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if wide > 0:
            culprit = page.evaluate(WIDEST_ELEMENTS, width)
            walk.fail(role, url, f"wider than the window at {width} px by {wide} px ({culprit})")
        if width == WIDTHS[0] and (broken := broken_words(page)):
            walk.fail(role, url, f"table cells break words at {width} px: {broken}")
        page.screenshot(path=str(SHOTS / f"{role}-{name}-{width}.png"), full_page=True)
    for error in errors:
        walk.fail(role, url, error)
    return same_origin_links(page, walk.origin)


def walk_role(browser, walk: Walk, role: str, sign_in) -> None:
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(15_000)
        sign_in(page, role, DEMO_PASSWORD)
        queue = deque([f"{walk.origin}/"])
        walk.seen_patterns.add(url_pattern(role, queue[0]))
        pages = 0
        while queue and pages < MAX_PAGES_PER_ROLE:
            url = queue.popleft()
            pages += 1
            walk.visited.append(f"{role} {url}")
            # A fresh tab per page, so one page's listeners and timers never blame another.
            tab = context.new_page()
            tab.set_default_timeout(15_000)
            try:
                links = visit(tab, walk, role, url)
            finally:
                tab.close()
            for link, is_download in links:
                path = urlsplit(link).path
                if SKIPPED_PATHS.match(path):
                    continue
                pattern = url_pattern(role, link)
                if pattern in walk.seen_patterns:
                    continue
                walk.seen_patterns.add(pattern)
                if is_download or DOWNLOADS.search(link):
                    status = context.request.get(link).status
                    walk.downloads.append(f"{role} {link} {status}")
                    if status >= 400:
                        walk.fail(role, link, f"download answered HTTP {status}")
                    continue
                queue.append(link)
        page.close()
    finally:
        context.close()


def test_every_linked_page_loads_cleanly_for_every_role_and_kind(browser, demo_site, sign_in):
    shutil.rmtree(SHOTS, ignore_errors=True)  # only this walk's pictures, so none is mistaken for today's
    SHOTS.mkdir(parents=True, exist_ok=True)
    walk = Walk(origin=demo_site.url)
    for role in ROLES:
        walk_role(browser, walk, role, sign_in)
    (SHOTS / "visited.txt").write_text("\n".join(walk.visited + ["", "downloads:"] + walk.downloads) + "\n")
    # Every kind's project pages were reached, not just the home page.
    for spec in PROJECTS:
        assert any(f"/p/{spec.slug}/" in line for line in walk.visited), f"{spec.slug} was never visited"
    assert not walk.problems, f"{len(walk.problems)} problem(s):\n" + "\n".join(walk.problems)

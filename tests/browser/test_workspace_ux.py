"""The annotator's workspace in real Chromium: what the first walk-through found, fixed."""

import pytest

from annotation.kinds import get_kind
from annotation.models import Annotation, Assignment, Item, Role
from annotation.services import membership_add
from tests.browser.test_keyboard import finished, open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
COPA = get_kind("copa_likert")
TEX_QUESTION = (
    "Why does this hold?\n\n$$\\begin{align} \\sum_{i=1}^n i &= \\frac{n(n+1)}{2} \\end{align}$$\n\n"
    "With $x_1 > 0$ **always**.<script>window.ranScript = true</script>"
)

SHOWN_ITEM = "(document.querySelector('.item code') || {}).textContent"


@pytest.fixture
def copa_project(make_project, make_user):
    def make(questions, *, title="CoPA pilot", guidelines="", annotators=("ann1",), response=None):
        project = make_project("copa_likert", overlap=1, title=title, guidelines=guidelines)
        for index, question in enumerate(questions):
            payload = {**COPA.example_payload(), "question": question}
            if response:
                payload["response"] = response
            Item.objects.create(project=project, external_id=f"q{index}", payload=payload)
        for name in annotators:
            membership_add(project=project, user=make_user(name), role=Role.ANNOTATOR)
        return project

    return make


def test_opening_an_item_keeps_its_question_in_view(page, live_server, sign_in, copa_project):
    # A long question, as StackExchange bodies are: the first control sits below the fold.
    question = "Which grinder should I buy for espresso on a budget?\n\n" + "More detail on the setup.\n\n" * 30
    project = copa_project([question], response="Buy a hand grinder.\n\n" * 30)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    assert page.evaluate("document.activeElement.getBoundingClientRect().top") > page.viewport_size["height"]
    assert page.evaluate("window.scrollY") == 0
    box = page.locator(".context .text").first.bounding_box()
    assert box["y"] >= 0 and box["y"] + 20 < page.viewport_size["height"]  # the question is on screen
    assert page.evaluate("document.activeElement.name") == "CT"  # and the keys still act on the first row


def test_tex_renders_with_katex_and_script_in_item_text_never_runs(page, live_server, sign_in, copa_project):
    project = copa_project([TEX_QUESTION])
    sign_in(page, "ann1")
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_workspace(page, live_server, project)
    page.wait_for_selector(".katex-display .katex")
    assert page.locator(".math-inline .katex").count() == 1
    assert page.locator(".context strong", has_text="always").count() == 1
    assert page.evaluate("window.ranScript") is None and not errors


def test_tex_in_an_item_served_by_htmx_renders_too(page, live_server, sign_in, copa_project):
    # Each annotator has an order of their own: either item may come first, so both carry a formula
    # and the check waits for the other one's to be typeset after the swap.
    project = copa_project(["First: $a^2 + b^2 = c^2$.", "Second: $e^{i\\pi} + 1 = 0$."])
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    first = page.locator(".context .text").first.text_content()
    for key in "222222":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_function(
        "first => { const text = document.querySelector('.context .text');"
        " return text && text.textContent !== first && text.querySelector('.math-inline .katex'); }",
        arg=first,
    )
    assert Annotation.objects.count() == 1


#: Formulas from an import that try to take over the page, and one that is merely large.
HOSTILE_TEX = (
    "A box: $\\rule{500em}{500em}$ in a line.\n\n"
    "Lowered: $$\\raisebox{-200em}{X}$$\n\n"
    "Pushed aside: $\\kern-300em Y$ here.\n\n"
    "Tall: $$\\begin{array}{c}" + "1 \\\\ " * 400 + "\\end{array}$$\n\n"
    "Fine: $a^2 + b^2 = c^2$."
)
#: The area a formula draws on, its own box and every box inside it (not KaTeX's MathML copy, which is
#: clipped to nothing), in px, and its text's em.
DRAWN = """(span) => {
  const rects = [span, ...span.querySelectorAll('*')].filter(e => !e.closest('.katex-mathml'))
    .map(e => e.getBoundingClientRect()).filter(r => r.width || r.height);
  const em = parseFloat(getComputedStyle(span).fontSize);
  return {em, top: Math.min(...rects.map(r => r.top)), bottom: Math.max(...rects.map(r => r.bottom)),
          left: Math.min(...rects.map(r => r.left)), right: Math.max(...rects.map(r => r.right))};
}"""


def test_no_formula_draws_a_giant_box_or_outside_its_place(page, live_server, sign_in, copa_project):
    project = copa_project([HOSTILE_TEX])
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    page.wait_for_selector(".math-inline .katex")
    formulas = page.locator("[data-math]")
    assert formulas.count() == 5 and page.locator("[data-math]:not([data-rendered])").count() == 0
    width = page.viewport_size["width"]
    shown_as_source = []
    for index in range(formulas.count()):
        formula = formulas.nth(index)
        if formula.evaluate("e => e.classList.contains('math-source')"):
            # Plain text flowing in its paragraph: nothing drawn, nothing placed over the form.
            assert formula.evaluate("e => e.children.length") == 0
            shown_as_source.append(index)
            continue
        drawn = formula.evaluate(DRAWN)
        assert drawn["bottom"] - drawn["top"] <= 16 * drawn["em"]
        assert drawn["left"] >= 0 and drawn["right"] <= width
    # maxSize keeps the rule to 10 em; what would still land far away is shown as its TeX source.
    assert formulas.nth(0).locator(".katex").count() == 1 and shown_as_source == [1, 2, 3]
    assert formulas.nth(1).text_content() == "\\raisebox{-200em}{X}"


def test_edit_after_undo_stays_in_the_workspace(page, live_server, sign_in, copa_project):
    project = copa_project(["First question?", "Second question?"])
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for key in "111111":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#undo-link")
    page.keyboard.press("Alt+u")
    page.wait_for_url("**/edit/")
    page.wait_for_function("document.activeElement && document.activeElement.closest('#annotation-form')")
    page.keyboard.press("2")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("text=is saved as a new version")
    assert page.url == f"{live_server.url}/p/{project.slug}/annotate/"
    assert page.locator("h1").count() == 1 and page.locator("#workspace .topbar").count() == 0
    assert list(Annotation.objects.order_by("version").values_list("version", "value__scores__CT")) == [(1, 1), (2, 2)]


def open_edit_from_history(page, live_server, project) -> None:
    """Answer the project's one item, then open its edit page from the history, the form focused."""
    open_workspace(page, live_server, project)
    for key in "111111":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    finished(page)
    page.goto(f"{live_server.url}/p/{project.slug}/history/")
    page.click("text=Edit")
    page.wait_for_function("document.activeElement && document.activeElement.closest('#annotation-form')")


def test_edit_from_history_returns_to_history(page, live_server, sign_in, copa_project):
    project = copa_project(["First question?"])
    sign_in(page, "ann1")
    open_edit_from_history(page, live_server, project)
    page.keyboard.press("0")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{live_server.url}/p/{project.slug}/history/")
    assert page.locator("h1").inner_text().startswith("Your answers in")
    assert page.locator("text=is saved as a new version").count() == 1
    assert "Cognitive Trust: 0 Mismatch" in page.inner_text("table")


def test_alt_u_after_a_skip_reopens_the_skipped_item(page, live_server, sign_in, copa_project):
    project = copa_project(["First question?", "Second question?", "Third question?"])
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for key in "111111":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    page.wait_for_selector("#undo-link")
    skipped_item = page.locator(".item code").first.inner_text()
    page.keyboard.press("Alt+s")
    page.keyboard.type("not sure")
    page.keyboard.press("Enter")
    page.wait_for_function(SHOWN_ITEM + f" !== '{skipped_item}'")
    page.keyboard.press("Alt+u")
    page.wait_for_function(SHOWN_ITEM + f" === '{skipped_item}'")
    assert "editing your answer" not in page.inner_text(".item")
    # The workspace names the item by the rater's assignment number (blinding), "#<pk>".
    assert Assignment.objects.get(pk=int(skipped_item.removeprefix("#"))).status == Assignment.Status.ASSIGNED


def test_label_form_shows_only_the_box_of_the_chosen_action(page, live_server, sign_in, one_item_project):
    project = one_item_project("label_contextualization")
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    assert page.is_visible("#statement") and not page.is_visible("#reason")
    page.check("input[name=action][value=cannot_contextualize]")
    assert page.is_visible("#reason") and not page.is_visible("#statement")
    page.fill("#reason", "The label names a dataset, not an intent.")
    page.keyboard.press("Control+Enter")
    finished(page)
    assert Annotation.objects.get().value == {
        "action": "cannot_contextualize",
        "reason": "The label names a dataset, not an intent.",
    }


def test_long_titles_and_label_codes_stay_inside_their_boxes(page, live_server, sign_in, copa_project):
    title = "A very long project title about cognitive personalisation " * 3
    guidelines = "Fail reasons: `hallucination_or_contradiction`, theoretical_error_or_fabricated_theory_name."
    project = copa_project(["Short?"], title=title.strip(), guidelines=guidelines)
    sign_in(page, "ann1")
    open_workspace(page, live_server, project)
    for selector in (".guidelines", ".ws-head", ".item"):
        overflow = page.evaluate(
            "s => { const e = document.querySelector(s); return e.scrollWidth - e.clientWidth; }", selector
        )
        assert overflow <= 1, selector
    page.goto(f"{live_server.url}/p/{project.slug}/")
    start = page.locator("text=Start annotating").bounding_box()
    history = page.locator("a", has_text="Your history").bounding_box()
    assert history["x"] - (start["x"] + start["width"]) >= 8  # the two links do not touch


def test_dark_theme_follows_the_system_setting(browser, live_server, copa_project, sign_in):
    copa_project(["Short?"])
    for scheme, dark in (("dark", True), ("light", False)):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
        page = context.new_page()
        sign_in(page, "ann1")
        background = page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        text = page.evaluate("getComputedStyle(document.body).color")
        red, green, blue = (int(part) for part in background[background.index("(") + 1 : -1].split(",")[:3])
        assert (red + green + blue < 150) is dark, (scheme, background, text)
        context.close()


def test_favicon_loads_on_a_page(page, live_server, sign_in, copa_project):
    copa_project(["Short?"])
    sign_in(page, "ann1")
    response = page.request.get(f"{live_server.url}/favicon.ico")
    assert response.ok and response.headers["content-type"] in ("image/x-icon", "image/vnd.microsoft.icon")

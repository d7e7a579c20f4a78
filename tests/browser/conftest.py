"""Real Chromium (Debian's package) driven by Playwright against the live test server."""

import os
import shutil
from pathlib import Path

import pytest

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Role
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


#: Said once, at the end of a run on a machine without Chromium, in place of a skip line per test.
NO_CHROMIUM = (
    "{count} browser test(s) not run: Chromium is not installed. Install it (Debian: apt-get install chromium) "
    "or point CHROMIUM_PATH at it, then run them with: .venv/bin/python -m pytest tests/browser"
)
_LEFT_OUT = pytest.StashKey[int]()


def pytest_collection_modifyitems(config, items):
    """Without Chromium the browser tests are left out of the run, and the summary says so once."""
    if chromium_path() is not None:
        return
    left_out = [item for item in items if item.get_closest_marker("browser") is not None]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item.get_closest_marker("browser") is None]
        config.stash[_LEFT_OUT] = len(left_out)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    count = config.stash.get(_LEFT_OUT, 0)
    if count:
        terminalreporter.write_sep("-", "browser tests")
        terminalreporter.write_line(NO_CHROMIUM.format(count=count))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="session")
def browser():
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium is not installed (CI installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, request):
    # Playwright's wait_for_function evaluates strings, which the Content-Security-Policy forbids;
    # test_content_security_policy.py checks the policy in a context of its own.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    failed = getattr(request.node, "report_call", None)
    if failed is not None and failed.failed:
        # A failing browser test leaves a picture of what the person would have seen.
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.fixture
def sign_in(live_server):
    def sign_in(page, username: str, password: str = "pw-for-tests-1") -> None:
        """Sign in by keyboard, as a person would."""
        page.goto(f"{live_server.url}/accounts/login/")
        # The username field has autofocus; typing before focus lands would lose the first keys.
        page.wait_for_function("document.activeElement && document.activeElement.id === 'id_username'")
        page.keyboard.type(username)
        page.keyboard.press("Tab")
        page.keyboard.type(password)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/")

    return sign_in


@pytest.fixture
def one_item_project(make_project, make_user, tmp_path):
    def make(kind_name: str, *, annotators=("ann1",), role=Role.ANNOTATOR, overlap=1):
        project = make_project(kind_name, overlap=overlap)
        path = write_jsonl(tmp_path / f"{kind_name}.jsonl", synthetic_records(get_kind(kind_name), 1))
        import_items(project=project, path=path)
        for name in annotators:
            membership_add(project=project, user=make_user(name), role=role)
        return project

    return make

"""A researcher publishes a release from the browser: the details are typed, saved and remembered, and the
download is the release folder as a .zip."""

from __future__ import annotations

import zipfile

import pytest

from annotation.models import Role
from annotation.services import membership_add
from tests.validation.release.conftest import study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_researcher_saves_details_and_downloads_the_release(
    page, live_server, sign_in, make_project, make_user, judge_run, tmp_path
):
    project = study(make_project, judge_run, "copa_likert")
    membership_add(project=project, user=make_user("res"), role=Role.RESEARCHER)
    sign_in(page, "res")
    page.goto(f"{live_server.url}/p/{project.slug}/adjudicate/")
    page.get_by_role("link", name="Publish a dataset release").click()
    page.get_by_label("Licence").fill("cc-by-4.0")
    page.get_by_label("Creators, one per line").fill("Ada Lovelace\nAlan Turing")
    page.get_by_label("Creators, one per line").press("Tab")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("Release details saved").wait_for()
    assert page.get_by_label("Licence").input_value() == "cc-by-4.0"
    page.get_by_label("runs").uncheck()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the release (.zip)").press("Enter")
    path = tmp_path / "release.zip"
    download.value.save_as(path)
    names = set(zipfile.ZipFile(path).namelist())
    root = f"{project.slug}-release"
    assert {f"{root}/README.md", f"{root}/croissant.json", f"{root}/data/gold-00000-of-00001.parquet"} <= names
    assert not any("/data/runs-" in name for name in names)
    assert "license: cc-by-4.0" in zipfile.ZipFile(path).read(f"{root}/README.md").decode()
    page.set_viewport_size({"width": 390, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

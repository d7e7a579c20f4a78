"""The release from the command, the API and the page: the same folder, researchers only, metadata remembered,
bad input refused with nothing stored."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.models import Role
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.release.conftest import study as _study
from validation.models import ReleaseSettings

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(make_project, judge_run, make_user):
    project = _study(make_project, judge_run, "copa_likert")
    people = {role: make_user(role) for role in ("researcher", "expert", "annotator")}
    membership_add(project=project, user=people["researcher"], role=Role.RESEARCHER)
    membership_add(project=project, user=people["expert"], role=Role.EXPERT)
    membership_add(project=project, user=people["annotator"], role=Role.ANNOTATOR)
    return project, people


def run_command(command: str, *argv: str) -> tuple[int, str, str]:
    """Run a command in-process (exit code, stdout, stderr), its output captured by the command's own streams."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(command, *argv, stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), str(exc)
    return 0, out.getvalue(), err.getvalue()


def _names(data: bytes) -> list[str]:
    return sorted(zipfile.ZipFile(io.BytesIO(data)).namelist())


class CommandTests:
    def test_writes_the_folder_and_remembers_the_metadata(self, team, tmp_path):
        project, _ = team
        code, out, err = run_command(
            "release", project.slug, "-o", str(tmp_path / "rel"), "--license", "cc-by-4.0",
            "--creators", "Ada Lovelace", "--zip", str(tmp_path / "rel.zip"),
        )  # fmt: skip
        assert code == 0, err
        summary = json.loads(out)
        assert summary["rows"] == {"gold": 4, "answers": 12, "runs": 2}
        assert "release copa: split answers" in err.replace(project.slug, "copa")
        assert ReleaseSettings.objects.get(project=project).license == "cc-by-4.0"
        header = yaml.safe_load((tmp_path / "rel" / "README.md").read_text().split("---\n", 2)[1])
        assert header["license"] == "cc-by-4.0"
        assert "rel/croissant.json" in _names((tmp_path / "rel.zip").read_bytes())

    def test_bad_input_exits_1_and_writes_nothing(self, team, tmp_path):
        project, _ = team
        code, _, err = run_command("release", project.slug, "-o", str(tmp_path / "x"), "--splits", "gold,nope")
        assert code == 1 and "unknown split 'nope'" in err
        code, _, err = run_command("release", project.slug, "-o", str(tmp_path / "x"), "--url", "not a url")
        assert code == 1 and "url" in err
        assert not ReleaseSettings.objects.exists()
        assert list(tmp_path.iterdir()) == []


class ApiTests:
    def test_researcher_downloads_the_release(self, team):
        project, people = team
        response = client_for(people["researcher"]).get(f"/api/projects/{project.slug}/release/?splits=gold,runs")
        assert response.status_code == 200 and response["Content-Type"] == "application/zip"
        names = _names(b"".join(response.streaming_content))
        root = f"{project.slug}-release"
        assert names == sorted(
            [
                f"{root}/README.md",
                f"{root}/croissant.json",
                f"{root}/data/gold-00000-of-00001.parquet",
                f"{root}/data/runs-00000-of-00001.parquet",
            ]
        )

    @pytest.mark.parametrize("who", ["expert", "annotator", None])
    def test_only_researchers_release_or_set_metadata(self, team, who):
        project, people = team
        client = client_for(people[who] if who else None)
        assert client.get(f"/api/projects/{project.slug}/release/").status_code in (401, 403)
        patched = client.patch(f"/api/projects/{project.slug}/release/settings/", {"license": "mit"}, format="json")
        assert patched.status_code in (401, 403)
        assert not ReleaseSettings.objects.exists()

    def test_metadata_is_set_and_refused_field_by_field(self, team):
        project, people = team
        client = client_for(people["researcher"])
        url = f"/api/projects/{project.slug}/release/settings/"
        assert client.get(url).json()["version"] == "1.0.0"
        ok = client.patch(url, {"license": "mit", "creators": "A\nB"}, format="json")
        assert ok.status_code == 200 and ok.json()["creators"] == "A\nB"
        bad = client.patch(url, {"url": "javascript:alert(1)", "license": "x" * 65}, format="json")
        assert bad.status_code == 400
        assert {e["field"] for e in bad.json()["errors"]} >= {"license"}
        assert ReleaseSettings.objects.get(project=project).license == "mit"

    def test_bad_split_or_snapshot_is_a_4xx(self, team):
        project, people = team
        client = client_for(people["researcher"])
        assert client.get(f"/api/projects/{project.slug}/release/?splits=secret").status_code == 400
        assert client.get(f"/api/projects/{project.slug}/release/?snapshot=abc").status_code == 400
        assert client.get(f"/api/projects/{project.slug}/release/?snapshot=999").status_code == 400


class PageTests:
    def test_researcher_saves_details_and_downloads(self, team, client):
        project, people = team
        client.force_login(people["researcher"])
        page = client.get(reverse("release", args=[project.slug]))
        assert page.status_code == 200 and b"Download the release" in page.content
        saved = client.post(
            reverse("release", args=[project.slug]),
            {"license": "cc-by-4.0", "version": "2.0.0", "language": "en", "creators": "Ada"},
        )
        assert saved.status_code == 302
        assert ReleaseSettings.objects.get(project=project).version == "2.0.0"
        download = client.get(reverse("release_download", args=[project.slug]), {"splits": ["gold"]})
        assert download.status_code == 200
        assert f"{project.slug}-release/data/gold-00000-of-00001.parquet" in _names(
            b"".join(download.streaming_content)
        )

    def test_a_bad_detail_is_shown_and_nothing_stored(self, team, client):
        project, people = team
        client.force_login(people["researcher"])
        refused = client.post(reverse("release", args=[project.slug]), {"version": "", "url": "nope"})
        assert refused.status_code == 422 and b"Not saved" in refused.content
        assert not ReleaseSettings.objects.exists()

    def test_an_expert_is_refused_the_page_the_post_and_the_download(self, team, client):
        project, people = team
        client.force_login(people["expert"])
        assert client.get(reverse("release", args=[project.slug])).status_code == 403
        assert client.post(reverse("release", args=[project.slug]), {"version": "9"}).status_code == 403
        assert client.get(reverse("release_download", args=[project.slug])).status_code == 403
        assert not ReleaseSettings.objects.exists()
        gold = client.get(reverse("adjudication_list", args=[project.slug]))
        assert reverse("release", args=[project.slug]).encode() not in gold.content

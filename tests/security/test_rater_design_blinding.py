"""Raters are not shown the study's design: an annotator's project and project-list answers, the
project page and their item and answer responses name no suggestion probability, seed, known-answer
rate, adjudication rules, sample stratum or inclusion probability; researchers and experts still read
them."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.models import Role
from annotation.sampling import validation_sample_draw
from annotation.services import membership_add
from tests.api.conftest import client_for
from tests.validation.conftest import add_items, copa_value

pytestmark = pytest.mark.django_db

PROBABILITY, SEED = 0.37, 9_876_543
DESIGN_WORDS = ("suggestion_probability", "probability", "seed", "qualification_rate", "adjudication_rules",
                "stratum", "strata", "inclusion", "revealed_fields", "overlap", str(SEED), "0.37")  # fmt: skip


@pytest.fixture
def study(make_project, make_user):
    project = make_project(
        "copa_likert", slug="main", suggestion_exposure="randomised", suggestion_probability=PROBABILITY, seed=SEED,
        qualification_rate=0.0,
    )  # fmt: skip
    items = add_items(project, [f"i{n:02d}" for n in range(12)])
    for n, item in enumerate(items.values()):
        item.payload["response_source"] = "accepted" if n % 2 else "top-voted"
        item.save(update_fields=["payload"])
    validation_sample_draw(project=project, n=6, seed=3, strata="response_source")
    people = {name: make_user(name) for name in ("ann", "expert", "res")}
    membership_add(project=project, user=people["ann"], role=Role.ANNOTATOR)
    membership_add(project=project, user=people["expert"], role=Role.EXPERT)
    membership_add(project=project, user=people["res"], role=Role.RESEARCHER)
    return project, people


def leaks(text: str) -> list[str]:
    return [word for word in DESIGN_WORDS if word in text]


class AnnotatorTests:
    def test_project_and_project_list_answers_carry_no_design(self, study):
        project, people = study
        client = client_for(people["ann"])
        one = client.get(f"/api/projects/{project.slug}/")
        listed = client.get("/api/projects/")
        assert one.status_code == listed.status_code == 200
        # ``design`` is a designed kind's questions and scales (null for the papers' kinds): what an annotator
        # answering by the API must know, not the study's design.
        assert set(one.json()) == {"slug", "title", "kind", "guidelines", "design", "created_at", "archived_at"}
        assert leaks(one.content.decode()) == [] and leaks(listed.content.decode()) == []

    def test_item_answer_and_answer_list_responses_carry_no_design(self, study):
        project, people = study
        client = client_for(people["ann"])
        claimed = client.post(f"/api/projects/{project.slug}/assignments/next/")
        assert claimed.status_code == 200
        submitted = client.post(
            f"/api/assignments/{claimed.json()['id']}/submit/?next=true", {"value": copa_value(1)}, format="json"
        )
        assert submitted.status_code in (200, 201)
        detail = client.get(f"/api/annotations/{submitted.json()['id']}/")
        listed = client.get(f"/api/projects/{project.slug}/annotations/")
        for response in (claimed, submitted, detail, listed):
            assert leaks(json.dumps(response.json())) == [], response.json()
        assert "response_source" not in json.dumps(claimed.json())  # the stratum field is a hidden one

    def test_the_project_page_shows_no_suggestion_probability(self, client, study):
        project, people = study
        client.force_login(people["ann"])
        page = client.get(reverse("project_detail", args=[project.slug])).content.decode()
        assert "p = 0.37" not in page and "shown at random" not in page


class ResearcherAndExpertTests:
    @pytest.mark.parametrize("who", ["res", "expert"])
    def test_they_still_read_the_design(self, study, who):
        project, people = study
        answer = client_for(people[who]).get(f"/api/projects/{project.slug}/").json()
        assert (answer["suggestion_probability"], answer["seed"]) == (PROBABILITY, SEED)
        listed = client_for(people[who]).get("/api/projects/").json()["results"]
        assert listed[0]["suggestion_probability"] == PROBABILITY

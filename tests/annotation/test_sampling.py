"""Validation samples: seeded, stratified, extended by later draws, and the only items people are served;
a strata field no item has is refused (service, command, page, API, estimates' ``by``), and the latest
draw can be discarded before anyone labels it (service, command, page, API)."""

import re
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.assignments import assignment_claim_next, assignment_skip, assignment_submit
from annotation.errors import ValidationFailed
from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Item, Role, SampleDraw, SampleItem, ValidationSample
from annotation.sampling import (
    BAD_FRACTION,
    DRAW_STARTED,
    FIELD_ON_NO_ITEM,
    NOT_LATEST,
    NOTHING_LEFT,
    SIZE_NEEDED,
    STRATA_FIXED,
    DrawNotDiscardable,
    SampleExhausted,
    project_sample_design,
    sample_discardable_draw,
    validation_sample_discard,
    validation_sample_draw,
)
from annotation.services import membership_add
from annotation.synthetic import synthetic_records, write_jsonl
from tests.api.conftest import client_for
from validation.estimates.build import EstimateParameters

COPA = get_kind("copa_likert")
SOURCES = ("accepted", "top-voted", "model-a")


def copa_records(count: int, *, start: int = 0, sources=SOURCES):
    for number, record in enumerate(synthetic_records(COPA, count, start=start), start=start):
        # Strata of unequal size: accepted gets half of the items.
        record["response_source"] = sources[0] if number % 2 == 0 else sources[1 + number % 4 // 2]
        yield record


@pytest.fixture
def copa_project(make_project, tmp_path):
    def make(n_items: int = 40, **options):
        project = make_project("copa_likert", **options)
        import_items(project=project, path=write_jsonl(tmp_path / "items.jsonl", copa_records(n_items)))
        return project

    return make


def scores(value: int = 1) -> dict:
    return {"scores": dict.fromkeys(("CT", "SA", "SC", "CLM", "MS", "AMR"), value)}


@pytest.mark.django_db
class SampleDrawTests:
    def test_a_draw_stores_items_probabilities_seed_and_who(self, copa_project, make_user):
        project, user = copa_project(40), make_user("res")
        draw = validation_sample_draw(project=project, n=10, seed=3, user=user)
        assert (draw.number, draw.drawn, draw.seed, draw.created_by) == (1, 10, 3, user)
        probabilities = set(SampleItem.objects.filter(draw=draw).values_list("inclusion_probability", flat=True))
        assert probabilities == {10 / 40}
        assert draw.strata == {"": {"population": 40, "sampled": 10, "probability": 0.25}}

    def test_the_same_seed_draws_the_same_items_and_another_seed_others(self, make_project, tmp_path, make_user):
        path = write_jsonl(tmp_path / "items.jsonl", copa_records(60))
        picked = []
        for slug, seed in (("one", 5), ("two", 5), ("three", 6)):
            project = make_project("copa_likert", slug=slug)
            import_items(project=project, path=path)
            draw = validation_sample_draw(project=project, n=12, seed=seed)
            picked.append(sorted(SampleItem.objects.filter(draw=draw).values_list("item__external_id", flat=True)))
        assert picked[0] == picked[1] != picked[2]

    def test_proportional_strata_follow_stratum_sizes(self, copa_project):
        project = copa_project(40)  # 20 accepted, 10 top-voted, 10 model-a
        draw = validation_sample_draw(project=project, n=8, seed=1, strata="response_source")
        drawn = Counter(SampleItem.objects.filter(draw=draw).values_list("stratum", flat=True))
        assert drawn == {"accepted": 4, "top-voted": 2, "model-a": 2}
        assert draw.strata["accepted"]["probability"] == 4 / 20 and draw.strata["model-a"]["probability"] == 2 / 10

    def test_equal_allocation_takes_the_same_number_per_stratum(self, copa_project):
        project = copa_project(40)
        draw = validation_sample_draw(project=project, n=9, seed=1, strata="response_source", allocation="equal")
        drawn = Counter(SampleItem.objects.filter(draw=draw).values_list("stratum", flat=True))
        assert drawn == {"accepted": 3, "top-voted": 3, "model-a": 3}
        design = project_sample_design(project=project)
        assert design.probabilities == {"accepted": 3 / 20, "top-voted": 3 / 10, "model-a": 3 / 10}

    def test_a_second_draw_extends_the_sample_with_new_items(self, copa_project):
        project = copa_project(40)
        first = validation_sample_draw(project=project, n=10, seed=1)
        second = validation_sample_draw(project=project, fraction=0.25, seed=2)
        assert (second.number, second.drawn) == (2, 10)
        first_ids = set(SampleItem.objects.filter(draw=first).values_list("item_id", flat=True))
        second_ids = set(SampleItem.objects.filter(draw=second).values_list("item_id", flat=True))
        assert not first_ids & second_ids
        assert project_sample_design(project=project).probabilities == {"": 20 / 40}
        assert second.strata[""]["sampled"] == 20

    def test_a_later_draw_keeps_the_strata_of_the_first(self, copa_project):
        project = copa_project(20)
        validation_sample_draw(project=project, n=4, seed=1, strata="response_source")
        with pytest.raises(ValidationFailed) as refused:
            validation_sample_draw(project=project, n=4, seed=2)
        assert refused.value.errors[0].message == STRATA_FIXED.format(current="'response_source'")
        assert SampleDraw.objects.count() == 1

    def test_bad_sizes_and_fields_are_refused_and_nothing_is_stored(self, copa_project):
        project = copa_project(10)
        with pytest.raises(ValidationFailed) as both:
            validation_sample_draw(project=project, n=3, fraction=0.5, seed=1)
        assert both.value.errors[0].message == SIZE_NEEDED
        with pytest.raises(ValidationFailed) as fraction:
            validation_sample_draw(project=project, fraction=1.5, seed=1)
        assert fraction.value.errors[0].message == BAD_FRACTION
        with pytest.raises(ValidationFailed) as field:
            validation_sample_draw(project=project, n=3, seed=1, strata="no_such_field")
        assert field.value.errors[0].field == "strata"
        assert not SampleDraw.objects.exists() and not Item.objects.filter(held_out=True).exists()

    def test_a_draw_past_the_last_item_is_refused(self, copa_project):
        project = copa_project(5)
        assert validation_sample_draw(project=project, n=50, seed=1).drawn == 5
        with pytest.raises(SampleExhausted, match=NOTHING_LEFT):
            validation_sample_draw(project=project, n=1, seed=2)


@pytest.mark.django_db
class SampleServingTests:
    def test_only_sampled_items_are_served(self, copa_project, make_user):
        project = copa_project(30, overlap=1)
        draw = validation_sample_draw(project=project, n=6, seed=4)
        sampled = set(SampleItem.objects.filter(draw=draw).values_list("item__external_id", flat=True))
        served = []
        annotator = make_user("ann")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        while (assignment := assignment_claim_next(project=project, user=annotator)) is not None:
            served.append(assignment.item.external_id)
            assignment_submit(assignment=assignment, value=scores())
        assert set(served) == sampled

    def test_a_skip_of_an_item_claimed_before_the_draw_does_not_reopen_it(self, copa_project, make_user):
        project = copa_project(20, overlap=1)  # 10 accepted, 5 top-voted, 5 model-a
        annotator = make_user("ann")
        membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
        held = assignment_claim_next(project=project, user=annotator)
        while held.item.payload["response_source"] == "accepted":
            assignment_submit(assignment=held, value=scores())
            held = assignment_claim_next(project=project, user=annotator)
        # One item, proportional: it comes from the largest stratum, so never the held item.
        validation_sample_draw(project=project, n=1, seed=9, strata="response_source")
        assert not SampleItem.objects.filter(item_id=held.item_id).exists()
        assignment_skip(assignment=held, reason="unclear")
        assert Item.objects.get(pk=held.item_id).is_open is False

    def test_items_imported_after_a_draw_are_held_out(self, copa_project, tmp_path):
        project = copa_project(10)
        validation_sample_draw(project=project, n=2, seed=1)
        import_items(project=project, path=write_jsonl(tmp_path / "more.jsonl", copa_records(5, start=100)))
        later = Item.objects.filter(project=project, external_id__in=[f"copa_likert-{n:07d}" for n in range(100, 105)])
        assert all(item.held_out and not item.is_open for item in later)
        assert Item.objects.filter(project=project, is_open=True).count() == 2

    def test_a_second_draw_opens_its_items(self, copa_project):
        project = copa_project(10)
        validation_sample_draw(project=project, n=2, seed=1)
        validation_sample_draw(project=project, n=3, seed=2)
        assert Item.objects.filter(project=project, is_open=True, held_out=False).count() == 5


@pytest.mark.django_db
class DrawSampleCommandTests:
    def test_the_command_draws_and_prints_the_draw(self, copa_project, capsys):
        project = copa_project(20)
        call_command("draw_sample", project.slug, "--n", "5", "--strata", "response_source", "--seed", "7")
        out = capsys.readouterr().out
        assert '"drawn": 5' in out and '"draw": 1' in out
        assert SampleItem.objects.filter(sample__project=project).count() == 5

    def test_bad_input_exits_1_with_the_field(self, copa_project):
        project = copa_project(5)
        with pytest.raises(CommandError) as failed:
            call_command("draw_sample", project.slug, "--fraction", "2", "--seed", "1")
        assert failed.value.returncode == 1 and BAD_FRACTION in str(failed.value)


@pytest.fixture
def researcher(make_user):
    return make_user("res")


def member(project, user, role=Role.RESEARCHER):
    membership_add(project=project, user=user, role=role)
    return user


@pytest.mark.django_db
class StrataTypoTests:
    def test_a_field_no_item_has_is_refused_and_nothing_is_stored(self, copa_project):
        project = copa_project(20)
        with pytest.raises(ValidationFailed) as refused:
            validation_sample_draw(project=project, n=5, seed=1, strata="meta.nonexistent")
        assert [(e.field, e.message) for e in refused.value.errors] == [
            ("strata", FIELD_ON_NO_ITEM.format(field="meta.nonexistent"))
        ]
        assert not ValidationSample.objects.exists() and not Item.objects.filter(held_out=True).exists()

    def test_a_field_some_item_has_is_taken(self, copa_project):
        project = copa_project(20)
        item = Item.objects.filter(project=project).first()
        item.payload = {**item.payload, "meta": {"domain": "x"}}
        item.save(update_fields=["payload"])
        draw = validation_sample_draw(project=project, n=5, seed=1, strata="meta.domain")
        assert set(draw.strata) == {"x", "(missing)"}

    def test_the_command_exits_1_naming_the_field(self, copa_project):
        project = copa_project(20)
        with pytest.raises(CommandError) as refused:
            call_command("draw_sample", project.slug, "--n", "5", "--seed", "1", "--strata", "meta.nonexistent")
        assert refused.value.returncode == 1 and "no item of the project has 'meta.nonexistent'" in str(refused.value)

    def test_the_api_and_the_page_answer_400_and_store_nothing(self, copa_project, researcher, client):
        project = copa_project(20)
        member(project, researcher)
        body = {"n": 5, "seed": 1, "strata": "meta.nonexistent"}
        response = client_for(researcher).post(f"/api/projects/{project.slug}/sample/", body, format="json")
        assert response.status_code == 400 and "no item of the project has" in response.content.decode()
        client.force_login(researcher)
        response = client.post(f"/p/{project.slug}/sample/", {**body, "allocation": "proportional"})
        assert response.status_code == 400 and "no item of the project has" in response.content.decode()
        assert not SampleDraw.objects.exists()

    def test_estimates_by_a_field_no_item_has_is_refused(self, copa_project):
        project = copa_project(5)
        with pytest.raises(ValueError, match="no item of the project has 'meta.nonexistent'"):
            EstimateParameters(run=1, by="meta.nonexistent").check(project)
        EstimateParameters(run=1, by="response_source").check(project)


@pytest.mark.django_db
class DiscardTests:
    def test_discarding_the_only_draw_removes_the_sample_and_serves_every_item(self, copa_project):
        project = copa_project(20)
        validation_sample_draw(project=project, n=5, seed=1, strata="response_source")
        assert Item.objects.filter(project=project, held_out=True).count() == 15
        assert sample_discardable_draw(project=project) == 1
        assert validation_sample_discard(project=project) == 1
        assert not ValidationSample.objects.exists()
        assert Item.objects.filter(project=project, held_out=False, is_open=True).count() == 20
        # A new sample may take other strata.
        assert validation_sample_draw(project=project, n=5, seed=1).sample.strata_field == ""

    def test_discarding_a_later_draw_holds_its_items_out_again(self, copa_project):
        project = copa_project(20)
        validation_sample_draw(project=project, n=5, seed=1)
        validation_sample_draw(project=project, n=5, seed=2)
        with pytest.raises(DrawNotDiscardable, match=re.escape(NOT_LATEST.format(latest=2))):
            validation_sample_discard(project=project, number=1)
        validation_sample_discard(project=project, number=2)
        assert list(SampleDraw.objects.values_list("number", flat=True)) == [1]
        assert Item.objects.filter(project=project, held_out=False).count() == 5

    def test_a_draw_someone_opened_cannot_be_discarded(self, copa_project, make_user):
        project = copa_project(20)
        validation_sample_draw(project=project, n=5, seed=1)
        annotator = member(project, make_user("ann"), Role.ANNOTATOR)
        assert assignment_claim_next(project=project, user=annotator) is not None
        assert sample_discardable_draw(project=project) is None
        with pytest.raises(DrawNotDiscardable, match=DRAW_STARTED.format(number=1, n=1).split(":")[0]):
            validation_sample_discard(project=project)
        assert SampleDraw.objects.count() == 1

    def test_command_api_and_page(self, copa_project, researcher, make_user, client, capsys):
        project = copa_project(20)
        member(project, researcher)
        validation_sample_draw(project=project, n=5, seed=1)
        call_command("discard_draw", project.slug, "--draw", "1")
        assert '"discarded": 1' in capsys.readouterr().out and not SampleDraw.objects.exists()
        with pytest.raises(CommandError) as refused:
            call_command("discard_draw", project.slug)
        assert refused.value.returncode == 1
        validation_sample_draw(project=project, n=5, seed=1)
        annotator = member(project, make_user("ann"), Role.ANNOTATOR)
        response = client_for(annotator).delete(f"/api/projects/{project.slug}/sample/draws/1/")
        assert response.status_code == 403 and SampleDraw.objects.exists()
        response = client_for(researcher).delete(f"/api/projects/{project.slug}/sample/draws/1/")
        assert response.status_code == 200 and response.json() == {"project": project.slug, "discarded": 1}
        validation_sample_draw(project=project, n=5, seed=1)
        client.force_login(researcher)
        assert "Discard draw 1" in client.get(f"/p/{project.slug}/sample/").content.decode()
        response = client.post(f"/p/{project.slug}/sample/discard/", {"draw": "1"})
        assert response.status_code == 302 and not SampleDraw.objects.exists()
        # A crafted request for a draw someone has opened: refused, kept.
        validation_sample_draw(project=project, n=5, seed=1)
        assignment_claim_next(project=project, user=annotator)
        page = client.get(f"/p/{project.slug}/sample/").content.decode()
        assert "Discard draw" not in page
        response = client.post(f"/p/{project.slug}/sample/discard/", {"draw": "1"})
        assert response.status_code == 409 and "Not discarded" in response.content.decode()
        assert SampleDraw.objects.count() == 1

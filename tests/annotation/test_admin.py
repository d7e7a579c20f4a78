"""The Django admin: staff open every registered list; payloads and the annotation log stay read-only."""

import pytest
from django.urls import reverse

from annotation.importing import import_items
from annotation.kinds import get_kind
from annotation.models import Annotation, Item, Role
from annotation.services import annotation_submit, membership_add
from annotation.synthetic import synthetic_records, write_jsonl

pytestmark = pytest.mark.django_db
COPA = get_kind("copa_likert")
CHANGELISTS = [
    "annotation_project", "annotation_membership", "annotation_item", "annotation_annotation",
    "annotation_assignment", "annotation_importjob", "judges_judge", "judges_judgerun", "judges_suggestion",
]  # fmt: skip


@pytest.fixture
def data(make_project, make_user, tmp_path):
    project = make_project("copa_likert", slug="pilot")
    import_items(project=project, path=write_jsonl(tmp_path / "i.jsonl", synthetic_records(COPA, 2)))
    annotator = make_user("ann")
    membership_add(project=project, user=annotator, role=Role.ANNOTATOR)
    item = Item.objects.filter(project=project).first()
    annotation = annotation_submit(item=item, user=annotator, value=COPA.example_value())
    return project, item, annotation


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pw-for-tests-1")


class AdminTests:
    @pytest.mark.parametrize("changelist", CHANGELISTS)
    def test_superuser_opens_each_changelist_and_can_search_it(self, client, data, superuser, changelist):
        client.force_login(superuser)
        url = reverse(f"admin:{changelist}_changelist")
        assert client.get(url).status_code == 200
        assert client.get(url, {"q": "pilot"}).status_code == 200

    @pytest.mark.parametrize("changelist", CHANGELISTS)
    def test_non_staff_is_sent_to_the_admin_sign_in(self, client, data, make_user, changelist):
        client.force_login(make_user("plain"))
        response = client.get(reverse(f"admin:{changelist}_changelist"))
        assert response.status_code == 302 and reverse("admin:login") in response["Location"]

    def test_staff_without_permissions_is_refused(self, client, data, make_user):
        staff = make_user("staffer")
        staff.is_staff = True
        staff.save(update_fields=["is_staff"])
        client.force_login(staff)
        assert client.get(reverse("admin:annotation_project_changelist")).status_code == 403

    def test_item_payload_is_read_only_and_items_cannot_be_deleted(self, client, data, superuser):
        _, item, _ = data
        client.force_login(superuser)
        page = client.get(reverse("admin:annotation_item_change", args=[item.pk]))
        assert page.status_code == 200 and b'name="payload"' not in page.content
        assert client.post(reverse("admin:annotation_item_delete", args=[item.pk]), {"post": "yes"}).status_code == 403
        assert Item.objects.filter(pk=item.pk).exists()

    def test_annotations_cannot_be_changed_or_deleted(self, client, data, superuser):
        _, _, annotation = data
        client.force_login(superuser)
        page = client.get(reverse("admin:annotation_annotation_change", args=[annotation.pk]))
        assert page.status_code == 200 and b'name="value"' not in page.content
        client.post(reverse("admin:annotation_annotation_change", args=[annotation.pk]), {"value": "{}"})
        delete = client.post(reverse("admin:annotation_annotation_delete", args=[annotation.pk]), {"post": "yes"})
        assert delete.status_code == 403
        assert Annotation.objects.get(pk=annotation.pk).value == COPA.example_value()

"""What the team tests share: a study project with members, items, and a CSV body."""

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from annotation.kinds import get_kind
from annotation.models import Item
from annotation.selectors import open_items_key, project_size_key
from annotation.synthetic import synthetic_records

User = get_user_model()
COPA = get_kind("copa_likert")


def add_items(project, n: int) -> list[Item]:
    items = []
    for record in synthetic_records(COPA, n):
        external_id = record.pop("external_id")
        items.append(Item.objects.create(project=project, external_id=external_id, payload=record))
    return items


def forget_sizes(project) -> None:
    """Drop the project's cached counts (only this project's keys: the cache may be shared)."""
    cache.delete_many([project_size_key(project.pk), open_items_key(project.pk)])


def csv_bytes(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


PASSPHRASE = "a-long-passphrase-7"


def open_link(client, token: str):
    """What the link page's script does: post the fragment's token."""
    return client.post(reverse("invitation_open"), {"token": token})


def accept(client, token: str, password: str = PASSPHRASE):
    open_link(client, token)
    return client.post(reverse("invitation"), {"password1": password, "password2": password})

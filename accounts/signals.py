"""A password change drops every API token of the user (sessions end by Django's own session hash).

``set_password`` marks the user (``_password``) until it is saved; a save of the whole row is also
compared with the stored hash, so a hash written directly counts too. A rehash on sign-in (a stronger
hasher, same password) saves only the ``password`` field without that mark and keeps the tokens.
Bulk ``QuerySet.update(password=...)`` sends no signal: use ``set_password`` and ``save``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from knox.models import AuthToken


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.note_password_change")
def note_password_change(
    sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **kwargs: Any
) -> None:
    instance._concord_password_changed = False
    if raw or instance.pk is None:
        return
    if getattr(instance, "_password", None) is not None:
        instance._concord_password_changed = True
    elif update_fields is None:
        stored = sender._default_manager.filter(pk=instance.pk).values_list("password", flat=True).first()
        instance._concord_password_changed = stored is not None and stored != instance.password


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="accounts.drop_tokens_on_password_change")
def drop_tokens_on_password_change(sender: Any, instance: Any, created: bool = False, **kwargs: Any) -> None:
    if getattr(instance, "_concord_password_changed", False):
        AuthToken.objects.filter(user=instance).delete()
        instance._concord_password_changed = False

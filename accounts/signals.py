"""A password change drops every API token of the user (sessions end by Django's own session hash), ends
the account's open invitation links and its temporary-password mark; a sign-in ends its links too and
marks the session of an account that must still change its temporary password.

``set_password`` marks the user (``_password``) until it is saved; a save of the whole row is also
compared with the stored hash, so a hash written directly counts too. A rehash on sign-in (a stronger
hasher, same password) saves only the ``password`` field without that mark and keeps the tokens.
Bulk ``QuerySet.update(password=...)`` sends no signal: use ``set_password`` and ``save``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from knox.models import AuthToken

from accounts.middleware import SESSION_KEY
from annotation.member_services import account_invitations_end, password_change_done, password_change_required


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
        account_invitations_end(user=instance)
        password_change_done(user=instance)
        instance._concord_password_changed = False


@receiver(user_logged_in, dispatch_uid="accounts.on_sign_in")
def on_sign_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    account_invitations_end(user=user)
    if request is not None and hasattr(request, "session") and password_change_required(user=user):
        request.session[SESSION_KEY] = True

"""Password reset for every account with an e-mail that may sign in, invited accounts included, at
most a few e-mails an hour to one address; a password change that refuses the current password."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordChangeForm, PasswordResetForm, SetPasswordForm
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q

from annotation.member_services import account_reset_activates

User = get_user_model()


SAME_PASSWORD = "Choose a new password: this is the one you have now."
#: The window of CONCORD_RESET_EMAILS_PER_HOUR.
RESET_WINDOW_SECONDS = 3600


def reset_allowed(email: str) -> bool:
    """Count a reset request for ``email`` (whether or not an account has it, so the count tells
    nothing) and say whether it may still be sent one: at most CONCORD_RESET_EMAILS_PER_HOUR an hour.
    A fixed window per address: the counter's key names a hash of the address, never the address."""
    key = "concord:reset:" + hashlib.sha256(email.strip().casefold().encode()).hexdigest()
    cache.add(key, 0, timeout=RESET_WINDOW_SECONDS)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: a new window
        cache.set(key, 1, timeout=RESET_WINDOW_SECONDS)
        count = 1
    return count <= settings.CONCORD_RESET_EMAILS_PER_HOUR


class ResetForm(PasswordResetForm):
    """Django's form, but an account that never had a password gets the link too: an active one, or
    one waiting for its invitation (the link is then another way to accept it). An account an
    administrator deactivated gets nothing, and an address sent its hourly share gets nothing more
    (the page answers the same)."""

    def get_users(self, email: str) -> Iterator[Any]:
        if not reset_allowed(email):
            return iter(())
        invited = Q(is_active=False, last_login__isnull=True, provisioned__invitable=True)
        found = User._default_manager.filter(Q(is_active=True) | invited, email__iexact=email)
        return (user for user in found if user.email and user.email.lower() == email.lower())


class ResetSetPasswordForm(SetPasswordForm):
    """Django's form; for an invited account that has not signed in yet it also activates the account."""

    def save(self, commit: bool = True) -> Any:
        with transaction.atomic():
            account_reset_activates(user=self.user)
            return super().save(commit)


class ChangePasswordForm(PasswordChangeForm):
    """Django's form, refusing the current password as the new one: a temporary password someone else
    saw (the researcher who made the account) must not survive the change it forces."""

    def clean_new_password1(self) -> str:
        password = self.cleaned_data["new_password1"]
        if password and self.user.check_password(password):
            raise forms.ValidationError(SAME_PASSWORD, code="password_unchanged")
        return password

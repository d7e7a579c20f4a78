"""Password reset for every account with an e-mail that may sign in, invited accounts included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.forms import PasswordResetForm, SetPasswordForm
from django.db import transaction
from django.db.models import Q

from annotation.member_services import account_reset_activates

User = get_user_model()


class ResetForm(PasswordResetForm):
    """Django's form, but an account that never had a password gets the link too: an active one, or
    one waiting for its invitation (the link is then another way to accept it). An account an
    administrator deactivated gets nothing."""

    def get_users(self, email: str) -> Iterator[Any]:
        invited = Q(is_active=False, last_login__isnull=True, provisioned__invitable=True)
        found = User._default_manager.filter(Q(is_active=True) | invited, email__iexact=email)
        return (user for user in found if user.email and user.email.lower() == email.lower())


class ResetSetPasswordForm(SetPasswordForm):
    """Django's form; for an invited account that has not signed in yet it also activates the account."""

    def save(self, commit: bool = True) -> Any:
        with transaction.atomic():
            account_reset_activates(user=self.user)
            return super().save(commit)

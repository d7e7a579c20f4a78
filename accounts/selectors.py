"""Reads: a user's live API tokens."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import timezone
from knox.models import AuthToken

__all__ = ["api_tokens"]


def api_tokens(*, user: AbstractBaseUser) -> QuerySet[AuthToken]:
    """The user's tokens that still work, newest first (expired ones are left out)."""
    live = Q(expiry__isnull=True) | Q(expiry__gt=timezone.now())
    return AuthToken.objects.filter(live, user=user).order_by("-created", "-digest")

"""Writes: API tokens created and revoked. Tokens are django-rest-knox rows (digest, never the key)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from knox.models import AuthToken

from accounts.errors import TOKEN_NOT_FOUND, TokenNotFound

__all__ = ["api_token_create", "api_token_revoke", "api_tokens_revoke_all"]


@transaction.atomic
def api_token_create(*, user: AbstractBaseUser) -> tuple[AuthToken, str]:
    """A new token for the user: the row, and the key itself, which is shown once and never stored.

    Expired tokens of the user go first; beyond CONCORD_API_TOKENS_PER_USER live tokens the oldest go too.
    """
    AuthToken.objects.filter(user=user, expiry__lt=timezone.now()).delete()
    token, key = AuthToken.objects.create(user=user)
    surplus = list(
        AuthToken.objects.filter(user=user)
        .order_by("-created", "-digest")
        .values_list("digest", flat=True)[settings.CONCORD_API_TOKENS_PER_USER :]
    )
    if surplus:
        AuthToken.objects.filter(user=user, digest__in=surplus).delete()
    return token, key


@transaction.atomic
def api_token_revoke(*, user: AbstractBaseUser, digest: str) -> None:
    """Revoke one of the user's tokens; TokenNotFound when the digest names none of theirs."""
    deleted, _ = AuthToken.objects.filter(user=user, digest=digest).delete()
    if not deleted:
        raise TokenNotFound(TOKEN_NOT_FOUND)


@transaction.atomic
def api_tokens_revoke_all(*, user: AbstractBaseUser) -> int:
    """Revoke every token of the user; the number revoked."""
    deleted, _ = AuthToken.objects.filter(user=user).delete()
    return deleted

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def client_for(user=None) -> APIClient:
    """An API client authenticated with the user's token (anonymous without a user)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client

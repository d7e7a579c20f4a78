from rest_framework.test import APIClient

from accounts.services import api_token_create


def client_for(user=None) -> APIClient:
    """An API client authenticated with a new token of the user (anonymous without a user)."""
    client = APIClient()
    if user is not None:
        _, key = api_token_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client

"""Request types of the pages, for type hints only: what the middleware and the view decorators
guarantee about a request, which Django's ``HttpRequest`` does not declare."""

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (settings.MIDDLEWARE): it carries ``request.htmx``."""

    htmx: HtmxDetails


class SignedInRequest(HttpRequest):
    """A request that passed ``login_required``: its user is an account, never the anonymous user."""

    user: User

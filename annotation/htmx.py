"""The request type of the pages: django-htmx's middleware (settings.MIDDLEWARE) gives every request
``request.htmx``, which Django's ``HttpRequest`` does not declare."""

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    """A request that passed through ``django_htmx.middleware.HtmxMiddleware``; for type hints only."""

    htmx: HtmxDetails

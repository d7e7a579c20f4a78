"""The API's input limits: JSON bodies read safely and within a size, pages of a bounded size, and
each user's request rate counted cheaply.

Kept apart from config.api: DRF reads these classes from settings while its views module is being
imported, and config.api imports that module.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions, status, throttling
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser

from annotation import jsonsafe

PAGE_TOO_LARGE = "at most {limit} rows per page (CONCORD_API_MAX_PAGE_SIZE); page on with ?offset="
NOT_A_COUNT = "must be a whole number of at least {minimum}"
BODY_TOO_LARGE = "the request body is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES)"
BODY_NOT_JSON = "JSON parse error - {reason}"


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class SafeJSONParser(JSONParser):
    """JSON bodies read with annotation.jsonsafe: deep nesting, NaN/Infinity and unpaired surrogates
    are a 400 naming the field, and a body over CONCORD_IMPORT_MAX_BYTES is a 413, read no further."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.CONCORD_IMPORT_MAX_BYTES
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise RequestTooLarge(BODY_TOO_LARGE.format(limit=limit))
        try:
            return jsonsafe.loads(raw)
        except jsonsafe.UnsafeJSON as exc:
            raise exceptions.ParseError(BODY_NOT_JSON.format(reason=exc)) from None


class CappedLimitOffsetPagination(LimitOffsetPagination):
    """``?limit=`` above CONCORD_API_MAX_PAGE_SIZE is refused with a 400 rather than silently cut, and
    so is a ``limit`` or ``offset`` that is not a count (DRF would fall back to the default page)."""

    def get_limit(self, request):
        limit = self._count(request, self.limit_query_param, minimum=1)
        if limit is None:
            return self.default_limit
        cap = settings.CONCORD_API_MAX_PAGE_SIZE
        if limit > cap:
            raise exceptions.ValidationError({self.limit_query_param: [PAGE_TOO_LARGE.format(limit=cap)]})
        return limit

    def get_offset(self, request):
        return self._count(request, self.offset_query_param, minimum=0) or 0

    @staticmethod
    def _count(request, name: str, *, minimum: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None:
            return None
        if not (raw.isascii() and raw.isdigit()) or int(raw) < minimum or len(raw) > 18:
            raise exceptions.ValidationError({name: [NOT_A_COUNT.format(minimum=minimum)]})
        return int(raw)


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate (``user`` in DEFAULT_THROTTLE_RATES), counted in fixed windows of the
    rate's period: one small counter per user and window, incremented once a request.

    DRF's own class keeps the time of every request of the last period in one cache entry, read and
    written whole on each request: at the default 10,000 an hour that list is what an annotator's
    every submit unpickles and pickles again. A fixed window lets up to twice the rate through
    across the edge of two windows; the limit is against runaway scripts, which it still stops.
    """

    # Set by DRF's SimpleRateThrottle from the rate (its stubs do not declare them).
    duration: int
    num_requests: int

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        key = f"{self.key}:{window}"
        try:
            count = self.cache.incr(key)
        except ValueError:  # the window's first request; add() keeps a parallel first's count
            count = 1 if self.cache.add(key, 1, self.duration + 1) else self.cache.incr(key)
        return count <= self.num_requests

    def wait(self) -> float:
        return max(0.0, self.window_ends - self.now)

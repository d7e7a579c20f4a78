"""The API's input limits: JSON bodies read safely and within a size, pages of a bounded size, and
each user's request rate counted cheaply.

Kept apart from config.api: DRF reads these classes from settings while its views module is being
imported, and config.api imports that module.
"""

from __future__ import annotations

import threading
from typing import ClassVar

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


#: A process adds its users' requests to the shared count in batches of this share of the rate
#: (at least one request): at 10,000 an hour, one cache increment per 100 requests of a user.
BATCH_SHARE = 0.01


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate (``user`` in DEFAULT_THROTTLE_RATES), counted in fixed windows of the
    rate's period: one counter per user and window in the cache, which each process adds its
    requests to in batches of ``BATCH_SHARE`` of the rate.

    DRF's own class keeps the time of every request of the last period in one cache entry, read and
    written whole on each request: at the default 10,000 an hour that list is what an annotator's
    every submit unpickles and pickles again. A fixed window lets up to twice the rate through
    across the edge of two windows; a process's batch not yet added lets up to a batch less one
    more through per process, whatever its threads (a batch is added under the process's lock); a
    rate under 200 a period is counted request by request. The limit is against runaway scripts,
    which it still stops.
    """

    # Set by DRF's SimpleRateThrottle from the rate (its stubs do not declare them).
    duration: int
    num_requests: int

    #: This process's requests per cache key not yet added to the cache, and each key's count in
    #: the cache as last read; both cleared when a new window starts.
    _pending: ClassVar[dict[str, int]] = {}
    _counted: ClassVar[dict[str, int]] = {}
    _window: ClassVar[int] = -1
    _lock: ClassVar[threading.Lock] = threading.Lock()

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
        batch = max(1, int(self.num_requests * BATCH_SHARE))
        cls = type(self)
        # The batch is added under the lock: a thread deciding while another's batch was on its way to
        # the cache judged by a count without that batch, so each thread of a process could let a
        # batch past the rate, not each process (2,097 of a 2,000 rate passed on four processes).
        with cls._lock:
            if window != cls._window:  # the windows before this one are over: forget them
                cls._pending.clear()
                cls._counted.clear()
                cls._window = window
            pending = cls._pending.pop(key, 0) + 1
            if pending < batch:
                cls._pending[key] = pending
                return cls._counted.get(key, 0) + pending <= self.num_requests
            try:
                count = self.cache.incr(key, pending)
            except ValueError:  # the window's first batch; add() keeps a parallel first's count
                added = self.cache.add(key, pending, self.duration + 1)
                count = pending if added else self.cache.incr(key, pending)
            cls._counted[key] = count
        return count <= self.num_requests

    def wait(self) -> float:
        return max(0.0, self.window_ends - self.now)

"""The caches: Django's Redis cache keeping its redis-py clients, and its file cache culling less often.

Redis: Django builds a new ``redis.Redis`` for every cache call, and each one fills its table of response
callbacks (about 170 entries) again: a tenth of a millisecond on every session read and every
cached count, on every request. A client is safe to share (connections come from its pool), so
here each connection pool keeps one.

Files (the embedded default): Django's file cache lists its whole folder before every write, to see
whether it holds too many entries; every API request writes its throttle count. Here each cache
object (Django keeps one per thread) looks at most once a second, so the folder may hold a few
entries above its limit for that long.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.cache.backends import filebased
from django.core.cache.backends import redis as django_redis


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[Any, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # Django's, not in the stubs
        if pool not in self._clients:
            self._clients[pool] = self._client(connection_pool=pool)  # type: ignore[attr-defined]  # as above
        return self._clients[pool]


class RedisCache(django_redis.RedisCache):
    def __init__(self, server: Any, params: dict) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient


#: Seconds between two looks at the file cache's folder size, per cache object.
CULL_INTERVAL_S = 1.0


class FileBasedCache(filebased.FileBasedCache):
    def __init__(self, directory: str, params: dict) -> None:
        super().__init__(directory, params)
        self._culled_at = float("-inf")

    def _cull(self) -> None:
        now = time.monotonic()
        if now - self._culled_at < CULL_INTERVAL_S:
            return
        self._culled_at = now
        super()._cull()  # type: ignore[misc]  # Django's own private method, absent from the stubs

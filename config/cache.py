"""Django's Redis cache, keeping its redis-py clients.

Django builds a new ``redis.Redis`` for every cache call, and each one fills its table of response
callbacks (about 170 entries) again: a tenth of a millisecond on every session read and every
cached count, on every request. A client is safe to share (connections come from its pool), so
here each connection pool keeps one.
"""

from __future__ import annotations

from typing import Any

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

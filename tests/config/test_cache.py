"""The embedded default's file cache (config.cache.FileBasedCache): it still keeps to its size,
looking at its folder at most once a second per cache object rather than before every write."""

from __future__ import annotations

from config import cache as cache_module
from config.cache import CULL_INTERVAL_S, FileBasedCache


def entries(folder) -> int:
    return len(list(folder.glob("*.djcache")))


class FileBasedCacheTests:
    def test_a_full_cache_is_culled_once_the_interval_has_passed(self, tmp_path, monkeypatch):
        now = [1000.0]
        monkeypatch.setattr(cache_module.time, "monotonic", lambda: now[0])
        files = FileBasedCache(str(tmp_path), {"OPTIONS": {"MAX_ENTRIES": 4, "CULL_FREQUENCY": 2}})
        for number in range(6):  # the first write looked (nothing to cull); the others come within the second
            files.set(f"key-{number}", number)
        assert entries(tmp_path) == 6
        now[0] += CULL_INTERVAL_S
        files.set("one-more", 1)  # looks again: six entries over a limit of four, half of them go
        assert entries(tmp_path) == 4

    def test_values_read_back_as_written(self, tmp_path):
        files = FileBasedCache(str(tmp_path), {})
        files.set("count", 1)
        assert files.incr("count") == 2 and files.get("count") == 2

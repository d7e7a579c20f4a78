import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_counters():
    """Throttle counts live in the cache, which the tests of one process share: start each test at zero."""
    cache.clear()
    yield
    cache.clear()

"""Each user's API request rate (config.api_limits.UserRateThrottle): counted in fixed windows of the
rate's period, refused with 429 and Retry-After past the limit, per user."""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache

from config.api_limits import UserRateThrottle
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_a_minute(monkeypatch):
    monkeypatch.setitem(UserRateThrottle.THROTTLE_RATES, "user", "3/minute")


@pytest.fixture
def clock(monkeypatch):
    """The throttle's clock, set by the test: 10 s into a minute-long window."""
    now = [6000.0 + 10.0]
    monkeypatch.setattr(UserRateThrottle, "timer", lambda self: now[0])
    return now


class UserRateThrottleTests:
    def test_requests_past_the_rate_are_refused_with_the_time_to_wait(self, make_user, three_a_minute, clock):
        api = client_for(make_user("ann"))
        assert [api.get("/api/projects/").status_code for _ in range(3)] == [200, 200, 200]
        refused = api.get("/api/projects/")
        assert refused.status_code == 429
        assert int(refused["Retry-After"]) == 50  # the window ends 50 s from now

    def test_each_user_has_a_count_of_their_own(self, make_user, three_a_minute, clock):
        first, second = client_for(make_user("ann")), client_for(make_user("bob"))
        for _ in range(3):
            first.get("/api/projects/")
        assert first.get("/api/projects/").status_code == 429
        assert second.get("/api/projects/").status_code == 200

    def test_the_next_window_starts_from_zero(self, make_user, three_a_minute, clock):
        api = client_for(make_user("ann"))
        for _ in range(4):
            api.get("/api/projects/")
        clock[0] += 50.0
        assert api.get("/api/projects/").status_code == 200


@pytest.fixture
def two_hundred_a_minute(monkeypatch):
    """A rate counted in batches of two (config.api_limits.BATCH_SHARE), this process's batches empty."""
    monkeypatch.setitem(UserRateThrottle.THROTTLE_RATES, "user", "200/minute")
    monkeypatch.setattr(UserRateThrottle, "_window", -1)


class BatchedCountTests:
    def test_a_process_adds_its_requests_in_batches_and_still_stops_at_the_rate(
        self, make_user, two_hundred_a_minute, clock
    ):
        user = make_user("ann")
        api = client_for(user)
        key = f"throttle_user_{user.pk}:{int(clock[0] // 60)}"
        assert [api.get("/api/projects/").status_code for _ in range(3)] == [200, 200, 200]
        assert cache.get(key) == 2  # the third request waits in this process for its batch
        statuses = [api.get("/api/projects/").status_code for _ in range(198)]
        assert statuses == [200] * 197 + [429]
        assert cache.get(key) == 200

    def test_requests_other_processes_added_count_at_the_next_batch(self, make_user, two_hundred_a_minute, clock):
        user = make_user("ann")
        api = client_for(user)
        assert [api.get("/api/projects/").status_code for _ in range(2)] == [200, 200]
        cache.incr(f"throttle_user_{user.pk}:{int(clock[0] // 60)}", 197)  # as other processes would
        assert [api.get("/api/projects/").status_code for _ in range(3)] == [200, 429, 429]


class SlowCache:
    """The cache, with the first batch added held on its way until ``release`` is set: the moment
    another thread of the process decides meanwhile."""

    def __init__(self, cache_, arrived: threading.Event, release: threading.Event) -> None:
        self.cache, self.arrived, self.release, self.held = cache_, arrived, release, False

    def incr(self, key, delta=1):
        if not self.held:
            self.held = True
            self.arrived.set()
            self.release.wait(5)
        return self.cache.incr(key, delta)

    def __getattr__(self, name):
        return getattr(self.cache, name)


class ThreadsOfOneProcessTests:
    def test_threads_of_a_process_let_at_most_a_batch_less_one_past_the_rate(self, make_user, monkeypatch, clock, rf):
        """Rate 1,000 a minute (batches of 10); other processes already counted 995. One thread's batch is
        on its way to the cache while another thread decides: that one must wait for the batch's count,
        not judge by the count before it (which let each thread, not each process, a batch past)."""
        monkeypatch.setitem(UserRateThrottle.THROTTLE_RATES, "user", "1000/minute")
        monkeypatch.setattr(UserRateThrottle, "_window", -1)
        arrived, release = threading.Event(), threading.Event()
        monkeypatch.setattr(UserRateThrottle, "cache", SlowCache(cache, arrived, release))
        user = make_user("ann")
        cache.set(f"throttle_user_{user.pk}:{int(clock[0] // 60)}", 995, 120)
        request = rf.get("/api/projects/")
        request.user = user

        def allowed(n: int) -> int:
            return sum(UserRateThrottle().allow_request(request, None) for _ in range(n))

        first: list[int] = []
        flusher = threading.Thread(target=lambda: first.append(allowed(10)))  # the 10th adds the batch
        flusher.start()
        assert arrived.wait(5)
        second: list[int] = []
        other = threading.Thread(target=lambda: second.append(allowed(9)))
        other.start()
        other.join(0.5)  # on its own it would be done by now
        release.set()
        flusher.join(5)
        other.join(5)
        passed = 995 + first[0] + second[0]
        assert first == [9] and passed <= 1000 + 10 - 1, passed

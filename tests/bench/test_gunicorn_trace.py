"""The benches' gunicorn settings: production's layout, plus trace hooks production does not carry."""

from __future__ import annotations

import runpy
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class GunicornTraceTests:
    def test_the_bench_server_keeps_the_production_layout_and_production_has_no_trace_hooks(self, monkeypatch):
        monkeypatch.setenv("WEB_CONCURRENCY", "5")
        production = runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))
        bench = runpy.run_path(str(ROOT / "bench" / "gunicorn_trace.py"))
        assert [bench[k] for k in ("worker_class", "workers", "threads")] == [
            production[k] for k in ("worker_class", "workers", "threads")
        ]
        assert bench["workers"] == 5
        assert "pre_request" not in production and "post_request" not in production

    def test_the_request_trace_splits_each_request_into_cpu_core_wait_and_the_rest(self, tmp_path):
        config = runpy.run_path(str(ROOT / "bench" / "gunicorn_trace.py"))
        config["_open_request_trace"](str(tmp_path / "requests"))
        try:
            for pause in (0.0, 0.05):
                config["pre_request"](None, None)
                sum(range(300_000))  # some CPU
                time.sleep(pause)  # and time off the CPU
                config["post_request"](None, None, {}, None)
        finally:
            config["_request_trace"]["sink"].close()
        (trace,) = tmp_path.glob("requests.*")
        rows = [list(map(float, line.split())) for line in trace.read_text().splitlines()]
        assert len(rows) == 2
        for finished, wall, cpu, waited in rows:
            assert abs(finished - time.time()) < 60 and cpu > 0 and waited >= 0
            assert wall + 1 >= cpu  # the thread's CPU time fits in the wall time (1 ms of rounding)
        assert rows[1][1] >= 50 > rows[1][2]  # the sleep is in the wall time, not the CPU time

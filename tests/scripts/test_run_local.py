"""scripts/run-local.sh (`make run`): a worker that dies is started again while the web server keeps
serving, and Ctrl-C stops both. Run with stand-ins for celery and gunicorn that record what happens."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run-local.sh"

#: A worker that dies twice, as the embedded worker did on a half-written broker file, then keeps running.
FAKE_CELERY = """#!/usr/bin/env bash
echo "$$" >> "{log}/worker-starts"
if [ "$(wc -l < "{log}/worker-starts")" -le 2 ]; then exit 3; fi
trap 'echo "$$" >> "{log}/worker-stopped"; exit 0' TERM
while true; do sleep 0.05; done
"""
FAKE_GUNICORN = """#!/usr/bin/env bash
echo "$$" >> "{log}/web-starts"
trap 'echo "$$" >> "{log}/web-stopped"; exit 0' TERM
while true; do sleep 0.05; done
"""


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def until(condition, timeout: float = 30.0) -> None:
    """Waits for ``condition`` (polled), failing after ``timeout`` seconds: no fixed sleeps."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def stand_ins(tmp_path):
    """A BIN folder whose celery and gunicorn are the stand-ins above, and the folder they log to."""
    bin_dir, log = tmp_path / "bin", tmp_path / "log"
    bin_dir.mkdir()
    log.mkdir()
    for name, text in (("celery", FAKE_CELERY), ("gunicorn", FAKE_GUNICORN)):
        path = bin_dir / name
        path.write_text(text.format(log=log))
        path.chmod(0o755)
    return bin_dir, log


class RunLocalTests:
    def test_a_dead_worker_is_started_again_and_the_web_server_stays_up(self, stand_ins):
        bin_dir, log = stand_ins
        env = {**os.environ, "BIN": str(bin_dir), "WORKER_RESTART_SECONDS": "0.1"}
        script = subprocess.Popen(
            ["bash", str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            until(lambda: len(lines(log / "worker-starts")) == 3)
            (web,) = lines(log / "web-starts")
            running_worker = lines(log / "worker-starts")[-1]
            until(lambda: alive(running_worker))
            assert alive(web) and script.poll() is None
            script.send_signal(signal.SIGINT)  # Ctrl-C
            assert script.wait(timeout=30) == 130
        finally:
            if script.poll() is None:
                script.kill()
        output = script.stdout.read()
        assert output.count("The Celery worker stopped (exit status 3); starting it again") == 2
        assert "Stopping Concord..." in output and "The web server stopped" not in output
        # Ctrl-C stopped both the web server and the worker that was running; nothing is left behind.
        assert lines(log / "web-starts") == [web] == lines(log / "web-stopped")
        assert lines(log / "worker-stopped") == [running_worker]
        until(lambda: not alive(web) and not alive(running_worker))

    def test_the_script_ends_when_the_web_server_does_and_stops_the_worker(self, stand_ins):
        bin_dir, log = stand_ins
        (log / "worker-starts").write_text("0\n0\n")  # the worker stand-in runs from its first start
        env = {**os.environ, "BIN": str(bin_dir)}
        script = subprocess.Popen(["bash", str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            until(lambda: len(lines(log / "web-starts")) == 1 and len(lines(log / "worker-starts")) == 3)
            (web,) = lines(log / "web-starts")
            os.kill(int(web), signal.SIGTERM)
            assert script.wait(timeout=30) == 0
        finally:
            if script.poll() is None:
                script.kill()
        assert b"The web server stopped (exit status 0)." in script.stdout.read()
        assert lines(log / "worker-stopped") == lines(log / "worker-starts")[-1:]

    def test_the_address_and_the_logins_come_last_below_the_worker_banner(self, tmp_path):
        """What a person needs (where to go, how to sign in) is the last thing on the screen, not buried
        above the worker's banner: the script waits for the worker to take tasks and the server to listen."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        ready_file, port = tmp_path / "worker.ready", _free_port()
        stand_ins = {
            # The banner first, then (a moment later, as a real worker) ready for tasks.
            "celery": f"echo 'celery worker banner'\nsleep 0.5\ntouch '{ready_file}'\nwhile true; do sleep 0.05; done",
            "gunicorn": f"sleep 0.5\nexec '{sys.executable}' -c '{LISTEN.format(port=port)}'",
        }
        for name, body in stand_ins.items():
            (bin_dir / name).write_text("#!/usr/bin/env bash\n" + body + "\n")
            (bin_dir / name).chmod(0o755)
        (bin_dir / "python").symlink_to(sys.executable)
        logins = tmp_path / "logins.txt"
        logins.write_text("project  kind\n-------  ----\ndemo     copa\n\n" + "\n".join(LOGINS) + "\n")
        env = {
            **os.environ,
            "BIN": str(bin_dir),
            "PORT": str(port),
            "LOGINS": str(logins),
            "CONCORD_WORKER_READY_FILE": str(ready_file),
        }
        script = subprocess.Popen(
            ["bash", str(SCRIPT)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            until(ready_file.exists)
            time.sleep(1.5)  # time for anything the script prints once both are up
            script.send_signal(signal.SIGINT)
            script.wait(timeout=30)
        finally:
            if script.poll() is None:
                script.kill()
        output = script.stdout.read().splitlines()
        shown = [line for line in output[: output.index("Stopping Concord...")] if line.strip()]
        assert shown.index("celery worker banner") < shown.index("Demo logins:")
        assert shown[shown.index("Demo logins:") + 1 : -1] == LOGINS
        assert shown[-1].startswith(f"Concord is running at http://127.0.0.1:{port}/")


#: The demo command's table of logins, as `make run` keeps it for the script.
LOGINS = ["username    password", "----------  ------------", "researcher  concord-demo"]
#: A stand-in web server: it listens on the port, as gunicorn does once started.
LISTEN = 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", {port})); s.listen(); time.sleep(600)'


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]

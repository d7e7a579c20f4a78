"""What the benches share: Django set-up from a script, and honest peak-memory readings."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Measure what production runs: no debug cursor, cached template loader.
    os.environ["DEBUG"] = "false"
    # Benches run on loopback with throwaway data: the built-in development key is fine here.
    os.environ.setdefault("CONCORD_EMBEDDED", "true")
    import django

    django.setup()


def child_json(script: str, *argv: str) -> dict:
    """Run ``script --child ARGV...`` in a fresh Python process (its peak RSS its own) and read the JSON
    object it prints last."""
    command = [sys.executable, script, "--child", *argv]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB.

    Linux carries ru_maxrss across fork and exec, so a child started by subprocess or
    multiprocessing reports at least its parent's peak; VmHWM belongs to the current address
    space alone. ru_maxrss (KiB on Linux) is the fallback where /proc is missing.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def database_backend_cpu_s() -> float | None:
    """CPU seconds the database server process of this connection has used, where it runs on this
    host and shows in /proc (PostgreSQL on loopback); None elsewhere. With this process's own CPU
    time it says what a piece of work costs however loaded the host is."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def copied_back_seconds(table: str, columns: list[str], select: str, where: str, params: list) -> float:
    """Seconds to COPY the rows of ``SELECT <select> FROM <table> WHERE <where>`` (read first, in id
    order) back into ``table``'s ``columns`` from memory, foreign keys checked as the COPY ends (as
    the imports check them). The floor of an import of those rows: PostgreSQL only, inside the
    caller's transaction, which rolls back."""
    from django.db import connection

    with connection.cursor() as cursor:
        raw = cursor.cursor
        with raw.copy(f"COPY (SELECT {select} FROM {table} WHERE {where} ORDER BY id) TO STDOUT", params) as out:
            text = b"".join(bytes(block) for block in out)
        raw.execute("SET CONSTRAINTS ALL IMMEDIATE")
        started = time.perf_counter()
        with raw.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            copy.write(text)
        return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_processes(processes: list) -> None:
    """Ask every process to stop, then wait for each; one that does not stop in 20 s is killed."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()

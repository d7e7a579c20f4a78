"""Running one piece of work in several threads released at the same moment, each with its own
database connection, as parallel requests would be."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection


def run_at_once(work: Callable[[Any], Any], arguments: list[Any]) -> tuple[list[Any], list[Exception]]:
    """``work(argument)`` in one thread per argument, all started together: (results, exceptions)."""
    barrier = threading.Barrier(len(arguments))
    results: list[Any] = []
    failures: list[Exception] = []

    def run(argument: Any) -> None:
        try:
            barrier.wait()
            results.append(work(argument))
        except Exception as exc:  # noqa: BLE001 - handed to the test
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(argument,)) for argument in arguments]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, failures

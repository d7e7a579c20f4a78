"""Logging filters (settings.LOGGING)."""

from __future__ import annotations

import logging


class ClientErrorWithoutTraceback(logging.Filter):
    """A refused request (status below 500: 403, 404, ...) is logged as one line, without the traceback
    of the exception that refused it: it is the client's error, not the server's."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True

"""Receiving uploaded files: on disk at once, and never more than CONCORD_IMPORT_MAX_BYTES of them."""

from __future__ import annotations

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler


class CappedTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler that stops writing once a file passes CONCORD_IMPORT_MAX_BYTES.

    The rest of the upload is read and dropped; the file still reports its full size, so the
    service refuses it with a clear message (annotation.services.import_job_create) and the
    temporary file, never larger than the cap, is deleted with the request.
    """

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if start + len(raw_data) > settings.CONCORD_IMPORT_MAX_BYTES:
            return None  # past the cap: nothing more goes to disk
        return super().receive_data_chunk(raw_data, start)

"""Receiving uploaded files and JSON Lines bodies: on disk at once, a block at a time, and never more
than CONCORD_IMPORT_MAX_BYTES of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from rest_framework import exceptions
from rest_framework.parsers import BaseParser


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


BODY_TOO_LARGE = "the {what} is larger than {limit:,} bytes (CONCORD_IMPORT_MAX_BYTES)"
NO_FILE = "send the file as the multipart field {field!r}, or as a JSON Lines body (application/x-ndjson)"
#: How much of a JSON Lines body is copied to disk at a time.
BODY_BLOCK = 1 << 20


class JsonLinesParser(BaseParser):
    """A JSON Lines body, left unread: the view streams it to a file for the run importer."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        return stream


class JsonlParser(JsonLinesParser):
    media_type = "application/jsonl"


def _body_to_file(stream: Any, path: Path, *, field: str) -> None:
    """Copy a request body to ``path`` a block at a time, refusing one past CONCORD_IMPORT_MAX_BYTES."""
    limit, written = settings.CONCORD_IMPORT_MAX_BYTES, 0
    with path.open("wb") as out:
        while block := stream.read(BODY_BLOCK):
            written += len(block)
            if written > limit:
                raise exceptions.ValidationError({field: [BODY_TOO_LARGE.format(what=field, limit=limit)]})
            out.write(block)


def request_file(request: Any, folder: Path, *, field: str) -> tuple[Path, str]:
    """The file a request carries, copied into ``folder``: the multipart field ``field``, or the whole
    JSON Lines body. Returns the copy's path and the name the file came under; a ValidationError on
    ``field`` when there is none or it is larger than CONCORD_IMPORT_MAX_BYTES. The copy is named by
    Concord (only the suffix comes from the upload)."""
    limit = settings.CONCORD_IMPORT_MAX_BYTES
    if request.content_type.startswith("multipart/"):
        upload = request.FILES.get(field)
        if upload is None:
            raise exceptions.ValidationError({field: [NO_FILE.format(field=field)]})
        if upload.size > limit:
            raise exceptions.ValidationError({field: [BODY_TOO_LARGE.format(what=field, limit=limit)]})
        path = folder / f"{field}{Path(upload.name).suffix.lower()[:10]}"
        with path.open("wb") as out:
            for block in upload.chunks():
                out.write(block)
        return path, upload.name
    if not hasattr(request.data, "read"):  # no body, or one of another type
        raise exceptions.ValidationError({field: [NO_FILE.format(field=field)]})
    path = folder / f"{field}.jsonl"
    _body_to_file(request.data, path, field=field)
    return path, "request body"

"""Pages stay current after background work (imports, judge runs, generation runs).

A job's progress is polled by htmx. The poll that finds the job ended answers with an ``HX-Trigger:
job-ended`` header; every part of the page that depends on the job carries
``{% refreshed_on_job_end "id" %}`` (annotation/templatetags/concord.py) and fetches itself again from
the page's own address, so counts, the checklist and result tables are current without a reload.
"""

from __future__ import annotations

from django.http import HttpResponse
from django_htmx.http import trigger_client_event

from annotation.request_types import HtmxHttpRequest

#: The event a page's dependent parts listen for (on the body, where it bubbles).
JOB_ENDED = "job-ended"


def job_end_announced(request: HtmxHttpRequest, response: HttpResponse, *, ended: bool) -> HttpResponse:
    """Tell the page that its job has ended, when an htmx request (a poll, an upload) finds it so."""
    if ended and request.htmx:
        trigger_client_event(response, JOB_ENDED)
    return response

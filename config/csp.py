"""django-csp's Content-Security-Policy header, built once instead of on every response.

django-csp builds the policy string from the settings on each response (a dataclass walk, a deep
copy of the configuration, the string itself): about a millisecond of CPU, on every page and every
htmx partial of the annotator's workspace. Concord's policy is the same for every response — no view
sets its own parts and no template asks for a nonce — so it is built once here, and built again only
when the settings change (the tests override them). A response or request that does carry its own
parts (``csp.decorators``, ``request.csp_nonce``) gets django-csp's own handling, unchanged.
"""

from __future__ import annotations

import functools
import http.client

from csp import middleware as csp_middleware
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase

#: What a view's csp decorators leave on a response.
PER_RESPONSE_PARTS = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)


@functools.cache
def settings_policies() -> tuple[str, str]:
    """(policy, report-only policy) as django-csp builds them from the settings alone."""
    return build_policy(), build_policy(report_only=True)


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        settings_policies.cache_clear()


class CSPMiddleware(csp_middleware.CSPMiddleware):
    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        own_parts = getattr(request, "_csp_nonce", None) is not None or any(
            hasattr(response, name) for name in PER_RESPONSE_PARTS
        )
        if own_parts:
            return super().process_response(request, response)
        # What django-csp's process_response does, with the policies built once.
        if settings.DEBUG and response.status_code in (http.client.INTERNAL_SERVER_ERROR, http.client.NOT_FOUND):
            return response
        policy, report_only = settings_policies()
        for header, value, exempt, setting in (
            (HEADER, policy, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
            (HEADER_REPORT_ONLY, report_only, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY"),
        ):
            prefixes = tuple((getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES", None) or ())
            own = header in response or getattr(response, exempt, False) or request.path_info.startswith(prefixes)
            if value and not own:
                response[header] = value
        # As django-csp does: a nonce asked for after the header was written is an error, not a silent gap.
        request.csp_nonce = csp_middleware.CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]  # django-csp's
        return response

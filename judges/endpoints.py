"""LLM endpoints and in-process models: the operator's configuration, chosen by name.

A judge names an endpoint; it never carries a URL or the name of an environment variable, so
nothing a user types decides where a worker sends requests or which secret goes with them.
``default`` is ``OPENAI_BASE_URL`` with ``OPENAI_API_KEY``; further endpoints come from
``settings.LLM_ENDPOINTS`` (the ``CONCORD_LLM_ENDPOINTS`` environment variable, a JSON object
``{"name": {"base_url": "http://gpu-1:8000/v1", "api_key_env": "GPU1_API_KEY"}}``).

Backends that load weights themselves (``vllm``) name a model the same way: ``settings.VLLM_MODELS``
(``CONCORD_VLLM_MODELS``, ``{"qwen3-32b": "/models/Qwen3-32B"}``) maps each name to the path or hub
repository the worker loads, so nothing a user types picks a file on the server or a repository.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, register

DEFAULT_ENDPOINT = "default"
#: A `vllm serve` started without --api-key accepts any key, but the client insists on one.
NO_KEY = "EMPTY"
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,49}$")
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

UNKNOWN_ENDPOINT = "unknown endpoint {name!r}; the operator has configured: {known}"
BAD_ENDPOINT_NAME = "endpoint name {name!r} must be 1-50 lowercase letters, digits, '-' or '_'"
BAD_ENDPOINT_URL = "endpoint {name!r}: base_url must be an http(s) URL, got {url!r}"
BAD_ENDPOINT_KEY = "endpoint {name!r}: api_key_env must name an environment variable, got {env!r}"
BAD_ENDPOINT_ENTRY = "endpoint {name!r}: expected an object with base_url and optionally api_key_env"

MODEL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
UNKNOWN_MODEL = "unknown model {name!r} for {backend!r}; the operator has configured: {known}"
BAD_MODEL_NAME = "model name {name!r} must be 1-200 letters, digits, '.', '_', '-' or '/'"
BAD_MODEL_SOURCE = "model {name!r}: expected the path or repository to load, as a non-empty string"


class UnknownEndpoint(LookupError):
    pass


class UnknownModel(LookupError):
    pass


@dataclass(frozen=True)
class Endpoint:
    name: str
    #: Empty for ``default`` without OPENAI_BASE_URL: the client's own default (api.openai.com).
    base_url: str
    #: The variable holding the key; empty: OPENAI_API_KEY from the settings.
    api_key_env: str = ""

    def api_key(self) -> str:
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else settings.OPENAI_API_KEY
        return key or NO_KEY


def configured_endpoints() -> dict[str, Endpoint]:
    """Every endpoint the operator configured, ``default`` first. Read at call time, so a worker
    always uses the configuration it was started with."""
    endpoints = {DEFAULT_ENDPOINT: Endpoint(DEFAULT_ENDPOINT, settings.OPENAI_BASE_URL)}
    for name, entry in settings.LLM_ENDPOINTS.items():
        if isinstance(entry, dict):
            endpoints[name] = Endpoint(name, str(entry.get("base_url", "")), str(entry.get("api_key_env", "")))
    return endpoints


def endpoint_names() -> list[str]:
    return list(configured_endpoints())


def get_endpoint(name: str) -> Endpoint:
    """The configured endpoint called ``name``; UnknownEndpoint otherwise (never a URL given by a user)."""
    endpoints = configured_endpoints()
    try:
        return endpoints[name]
    except KeyError:
        raise UnknownEndpoint(UNKNOWN_ENDPOINT.format(name=name, known=", ".join(endpoints))) from None


def endpoint_problems(endpoints: dict) -> list[str]:
    """What is wrong with an ``LLM_ENDPOINTS`` mapping, in words an operator can act on."""
    problems = []
    for name, entry in endpoints.items():
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            problems.append(BAD_ENDPOINT_NAME.format(name=name))
        if not isinstance(entry, dict):
            problems.append(BAD_ENDPOINT_ENTRY.format(name=name))
            continue
        url = entry.get("base_url", "")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(BAD_ENDPOINT_URL.format(name=name, url=url))
        env = entry.get("api_key_env", "")
        if env and (not isinstance(env, str) or not ENV_NAME_PATTERN.match(env)):
            problems.append(BAD_ENDPOINT_KEY.format(name=name, env=env))
    return problems


def local_model_names() -> list[str]:
    return list(settings.VLLM_MODELS)


def local_model_source(name: str, *, backend: str = "vllm") -> str:
    """The path or repository the operator configured under ``name``; UnknownModel otherwise (never a
    path or repository typed by a user)."""
    source = settings.VLLM_MODELS.get(name) if isinstance(name, str) else None
    if not isinstance(source, str) or not source:
        known = ", ".join(local_model_names()) or "none (set CONCORD_VLLM_MODELS)"
        raise UnknownModel(UNKNOWN_MODEL.format(name=name, backend=backend, known=known))
    return source


def local_model_problems(models: dict) -> list[str]:
    """What is wrong with a ``VLLM_MODELS`` mapping, in words an operator can act on."""
    problems = []
    for name, source in models.items():
        if not isinstance(name, str) or not MODEL_NAME_PATTERN.match(name):
            problems.append(BAD_MODEL_NAME.format(name=name))
        if not isinstance(source, str) or not source.strip():
            problems.append(BAD_MODEL_SOURCE.format(name=name))
    return problems


@register("judges")
def check_endpoints(app_configs, **kwargs) -> list[Error]:
    """Refuse to start on a malformed CONCORD_LLM_ENDPOINTS instead of failing later on a worker."""
    return [Error(problem, id="judges.E001") for problem in endpoint_problems(settings.LLM_ENDPOINTS)]


@register("judges")
def check_local_models(app_configs, **kwargs) -> list[Error]:
    """Refuse to start on a malformed CONCORD_VLLM_MODELS."""
    return [Error(problem, id="judges.E002") for problem in local_model_problems(settings.VLLM_MODELS)]

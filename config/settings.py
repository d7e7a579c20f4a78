"""Concord settings. Everything that differs between machines comes from the environment.

Unset variables give the embedded default: SQLite under ``var/``, a Celery broker on the
filesystem (no server), a file cache. Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL
(Redis), CACHE_URL and SECRET_KEY; see docs/deployment.md.
"""

import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONCORD_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("CONCORD_REQUIRE_SECRET_KEY", False):
        raise RuntimeError("SECRET_KEY must be set in production.")
    # The embedded default only: a fixed key is harmless for a local demo database.
    SECRET_KEY = "concord-local-development-key-not-for-production"
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "judges",
    "validation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'concord.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while the worker writes; the timeout rides out short locks.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
    }
    # A file, not memory: integration tests start a Celery worker process that must see the test data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-concord-{os.getpid()}.sqlite3")}
else:
    if env_bool("DATABASE_PREPARED_STATEMENTS", True):
        # Parameters bound by the server, and each statement prepared from its second use on: the
        # workspace sends the same few statements on every request, and PostgreSQL then skips parsing
        # and planning them (half its CPU per request in bench/annotate_load.py; a threshold of 5
        # saved much less there). Turn off behind a pooler that cannot keep prepared statements
        # (PgBouncer in transaction mode before 1.21).
        DATABASES["default"]["OPTIONS"] = {"server_side_binding": True, "prepare_threshold": 2}
        # The same backend, batching bulk writes and deletes within the 65,535 parameters a statement
        # bound by the server can carry.
        DATABASES["default"]["ENGINE"] = "config.postgresql"
    # One test database per test run, so two runs on one machine never drop each other's.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Sessions are read from the cache and written through to the database: one query less per request.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
CACHE_URL = os.environ.get("CACHE_URL", "")
if CACHE_URL.startswith("redis://"):
    CACHES = {"default": {"BACKEND": "config.cache.RedisCache", "LOCATION": CACHE_URL}}
else:
    # Shared between the web process and the worker, so progress written by one is read by the other.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Django's ModelBackend with the per-request user read written out (config/auth.py).
AUTHENTICATION_BACKENDS = ["config.auth.SessionUserBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
# Uploaded import files go to disk at once so that a large file never sits in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 0
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # `?format=` names an export's file format (gold downloads), not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Concord API",
    "DESCRIPTION": "Human validation of LLM annotations: projects, items, assignments, annotations.",
    "VERSION": "0.1.0",
    # The docs page's assets come from the installed sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: the embedded default needs no broker server (kombu's filesystem transport).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL == "filesystem://":
    _queue_dir = VAR_DIR / "celery" / "queue"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(VAR_DIR / "celery" / "processed"),
        "control_folder": str(VAR_DIR / "celery" / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
    # kombu expects the folders to exist; creating them here serves the web process and the worker alike.
    for _folder in ("queue", "processed", "control"):
        (VAR_DIR / "celery" / _folder).mkdir(parents=True, exist_ok=True)
# Task state lives in our own tables (ImportJob, JudgeRun): no result backend to poll.
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# The task-kind registry: adding a kind is one module and one line here.
CONCORD_TASK_KINDS = [
    "annotation.kinds.ipqa_core_intent.IpqaCoreIntent",
    "annotation.kinds.copa_likert.CopaLikert",
    "annotation.kinds.rationale_inspection.RationaleInspection",
    "annotation.kinds.label_contextualization.LabelContextualization",
    "annotation.kinds.intent_mcq.IntentMcq",
]
# Import errors listed before the rest are only counted.
CONCORD_IMPORT_ERROR_CAP = int(os.environ.get("CONCORD_IMPORT_ERROR_CAP", "50"))

# --- LLM judges (judges/) ---------------------------------------------------------------------------
# Pre-annotation by an OpenAI-compatible server (a `vllm serve` GPU host, or OpenAI), in-process
# vLLM on GPU workers, or a baseline. See docs/gpu-workers.md.
# Where the `openai` backend sends requests, e.g. http://gpu-1:8000/v1; empty means api.openai.com.
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
# The model run_judge uses when --model is not given.
JUDGE_MODEL = os.environ.get("JUDGE_MODEL", "")
# Requests in flight per worker process (run_judge --concurrency overrides it per run).
JUDGE_CONCURRENCY = int(os.environ.get("JUDGE_CONCURRENCY", "16"))
JUDGE_REQUEST_TIMEOUT = float(os.environ.get("JUDGE_REQUEST_TIMEOUT", "120"))
# Tries per request on 429, 5xx, timeouts and dropped connections (exponential backoff with jitter,
# from JUDGE_RETRY_BASE_SECONDS up to JUDGE_RETRY_MAX_SECONDS), then the chunk is retried later by
# Celery up to JUDGE_CHUNK_RETRIES times before those items are recorded as failed.
JUDGE_TRANSPORT_ATTEMPTS = int(os.environ.get("JUDGE_TRANSPORT_ATTEMPTS", "5"))
JUDGE_RETRY_BASE_SECONDS = float(os.environ.get("JUDGE_RETRY_BASE_SECONDS", "0.5"))
JUDGE_RETRY_MAX_SECONDS = float(os.environ.get("JUDGE_RETRY_MAX_SECONDS", "30"))
JUDGE_CHUNK_RETRIES = int(os.environ.get("JUDGE_CHUNK_RETRIES", "5"))
# Answers per request when the answer is invalid (bad JSON, out of range) before the item is failed.
JUDGE_PARSE_ATTEMPTS = int(os.environ.get("JUDGE_PARSE_ATTEMPTS", "3"))
# Items per chunk (one Celery task); 0 means the backend's default (openai 100, vllm 512, baseline 500).
JUDGE_CHUNK_SIZE = int(os.environ.get("JUDGE_CHUNK_SIZE", "0"))
# A worker renews its claim on a chunk every 2 s; a claim not renewed for this long is handed out again.
JUDGE_LEASE_SECONDS = float(os.environ.get("JUDGE_LEASE_SECONDS", "60"))
# How often a running run is checked for chunks whose worker vanished.
JUDGE_WATCH_SECONDS = float(os.environ.get("JUDGE_WATCH_SECONDS", "5"))
# A chunk claimed this many times without finishing stops its run with the last error.
JUDGE_CHUNK_MAX_CLAIMS = int(os.environ.get("JUDGE_CHUNK_MAX_CLAIMS", "5"))
# Extra vllm.LLM arguments on GPU workers, as JSON: {"tensor_parallel_size": 2, "max_model_len": 8192}.
VLLM_ENGINE_OPTIONS = os.environ.get("VLLM_ENGINE_OPTIONS", "{}")
# The judge-backend registry (Django's backend pattern, like CONCORD_TASK_KINDS).
CONCORD_JUDGE_BACKENDS = {
    "openai": "judges.backends.openai_compat.OpenAIBackend",
    "vllm": "judges.backends.vllm_local.VllmBackend",
    "baseline": "judges.backends.baseline.BaselineBackend",
}
# In-process vLLM chunks go to GPU workers only: `celery -A config worker -Q gpu` on GPU hosts.
CELERY_TASK_ROUTES = {"judges.tasks.judge_chunk_gpu_task": {"queue": "gpu"}}

"""Concord settings. Everything that differs between machines comes from the environment.

Unset variables give the embedded default: SQLite under ``var/``, a Celery broker on the
filesystem (no server), a file cache. Production sets DATABASE_URL (PostgreSQL), CELERY_BROKER_URL
(Redis), CACHE_URL and SECRET_KEY; see docs/deployment.md.
"""

import json
import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CONCORD_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", False)
#: Set by every deployment (docs/deployment.md): with none of them, this is the embedded default.
DEPLOYMENT_VARIABLES = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS")
# The embedded default (a checkout with nothing configured, or CONCORD_EMBEDDED=true as `make run`,
# `make test`, the benches and pytest set it) keeps a random key of its own under var/, made on first
# use, so a command run by hand in a fresh checkout works. Anything else with DEBUG off refuses to
# start without its own SECRET_KEY.
EMBEDDED = env_bool("CONCORD_EMBEDDED", not any(os.environ.get(name) for name in DEPLOYMENT_VARIABLES))
EMBEDDED_SECRET_KEY_FILE = VAR_DIR / "secret_key"


def embedded_secret_key(path: Path) -> str:
    """The key kept in ``path`` (readable by its owner only), made at random by whichever process is first."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under a name of its own, then linked into place: nobody reads a half-written key.
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(secrets.token_urlsafe(50) + "\n")
    try:
        os.link(draft, path)
    except FileExistsError:  # another process was first: use theirs
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()


SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY and (EMBEDDED or DEBUG):
    SECRET_KEY = embedded_secret_key(EMBEDDED_SECRET_KEY_FILE)
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: with DEBUG off Concord will not start without a key of its own. "
        "Set SECRET_KEY (long and random, the same on every host), or CONCORD_EMBEDDED=true for a local demo."
    )
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
    "knox",
    "axes",
    "csp",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "judges",
    "validation",
    "accounts",
]

MIDDLEWARE = [
    # First: a body over its route's cap (config/request_limits.py) is refused before anything reads it.
    "config.request_limits.RequestBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A temporary password is changed before anything else (accounts/middleware.py).
    "accounts.middleware.PasswordChangeRequiredMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's header, built once (config/csp.py).
    "config.csp.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A domain error a page let through answers the 4xx it declares (config/error_views.py).
    "config.error_views.DomainErrorMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into its 429 answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Each task kind's folder holds its form partial: "<kind>/form.html" (annotation.kinds.base.TaskKind).
        "DIRS": [BASE_DIR / "templates", BASE_DIR / "annotation" / "kinds"],
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
# Retry-After of the 503 answering a request that waited past the database's lock timeout (SQLite,
# while another request's long import holds the write lock).
CONCORD_BUSY_RETRY_SECONDS = int(os.environ.get("CONCORD_BUSY_RETRY_SECONDS", "10"))
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
            "BACKEND": "config.cache.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# Every password a person chooses (invitation, temporary-password change, password change and reset) passes
# these: not like the username or e-mail, at least CONCORD_PASSWORD_MIN_LENGTH characters, not a common
# password, not digits only (docs/security.md, "Accounts").
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "accounts.validators.UsernameNotInPasswordValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": int(os.environ.get("CONCORD_PASSWORD_MIN_LENGTH", "10"))},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first (config/auth.py): it refuses a locked-out sign-in before the password is checked. Then Django's
# ModelBackend with the per-request user read written out (config/auth.py).
AUTHENTICATION_BACKENDS = ["config.auth.LockoutBackend", "config.auth.SessionUserBackend"]
# The site's address as people open it (scheme, host, port; no trailing slash): links sent by e-mail or shown
# to be passed on (password reset, invitations) are built from it, never from a request's Host header.
CONCORD_SITE_URL = os.environ.get("CONCORD_SITE_URL", "http://127.0.0.1:8000").rstrip("/")
# Password-reset e-mails one address may be sent per hour; further requests get the same answer and no e-mail.
CONCORD_RESET_EMAILS_PER_HOUR = int(os.environ.get("CONCORD_RESET_EMAILS_PER_HOUR", "3"))
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Sign-in limits, API tokens, HTTPS, Content-Security-Policy (docs/deployment.md) -----------------
# django-axes: after CONCORD_LOGIN_FAILURE_LIMIT wrong passwords for one username from one client
# address, that pair is refused (429) for CONCORD_LOGIN_COOLOFF_MINUTES, on the sign-in form, the
# admin and POST /api/token/ alike. Attempts are rows in the database, shared by every process.
AXES_FAILURE_LIMIT = int(os.environ.get("CONCORD_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("CONCORD_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.auth.lockout_response"
# The client address: REMOTE_ADDR, or the address the last CONCORD_PROXY_COUNT proxies saw (config/auth.py).
AXES_CLIENT_IP_CALLABLE = "config.auth.client_ip"
# No row per successful sign-in; failures are what the lockout counts.
AXES_DISABLE_ACCESS_LOG = True
AXES_VERBOSE = False
CONCORD_PROXY_COUNT = int(os.environ.get("CONCORD_PROXY_COUNT", "0"))
# API tokens (django-rest-knox): stored as SHA-512 digests, expiring, revocable from the profile page
# and DELETE /api/token/, all dropped when the user's password changes (accounts/signals.py).
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=float(os.environ.get("CONCORD_API_TOKEN_TTL_DAYS", "30"))),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}
# Live tokens one user may hold; a new token beyond it replaces that user's oldest.
CONCORD_API_TOKENS_PER_USER = int(os.environ.get("CONCORD_API_TOKENS_PER_USER", "100"))

# E-mail for password resets: printed to the console by default, or written as files under
# CONCORD_EMAIL_FILE_PATH with CONCORD_EMAIL_BACKEND=file; `smtp` uses Django's EMAIL_HOST settings.
_EMAIL_BACKENDS = {
    "console": "django.core.mail.backends.console.EmailBackend",
    "file": "django.core.mail.backends.filebased.EmailBackend",
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
}
_email_backend = os.environ.get("CONCORD_EMAIL_BACKEND", "console")
if _email_backend not in _EMAIL_BACKENDS:
    raise ImproperlyConfigured(f"CONCORD_EMAIL_BACKEND must be one of {', '.join(_EMAIL_BACKENDS)}.")
EMAIL_BACKEND = _EMAIL_BACKENDS[_email_backend]
EMAIL_FILE_PATH = os.environ.get("CONCORD_EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
# A mail server that does not answer must not hold a web worker for long.
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "concord@localhost")

# HTTPS. CONCORD_HTTPS=true turns every switch below on (each can still be set on its own);
# CONCORD_PROXY_SSL_HEADER=true trusts X-Forwarded-Proto from the proxy in front (set it only there).
HTTPS = env_bool("CONCORD_HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600 if HTTPS else 0)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
if env_bool("CONCORD_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# A refused form gets Concord's page saying why and how to send it again (the API answers JSON).
CSRF_FAILURE_VIEW = "config.error_views.csrf_failure"
X_FRAME_OPTIONS = "DENY"

# Heavy agreement requests: a page or API request computes at most this many bootstrap resamples
# itself; more are computed by a worker and cached under the inputs' fingerprint, and the page polls.
CONCORD_REQUEST_BOOTSTRAP_MAX = int(os.environ.get("CONCORD_REQUEST_BOOTSTRAP_MAX", "1000"))
# ... and at most this many items x resamples: a larger project's report is computed by a worker too,
# and the page shows its progress.
CONCORD_REQUEST_BOOTSTRAP_WORK = int(os.environ.get("CONCORD_REQUEST_BOOTSTRAP_WORK", "20000000"))
# A background computation not finished by then is reported as failed (no endless "computing").
CONCORD_REPORT_JOB_SECONDS = int(os.environ.get("CONCORD_REPORT_JOB_SECONDS", "900"))

# Content-Security-Policy (django-csp): scripts only from our own static files, no inline script.
# Report figures are PNG data URIs. Inline style attributes are allowed (the admin uses them).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Each task kind's form script, annotation/kinds/<kind>/form.js, is served as kinds/<kind>/form.js.
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "annotation.kinds.finders.KindScriptFinder",
]
STATIC_ROOT = VAR_DIR / "staticfiles"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
# Uploaded import files go to disk at once so that a large file never sits in memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 0
# Request bodies are bounded per route before they are read (config/request_limits.py, docs/security.md):
# CONCORD_REQUEST_MAX_BYTES by default, CONCORD_SIGN_IN_MAX_BYTES for sign-in and token requests and
# CONCORD_IMPORT_MAX_BYTES for imports. Django's own limit is off: it would answer an API import above it
# with an HTML 400 before those caps.
DATA_UPLOAD_MAX_MEMORY_SIZE = None
CONCORD_REQUEST_MAX_BYTES = int(os.environ.get("CONCORD_REQUEST_MAX_BYTES", str(2 * 1024 * 1024)))
CONCORD_SIGN_IN_MAX_BYTES = int(os.environ.get("CONCORD_SIGN_IN_MAX_BYTES", "4096"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Tokens stored hashed, expiring and revocable (django-rest-knox); the header stays `Token <key>`.
        # First, so that a request without valid credentials (a revoked or expired token, none at
        # all) answers 401 with `WWW-Authenticate: Token`, as DRF answers when a scheme can be named.
        "config.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "config.api_limits.UserRateThrottle",
        "rest_framework.throttling.ScopedRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": os.environ.get("CONCORD_API_ANON_RATE", "100/hour"),
        "user": os.environ.get("CONCORD_API_USER_RATE", "10000/hour"),
        # POST /api/token/ per client address, on top of the sign-in lockout.
        "token": os.environ.get("CONCORD_API_TOKEN_RATE", "30/minute"),
    },
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    # `?limit=` above CONCORD_API_MAX_PAGE_SIZE is a 400; bodies parsed with the limits of CONCORD_MAX_JSON_DEPTH.
    "DEFAULT_PAGINATION_CLASS": "config.api_limits.CappedLimitOffsetPagination",
    "DEFAULT_PARSER_CLASSES": [
        "config.api_limits.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "PAGE_SIZE": 100,
    # `?format=` names an export's file format (gold downloads), not a DRF renderer.
    "URL_FORMAT_OVERRIDE": None,
    # The client address for throttling: REMOTE_ADDR unless proxies in front are declared (as for sign-in limits).
    "NUM_PROXIES": CONCORD_PROXY_COUNT,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Concord API",
    "DESCRIPTION": "Human validation of LLM annotations: projects, items, assignments, annotations.",
    "VERSION": "0.1.0",
    # The docs page's assets come from the installed sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Project roles appear in several endpoints; one schema component names them all.
    "ENUM_NAME_OVERRIDES": {"ProjectRoleEnum": "annotation.models.Role"},
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
    "filters": {"client_error_without_traceback": {"()": "config.log_filters.ClientErrorWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    # A refused request (403, 404) is one line in the log, not a traceback; 5xx keep theirs.
    "loggers": {"django.request": {"filters": ["client_error_without_traceback"]}},
}

# The task-kind registry: adding a kind is its folders (docs/task-kinds.md) and one line here.
CONCORD_TASK_KINDS = [
    "annotation.kinds.ipqa_core_intent.IpqaCoreIntent",
    "annotation.kinds.copa_likert.CopaLikert",
    "annotation.kinds.rationale_inspection.RationaleInspection",
    "annotation.kinds.label_contextualization.LabelContextualization",
    "annotation.kinds.intent_mcq.IntentMcq",
    "annotation.kinds.ipqa_eval_match.IpqaEvalMatch",
    "annotation.kinds.rating.RatingScale",
    "annotation.kinds.categorical.LabelSet",
]
# Import errors listed before the rest are only counted.
CONCORD_IMPORT_ERROR_CAP = int(os.environ.get("CONCORD_IMPORT_ERROR_CAP", "50"))
# A bulk write of this many rows or more (imports, run results, samples) takes the table's planner
# statistics before it returns, on PostgreSQL (annotation.table_statistics): reads that follow at once
# are then planned on the rows written rather than on an empty table.
CONCORD_ANALYZE_AFTER_ROWS = int(os.environ.get("CONCORD_ANALYZE_AFTER_ROWS", "10000"))
# Input caps (docs/formats.md, "Limits"). A web upload larger than CONCORD_IMPORT_MAX_BYTES is refused
# before it is stored (the command-line import reads local files and has no cap); the same cap bounds
# an API request body. One import record (a JSONL line, a CSV row) may be CONCORD_MAX_RECORD_BYTES and
# one stored answer (an annotation value, a gold value) CONCORD_MAX_ANSWER_BYTES, as UTF-8 JSON. JSON
# nested deeper than CONCORD_MAX_JSON_DEPTH is refused, and `?limit=` above CONCORD_API_MAX_PAGE_SIZE.
CONCORD_IMPORT_MAX_BYTES = int(os.environ.get("CONCORD_IMPORT_MAX_BYTES", str(256 * 1024 * 1024)))
CONCORD_MAX_RECORD_BYTES = int(os.environ.get("CONCORD_MAX_RECORD_BYTES", str(1024 * 1024)))
CONCORD_MAX_ANSWER_BYTES = int(os.environ.get("CONCORD_MAX_ANSWER_BYTES", str(64 * 1024)))
CONCORD_MAX_JSON_DEPTH = int(os.environ.get("CONCORD_MAX_JSON_DEPTH", "64"))
CONCORD_API_MAX_PAGE_SIZE = int(os.environ.get("CONCORD_API_MAX_PAGE_SIZE", "1000"))
# A dataset release cuts each split's Parquet into files of at most this many bytes (the Hub's advice: 500 MB).
CONCORD_RELEASE_SHARD_BYTES = int(os.environ.get("CONCORD_RELEASE_SHARD_BYTES", str(500 * 1024 * 1024)))
# Uploads go to a temporary file (FILE_UPLOAD_MAX_MEMORY_SIZE = 0 above) that stops growing at the cap.
FILE_UPLOAD_HANDLERS = ["annotation.uploads.CappedTemporaryFileUploadHandler"]
# Any signed-in user may create projects (and becomes their researcher). Off: only staff and holders of
# the annotation.add_project permission create projects.
CONCORD_SELF_SERVICE_PROJECTS = env_bool("CONCORD_SELF_SERVICE_PROJECTS", False)
# On: a researcher adding an existing account sends it a join invitation that the person accepts while
# signed in, instead of adding them directly (docs/security.md, "Accounts").
CONCORD_MEMBER_CONSENT = env_bool("CONCORD_MEMBER_CONSENT", False)
# An item held this long without an answer goes back to the pool on the next claim by anyone
# (annotation.assignments); its holder is told on their next claim.
CONCORD_HOLD_SECONDS = int(os.environ.get("CONCORD_HOLD_SECONDS", "1800"))

# --- LLM judges (judges/) ---------------------------------------------------------------------------
# Pre-annotation by an OpenAI-compatible server (a `vllm serve` GPU host, or OpenAI), in-process
# vLLM on GPU workers, or a baseline. See docs/gpu-workers.md.
# Where the `openai` backend sends requests, e.g. http://gpu-1:8000/v1; empty means api.openai.com.
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "")
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
# Further named endpoints (judges choose one by name; "default" is the two variables above), as JSON:
# {"gpu-1": {"base_url": "http://gpu-1:8000/v1", "api_key_env": "GPU1_API_KEY"}}. Checked at start-up.
try:
    LLM_ENDPOINTS = json.loads(os.environ.get("CONCORD_LLM_ENDPOINTS") or "{}")
except ValueError as exc:
    raise ImproperlyConfigured(f"CONCORD_LLM_ENDPOINTS is not valid JSON: {exc}") from None
if not isinstance(LLM_ENDPOINTS, dict):
    raise ImproperlyConfigured("CONCORD_LLM_ENDPOINTS must be a JSON object: name -> {base_url, api_key_env}")
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
# The models the in-process vllm backend may load, as JSON: judges name one, the worker loads its path
# or repository, e.g. {"qwen3-32b": "/models/Qwen3-32B"}. Checked at start-up (judges.E002).
try:
    VLLM_MODELS = json.loads(os.environ.get("CONCORD_VLLM_MODELS") or "{}")
except ValueError as exc:
    raise ImproperlyConfigured(f"CONCORD_VLLM_MODELS is not valid JSON: {exc}") from None
if not isinstance(VLLM_MODELS, dict):
    raise ImproperlyConfigured("CONCORD_VLLM_MODELS must be a JSON object: name -> path or repository")
# Extra vllm.LLM arguments on GPU workers, as JSON: {"tensor_parallel_size": 2, "max_model_len": 8192}.
VLLM_ENGINE_OPTIONS = os.environ.get("VLLM_ENGINE_OPTIONS", "{}")
# The judge-backend registry (Django's backend pattern, like CONCORD_TASK_KINDS).
CONCORD_JUDGE_BACKENDS = {
    "openai": "judges.backends.openai_compat.OpenAIBackend",
    "vllm": "judges.backends.vllm_local.VllmBackend",
    "baseline": "judges.backends.baseline.BaselineBackend",
    "imported": "judges.backends.imported.ImportedBackend",
}
# In-process vLLM chunks (of judge and generation runs) go to GPU workers only: `celery -A config
# worker -Q gpu` on GPU hosts.
CELERY_TASK_ROUTES = {"judges.tasks.run_chunk_gpu_task": {"queue": "gpu"}}

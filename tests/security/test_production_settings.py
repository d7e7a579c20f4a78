"""Production switches: HTTPS settings from the environment, no start on the built-in key, a clean
`check --deploy` with the documented variables, and a Content-Security-Policy without inline script."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
#: The variables docs/deployment.md lists for production (plus a key made for the test).
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "t3st-" + "k9#Qz!xW2@rB7$mN4%pL8^vC1&" * 2,
    "ALLOWED_HOSTS": "concord.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://concord.example.org",
    "CONCORD_HTTPS": "true",
    "CONCORD_PROXY_SSL_HEADER": "true",
}


def run_django(code_or_args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A fresh Python process with only these Concord variables set (none inherited from the test run)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CONCORD_", "DJANGO_", "SECRET_KEY"))}
    for name in ("DEBUG", "ALLOWED_HOSTS", "DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "CSRF_TRUSTED_ORIGINS"):
        base.pop(name, None)
    base |= {"CONCORD_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings", **env}
    return subprocess.run(
        [sys.executable, *code_or_args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


def setting(name: str, tmp_path: Path, **env: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print(repr(settings.{name}))"
    done = run_django(["-c", code], tmp_path, **env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class StartupTests:
    def test_check_deploy_is_clean_with_the_documented_production_variables(self, tmp_path):
        done = run_django(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], tmp_path, **PRODUCTION)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "System check identified no issues (0 silenced)." in done.stdout

    def test_debug_off_without_secret_key_and_not_embedded_refuses_to_start(self, tmp_path):
        done = run_django(["manage.py", "check"], tmp_path, DEBUG="false", CONCORD_EMBEDDED="false")
        assert done.returncode != 0 and "ImproperlyConfigured" in done.stderr and "SECRET_KEY" in done.stderr

    def test_a_configured_server_without_secret_key_refuses_to_start(self, tmp_path):
        env = {k: v for k, v in PRODUCTION.items() if k != "SECRET_KEY"}
        done = run_django(["manage.py", "check"], tmp_path, **env)
        assert done.returncode != 0 and "SECRET_KEY" in done.stderr

    def test_a_fresh_checkout_makes_and_keeps_a_random_key_of_its_own(self, tmp_path):
        """The README's commands work as written in a checkout with nothing configured: the embedded default
        makes a random key under var/ on first use (readable by its owner only) and keeps it."""
        done = run_django(["manage.py", "agreement_stats", "--help"], tmp_path)
        assert done.returncode == 0, done.stderr
        key_file = tmp_path / "secret_key"
        key = key_file.read_text().strip()
        assert len(key) >= 50 and (key_file.stat().st_mode & 0o777) == 0o600
        assert setting("SECRET_KEY", tmp_path) == repr(key)  # the same key for every later process
        assert setting("SECRET_KEY", tmp_path / "elsewhere") != repr(key)  # and random, not built in

    def test_a_deployment_without_secret_key_refuses_to_start(self, tmp_path):
        """Production (a database of its own) never falls back to a key kept on local disk."""
        done = run_django(["manage.py", "check"], tmp_path, DATABASE_URL="postgres://concord@db.example.org/concord")
        assert done.returncode != 0 and "SECRET_KEY" in done.stderr
        assert not (tmp_path / "secret_key").exists()

    def test_the_embedded_default_starts_on_the_built_in_key(self, tmp_path):
        done = run_django(["manage.py", "check"], tmp_path, DEBUG="false", CONCORD_EMBEDDED="true")
        assert done.returncode == 0, done.stderr

    def test_https_switches_come_from_the_environment(self, tmp_path):
        assert setting("SECURE_SSL_REDIRECT", tmp_path, CONCORD_EMBEDDED="true") == "False"
        assert setting("SESSION_COOKIE_SECURE", tmp_path, **PRODUCTION) == "True"
        assert setting("CSRF_COOKIE_SECURE", tmp_path, **PRODUCTION) == "True"
        assert setting("SECURE_HSTS_SECONDS", tmp_path, **PRODUCTION) == str(365 * 24 * 3600)
        assert setting("SECURE_PROXY_SSL_HEADER", tmp_path, **PRODUCTION) == "('HTTP_X_FORWARDED_PROTO', 'https')"
        assert setting("SECURE_HSTS_SECONDS", tmp_path, **PRODUCTION, SECURE_HSTS_SECONDS="600") == "600"
        assert setting("SECURE_SSL_REDIRECT", tmp_path, **PRODUCTION, SECURE_SSL_REDIRECT="false") == "False"


@pytest.mark.django_db
class ContentSecurityPolicyTests:
    def test_pages_send_a_policy_that_allows_no_inline_script(self, client, make_user):
        client.force_login(make_user("alice"))
        policy = client.get(reverse("home"))["Content-Security-Policy"]
        script_src = re.search(r"script-src ([^;]+)", policy).group(1)
        assert script_src.strip() == "'self'" and "frame-ancestors 'none'" in policy

    def test_no_template_has_inline_script_or_event_handler_attributes(self):
        found = []
        for path in (ROOT / "templates").rglob("*.html"):
            text = path.read_text()
            found += [f"{path.name}: inline <script>" for m in re.finditer(r"<script(?![^>]*\bsrc=)[^>]*>", text)]
            found += [f"{path.name}: {m.group(0)}" for m in re.finditer(r"\son[a-z]+\s*=", text)]
        assert found == []

    def test_api_docs_load_their_script_from_this_site(self, client):
        page = client.get(reverse("api_docs")).content.decode()
        inline = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page)
        assert inline == [] and "?script=" in page
        script = client.get(reverse("api_docs") + "?script=")
        assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")

"""`make test` on a machine without Chromium: the browser tests are left out and the run says once, at
the end, how to run them, instead of a skip line for each."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class WithoutChromiumTests:
    def test_the_browser_tests_are_left_out_with_one_line_saying_how_to_run_them(self, tmp_path):
        env = {key: value for key, value in os.environ.items() if key != "CHROMIUM_PATH"}
        env["PATH"] = str(tmp_path)  # no chromium on it
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-q",
                "-ra",
                "tests/browser/test_keyboard.py",
                "tests/browser/test_post_redirects.py",
                "tests/annotation/test_csvcells.py",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SKIPPED" not in done.stdout and " skipped" not in done.stdout
        assert done.stdout.count("Chromium is not installed") == 1
        assert "run them with: .venv/bin/python -m pytest tests/browser" in done.stdout
        assert " deselected" in done.stdout.splitlines()[-1]

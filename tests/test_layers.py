"""The apps import one way (validation -> judges -> annotation; accounts beside judges; only config/ wires
them), as the contracts in pyproject.toml state; and every import of another app sits at module top."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("accounts", "annotation", "judges", "validation")
FIRST_PARTY = {*APPS, "config"}


def _imported_roots(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        return {node.module.split(".")[0]} if node.module and node.level == 0 else set()
    return {alias.name.split(".")[0] for alias in node.names}


def _deferred_cross_app_imports(app: str) -> list[str]:
    """``path:line`` of each import of another first-party package made inside a function or class body."""
    found = []
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for scope in ast.walk(tree):
            if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for node in ast.walk(scope):
                if isinstance(node, ast.Import | ast.ImportFrom) and (_imported_roots(node) & FIRST_PARTY) - {app}:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sorted(set(found))


class LayerContractsTests:
    def test_the_import_contracts_are_kept(self):
        """lint-imports fails (and names the import) when a lower layer imports a higher one, even in a function."""
        lint = Path(sys.executable).with_name("lint-imports")
        done = subprocess.run(
            [str(lint), "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "0 broken" in done.stdout

    def test_no_app_imports_another_inside_a_function(self):
        """Imports of another app are at module top, where a reader (and the contracts) see them."""
        deferred = [where for app in APPS for where in _deferred_cross_app_imports(app)]
        assert deferred == []

    def test_the_deferred_import_check_finds_one(self, tmp_path, monkeypatch):
        """The scan above would report an import of another app hidden in a function."""
        app = tmp_path / "annotation"
        app.mkdir()
        (app / "late.py").write_text("def f():\n    from validation import goldset\n    return goldset\n")
        monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
        assert _deferred_cross_app_imports("annotation") == ["annotation/late.py:2"]

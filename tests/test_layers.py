"""The apps import one way (validation -> judges -> annotation; accounts beside judges; only config/ wires
them), as the contracts in pyproject.toml state; every import of another app sits at module top; the
lowest layer names no other app even in a string; and the shared validation modules and templates name
no task kind (a kind's rules live in its folders, found by its name)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from annotation.kinds import all_kinds

ROOT = Path(__file__).resolve().parents[1]
APPS = ("accounts", "annotation", "judges", "validation")
FIRST_PARTY = {*APPS, "config"}
#: A string that is a dotted path into another first-party package ("validation.reports.X").
DOTTED_PATH = re.compile(rf"(?:{'|'.join(sorted(FIRST_PARTY - {'annotation'}))})(?:\.[A-Za-z_]\w*)+")
#: Where a task kind's own modules and templates live in the validation layer: its folder, and its
#: report module ``validation/reports/<kind>.py``. Migrations are history.
KIND_OWNED = ("validation/kinds/",)


def _python_files(folder: Path):
    return (p for p in sorted(folder.rglob("*.py")) if "migrations" not in p.parts)


def _string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _dotted_paths_to_other_apps(root: Path) -> list[str]:
    """``path:line: string`` of each string in ``annotation/`` that is a dotted path into another app."""
    return [
        f"{path.relative_to(root)}:{line}: {value}"
        for path in _python_files(root / "annotation")
        for line, value in _string_constants(path)
        if DOTTED_PATH.fullmatch(value)
    ]


def _kind_owned(relative: str, kind_names: set[str]) -> bool:
    if relative.startswith(KIND_OWNED):
        return True
    folder, _, name = relative.rpartition("/")
    return folder == "validation/reports" and name.removesuffix(".py") in kind_names


def _kind_literals(root: Path, kind_names: set[str]) -> list[str]:
    """``path:line: name`` of each kind name given as a literal in a shared validation module (a string
    constant equal to it) or template (the name in quotes, as a template comparison writes it)."""
    found = []
    for path in _python_files(root / "validation"):
        relative = str(path.relative_to(root))
        if not _kind_owned(relative, kind_names):
            found += [f"{relative}:{line}: {value}" for line, value in _string_constants(path) if value in kind_names]
    quoted = re.compile(rf"[\"']({'|'.join(sorted(kind_names))})[\"']")
    for path in sorted((root / "templates" / "validation").rglob("*.html")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found += [f"{path.relative_to(root)}:{number}: {m.group(1)}" for m in quoted.finditer(text)]
    return found


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

    def test_annotation_names_no_other_app_in_a_dotted_string(self):
        """A dotted path string is an import the linter cannot see: the lowest layer holds none."""
        assert _dotted_paths_to_other_apps(ROOT) == []

    def test_the_dotted_string_check_finds_one(self, tmp_path):
        kinds = tmp_path / "annotation" / "kinds"
        kinds.mkdir(parents=True)
        (kinds / "late.py").write_text('builder = "validation.reports.base.ReportBuilder"\nlabel = "a.b"\n')
        assert _dotted_paths_to_other_apps(tmp_path) == [
            "annotation/kinds/late.py:1: validation.reports.base.ReportBuilder"
        ]

    def test_shared_validation_modules_and_templates_name_no_kind(self):
        """Paper evaluations, reports and pages are found by the kind's name, never chosen by a literal."""
        assert _kind_literals(ROOT, {kind.name for kind in all_kinds()}) == []

    def test_the_kind_literal_check_finds_them_and_spares_the_kind_s_folders(self, tmp_path):
        (tmp_path / "validation" / "kinds" / "copa_likert").mkdir(parents=True)
        (tmp_path / "validation" / "reports").mkdir()
        (tmp_path / "templates" / "validation").mkdir(parents=True)
        (tmp_path / "validation" / "views.py").write_text('if kind == "copa_likert":\n    pass\n')
        (tmp_path / "validation" / "kinds" / "copa_likert" / "evaluations.py").write_text('KIND = "copa_likert"\n')
        (tmp_path / "validation" / "reports" / "copa_likert.py").write_text('KEY = "copa_likert"\n')
        (tmp_path / "templates" / "validation" / "report.html").write_text(
            '<p>copa_likert</p>\n{% if project.kind == "copa_likert" %}{% endif %}\n'
        )
        assert _kind_literals(tmp_path, {"copa_likert"}) == [
            "validation/views.py:1: copa_likert",
            "templates/validation/report.html:2: copa_likert",
        ]

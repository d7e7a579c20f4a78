"""The apps import one way (validation -> judges -> annotation; accounts beside judges; only config/ wires
them), as the contracts in pyproject.toml state; every import of another app sits at module top; the
lowest layer names no other app even in a string; no shared module or template names a task kind or
imports a kind's module (a kind's rules live in its folders, found by its name; the settings' kind
list is the one registry line); and no module outside migrations grows past 600 lines."""

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
#: Where a task kind's own modules and templates live: its folder in each layer, and its report module
#: ``validation/reports/<kind>.py``. Migrations are history.
KIND_FOLDERS = ("annotation/kinds/", "judges/kinds/", "validation/kinds/")
#: The one line that names each kind's module: the settings' list of kinds.
REGISTRY_LINE = ("config/settings.py", "CONCORD_TASK_KINDS")
#: The first-party Python outside the apps that the size rule covers too.
OTHER_CODE = ("config", "bench", "docs", "fixtures", "scripts", "tests")
MAX_MODULE_LINES = 600


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
    for folder in KIND_FOLDERS:
        if relative.startswith(folder):
            return relative[len(folder) :].split("/")[0].removesuffix(".py") in kind_names
    folder, _, name = relative.rpartition("/")
    return folder == "validation/reports" and name.removesuffix(".py") in kind_names


def _registry_line_constants(path: Path, tree: ast.AST, root: Path) -> set[int]:
    """ids of the string constants of the settings' kind list (the registry line)."""
    if str(path.relative_to(root)) != REGISTRY_LINE[0]:
        return set()
    return {
        id(constant)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == REGISTRY_LINE[1] for t in node.targets)
        for constant in ast.walk(node.value)
    }


def _kind_literals(root: Path, kind_names: set[str]) -> list[str]:
    """``path:line: name`` of each kind named outside the kind's folders: in a module, a string constant
    equal to a kind's name, or an import of (or dotted path into) a kind's module; in a template, the
    name in quotes, as a template comparison writes it."""
    found = []
    names = "|".join(sorted(kind_names))
    kind_module = re.compile(rf"\b(?:{'|'.join(APPS)})\.kinds\.(?:{names})\b")
    for app in (*APPS, "config"):
        for path in _python_files(root / app):
            relative = str(path.relative_to(root))
            if _kind_owned(relative, kind_names):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            allowed = _registry_line_constants(path, tree, root)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in allowed:
                    if node.value in kind_names or kind_module.search(node.value):
                        found.append(f"{relative}:{node.lineno}: {node.value}")
                elif isinstance(node, ast.Import | ast.ImportFrom):
                    modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                    found += [f"{relative}:{node.lineno}: import {m}" for m in modules if kind_module.search(m)]
    quoted = re.compile(rf"[\"']({names})[\"']")
    templates = [p for app in APPS for p in sorted((root / app).rglob("*.html"))]
    for path in [*sorted((root / "templates").rglob("*.html")), *templates]:
        relative = str(path.relative_to(root))
        if _kind_owned(relative, kind_names):
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found += [f"{relative}:{number}: {m.group(1)}" for m in quoted.finditer(text)]
    return found


def _long_modules(root: Path) -> list[str]:
    """``path: lines`` of each first-party module outside migrations longer than MAX_MODULE_LINES."""
    found = []
    for folder in (*APPS, *OTHER_CODE):
        for path in _python_files(root / folder):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                found.append(f"{path.relative_to(root)}: {lines}")
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

    def test_shared_modules_and_templates_name_no_kind(self):
        """Reports, evaluations, commands and pages are found by the kind's name, never chosen by a literal."""
        assert _kind_literals(ROOT, {kind.name for kind in all_kinds()}) == []

    def test_the_kind_literal_check_finds_them_and_spares_the_kind_s_folders(self, tmp_path):
        for folder in ("validation/kinds/copa_likert", "validation/reports", "templates/validation", "config",
                       "annotation/kinds/copa_likert", "judges/kinds/copa_likert"):  # fmt: skip
            (tmp_path / folder).mkdir(parents=True)
        (tmp_path / "validation" / "views.py").write_text('if kind == "copa_likert":\n    pass\n')
        (tmp_path / "validation" / "kinds" / "copa_likert" / "evaluations.py").write_text('KIND = "copa_likert"\n')
        (tmp_path / "validation" / "reports" / "copa_likert.py").write_text('KEY = "copa_likert"\n')
        (tmp_path / "annotation" / "kinds" / "copa_likert" / "form.html").write_text('{% if k == "copa_likert" %}')
        (tmp_path / "judges" / "kinds" / "copa_likert" / "steps.py").write_text('KIND = "copa_likert"\n')
        (tmp_path / "judges" / "kinds" / "shared.py").write_text('NAME = "copa_likert"\n')
        (tmp_path / "annotation" / "demo.py").write_text("from annotation.kinds.copa_likert import FACTORS\n")
        (tmp_path / "judges" / "pages.py").write_text('PATH = "judges.kinds.copa_likert.steps"\n')
        (tmp_path / "config" / "settings.py").write_text(
            'CONCORD_TASK_KINDS = ["annotation.kinds.copa_likert.CopaLikert"]\nOTHER = "annotation.kinds.copa_likert"\n'
        )
        (tmp_path / "templates" / "validation" / "report.html").write_text(
            '<p>copa_likert</p>\n{% if project.kind == "copa_likert" %}{% endif %}\n'
        )
        assert _kind_literals(tmp_path, {"copa_likert"}) == [
            "annotation/demo.py:1: import annotation.kinds.copa_likert",
            "judges/kinds/shared.py:1: copa_likert",
            "judges/pages.py:1: judges.kinds.copa_likert.steps",
            "validation/views.py:1: copa_likert",
            "config/settings.py:2: annotation.kinds.copa_likert",
            "templates/validation/report.html:2: copa_likert",
        ]

    def test_no_module_is_over_600_lines(self):
        """A module that long does several jobs: split it along them."""
        assert _long_modules(ROOT) == []

    def test_the_size_check_finds_a_long_module_and_spares_migrations(self, tmp_path):
        (tmp_path / "annotation" / "migrations").mkdir(parents=True)
        (tmp_path / "tests").mkdir()
        (tmp_path / "annotation" / "big.py").write_text("x = 1\n" * 601)
        (tmp_path / "annotation" / "migrations" / "0001_initial.py").write_text("x = 1\n" * 900)
        (tmp_path / "tests" / "test_fits.py").write_text("x = 1\n" * 600)
        assert _long_modules(tmp_path) == ["annotation/big.py: 601"]

"""The app stands alone: no module of `resolver` imports the demo project (or the tests, or the benches)."""
from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "resolver"
OUTSIDE = ("lifeproject", "tests", "bench")


def imported_names(source: str) -> set[str]:
    """Every module an `import` or `from ... import` names, at any depth (function-level imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_app__no_module_imports_the_demo_project():
    offenders = {}
    for path in sorted(APP.rglob("*.py")):
        bad = sorted(n for n in imported_names(path.read_text()) if n.split(".")[0] in OUTSIDE)
        if bad:
            offenders[str(path.relative_to(APP.parent))] = bad
    assert offenders == {}


def test_app__the_check_sees_function_level_imports():
    """The walk would have caught the old request log import, made inside a method."""
    source = "class A:\n    def f(self):\n        from lifeproject import request_log\n"
    assert "lifeproject" in imported_names(source)

"""Layering (issue 28, points 3 and 4 in part): the model and the accounts service do not import
each other; the deadline is a domain value free of Django; process state is owned by an object."""
from __future__ import annotations

import ast
from pathlib import Path

import resolver

ROOT = Path(resolver.__file__).parent


def _imports(relative: str) -> set[str]:
    tree = ast.parse((ROOT / relative).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_models__do_not_import_the_accounts_service():
    assert not any(name.startswith("resolver.accounts") for name in _imports("models.py"))
    assert "resolver.connected.ConnectedAccount" in _imports("models.py")


def test_connected__is_a_leaf():
    assert not any(name.startswith(("resolver", "django")) for name in _imports("connected.py"))


def test_domain_deadline__imports_nothing_from_django_or_the_app():
    assert not any(name.startswith(("django", "resolver")) for name in _imports("domain/deadline.py"))


def test_namespaces__owned_by_the_app_config_not_a_module_global():
    from django.apps import apps

    from resolver import accounts

    assert accounts.namespaces() is apps.get_app_config("resolver").namespaces
    assert not any(isinstance(value, accounts.NamespaceRegistry) for value in vars(accounts).values())
    fresh = accounts.NamespaceRegistry()
    previous = accounts.use_namespaces(fresh)
    try:
        assert accounts.namespaces() is fresh
    finally:
        accounts.use_namespaces(previous)

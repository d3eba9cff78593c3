"""A door imports no other door (issue 40, point 3): each reaches the others' work through the services.

The doors are the packages a person or a program comes in through. What each
one shares with the others (resolving, throttling, request IDs, the OpenAPI
description, the accounts) lives below them: `resolver/services.py`,
`throttling.py`, `request_ids.py`, `openapi.py`, `envelope.py`, `domain/`.
Every import is checked, at module level and inside functions, relative ones
resolved; `tests/test_services.py::test_layers__*` holds the other direction
(nothing below a door imports one).

Not doors: `resolver/oauth/` (the site's OAuth server and the resource check
the MCP door authenticates with, as a door uses Django's auth; it imports no
door), and the composition roots `resolver/asgi.py` and the `urls.py` files,
whose job is to put the doors side by side.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import resolver

ROOT = Path(resolver.__file__).parent

# Module prefix -> door; the longest prefix wins. `manage.py mcp` is how the MCP door runs over stdio.
DOORS = {
    "resolver.api": "api",
    "resolver.web": "web",
    "resolver.templatetags": "web",
    "resolver.mcp": "mcp",
    "resolver.management.commands.mcp": "mcp",
    "resolver.management": "commands",
}


def door_of(module: str) -> str | None:
    matches = [prefix for prefix in DOORS if module == prefix or module.startswith(prefix + ".")]
    return DOORS[max(matches, key=len)] if matches else None


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")


def imported(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module `source` (the text of `module`) imports, anywhere in it; `from a import b` counts a and a.b."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            parent = ".".join([*base, *([node.module] if node.module else [])])
            found.add(parent)
            found |= {f"{parent}.{alias.name}" for alias in node.names}
    return found


def violations(source: str, module: str, *, is_package: bool = False) -> list[str]:
    """`module`'s imports of a door other than its own."""
    own = door_of(module)
    return sorted(name for name in imported(source, module, is_package=is_package)
                  if door_of(name) not in (None, own))


def door_modules() -> list[Path]:
    return sorted(path for path in ROOT.rglob("*.py") if "migrations" not in path.parts
                  and door_of(module_name(path)) is not None)


def test_layers__a_door_imports_no_other_door():
    paths = door_modules()
    names = {module_name(path) for path in paths}
    assert {"resolver.api.views", "resolver.mcp.http", "resolver.mcp.schemas", "resolver.web.accounts",
            "resolver.management.commands.calendar_accounts", "resolver.management.commands.mcp"} <= names
    found = {module_name(path): violations(path.read_text(encoding="utf-8"), module_name(path),
                                           is_package=path.name == "__init__.py")
             for path in paths}
    assert {name: bad for name, bad in found.items() if bad} == {}


def test_layers__the_account_doors_call_the_services_not_the_accounts_module():
    for relative in ("web/accounts.py", "management/commands/calendar_accounts.py"):
        path = ROOT / relative
        names = imported(path.read_text(encoding="utf-8"), module_name(path))
        assert "resolver.services" in names, relative
        assert not {name for name in names if name == "resolver.accounts" or name.startswith("resolver.accounts.")}


@pytest.mark.parametrize("source", [
    "from resolver.api.schema import api_document",
    "def f():\n    from resolver.api.schema import api_document\n",
    "import resolver.api.schema",
    "from resolver import api",
    "from ..api import schema",
    "async def f():\n    if True:\n        import resolver.web.views as v\n",
])
def test_violations__a_door_importing_another_is_found_anywhere(source):
    """The checker itself: the MCP door as it imported the API door before (and the other spellings)."""
    assert violations(source, "resolver.mcp.schemas")


@pytest.mark.parametrize("source,module", [
    ("from resolver.openapi import api_document", "resolver.mcp.schemas"),
    ("from resolver import services, throttling", "resolver.mcp.http"),
    ("from resolver.mcp import server", "resolver.mcp.http"),
    ("from resolver.mcp.server import run_stdio", "resolver.management.commands.mcp"),
    ("from resolver.management.commands.calendar_accounts import connect_command",
     "resolver.management.commands.resolve"),
    ("from . import views", "resolver.web.accounts"),
    ("from resolver.oauth import resource", "resolver.mcp.http"),
])
def test_violations__own_door_and_lower_layers_are_allowed(source, module):
    assert violations(source, module) == []


def test_violations__the_mcp_command_is_the_mcp_door_not_the_commands():
    assert violations("from resolver.management.commands.resolve import Command", "resolver.management.commands.mcp")

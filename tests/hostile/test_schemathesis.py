"""Schemathesis against the OpenAPI document, in process, over a seeded CalDAV server.

Every generated request (the schema's examples, boundary values, valid and
invalid bodies) must get a response the schema describes: a documented
status, the documented content type and headers, a body that validates, and
never a 5xx (the CalDAV server is up, so not even the documented 503).

The document is generated at import, because Schemathesis needs it to
collect the tests; test_schema.py checks that /v1/schema/ serves exactly it.
Its copy here carries examples naming the seeded titles (see openapi.py).
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.hostile.openapi import api_schema

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

# Per operation and CalDAV server, for the fuzzing phase; the examples and
# coverage phases add their own (boundary values, undeclared methods).
RESOLVE_EXAMPLES = 100
READ_EXAMPLES = 25

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    # Input the schema calls invalid must be refused with a 4xx, never accepted.
    negative_data_rejection,
]

schema = api_schema()

FUZZ_SETTINGS: dict[str, Any] = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _check(case, token: str, live, example_counts) -> None:
    response = case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)
    assert response.status_code < 500
    phase = case.meta.phase.name.value if case.meta else "explicit"
    example_counts.add(f"schemathesis {live.name}: {case.operation.label} ({phase})")
    example_counts.status(f"schemathesis {live.name}: {case.operation.label}", response.status_code)


@schema.include(method="POST", path="/v1/resolve").parametrize()
@settings(max_examples=RESOLVE_EXAMPLES, **FUZZ_SETTINGS)
def test_schemathesis__resolve_conforms(case, token, live, example_counts):
    _check(case, token, live, example_counts)


@schema.include(method="GET").parametrize()
@settings(max_examples=READ_EXAMPLES, **FUZZ_SETTINGS)
def test_schemathesis__reads_conform(case, token, live, example_counts):
    _check(case, token, live, example_counts)

"""resolver/judges/http.py: what an HTTP judge reads of a retry hint (Retry-After, retry-after-ms).

The whole exchange (retries, backoff within the budget, the session per
process) is tested through the Jev judge in tests/judges/test_jev.py.
"""
from __future__ import annotations

import pytest

from resolver.judges.http import retry_after_seconds


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "nope", "retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers) == expected

"""Resolve through the door contract (`services.answer`) and keep the outcome: for tests and benchmarks.

The services have one entry point for a resolution, `answer(document, caller=...)`;
tests that assert on the pipeline's outcome (not on a door's rendering) call it
through this, with the request's fields as keywords.
"""
from __future__ import annotations

from typing import Any

from resolver import services
from resolver.domain.pipeline import Outcome


def resolve_outcome(*, text: Any, kind: Any, collection_ids: Any = None, time_zone: Any = None,
                    door: str = "api", **kwargs: Any) -> Outcome:
    """`services.answer(...).outcome` for these fields; `calendar`, `judge`, `policy`, `request_id` pass on."""
    document: dict[str, Any] = {"text": text, "kind": kind}
    if collection_ids is not None:
        document["collection_ids"] = collection_ids
    if time_zone is not None:
        document["time_zone"] = time_zone
    return services.answer(document, caller=services.Caller(door=door), **kwargs).outcome

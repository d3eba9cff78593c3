"""The request ID every door puts in its envelope and log lines: made here, read from here.

`req_` and 32 hex digits, one per request. A door outside Django (the command,
MCP) makes one with `new_request_id()`; a Django door takes the request's with
`request_id_of(request)`, which makes it on first use and keeps it on the
request (attribute `resolver_request_id`), so a host middleware that sets it
first (the demo's request log) and the envelope agree.

Plain Python: no Django, no door.
"""
from __future__ import annotations

import uuid
from typing import Any

# Where a request carries its ID (set by a host's middleware or on first use).
ATTRIBUTE = "resolver_request_id"


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex


def request_id_of(request: Any) -> str:
    """The request's ID, made (and kept on it) on first use; a fresh one when there is no request."""
    request_id = getattr(request, ATTRIBUTE, None)
    if request_id is None:
        request_id = new_request_id()
        if request is not None:
            setattr(request, ATTRIBUTE, request_id)
    return request_id

"""Request IDs (resolver/request_ids.py): one format, made once per request, read by every door from one place."""
from __future__ import annotations

import re

from resolver import request_ids, services


def test_new_request_id__format():
    assert re.fullmatch(r"req_[0-9a-f]{32}", request_ids.new_request_id())
    assert services.new_request_id is request_ids.new_request_id  # the local doors' name for it


def test_request_id_of__made_once_and_kept_on_the_request(rf):
    request = rf.get("/")
    first = request_ids.request_id_of(request)
    assert request_ids.request_id_of(request) == first == getattr(request, request_ids.ATTRIBUTE)


def test_request_id_of__a_middlewares_id_wins(rf):
    request = rf.get("/")
    request.resolver_request_id = "req_" + "a" * 32
    assert request_ids.request_id_of(request) == "req_" + "a" * 32


def test_request_id_of__no_request_a_fresh_id():
    assert request_ids.request_id_of(None) != request_ids.request_id_of(None)

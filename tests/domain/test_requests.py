"""resolver/domain/requests.py: the request rules every door shares, each failure naming its field."""
from __future__ import annotations

from datetime import timezone
from zoneinfo import ZoneInfo

import pytest

from resolver.domain.errors import InvalidRequest
from resolver.domain.requests import RequestLimits, parse_document, parse_request


@pytest.mark.parametrize("fields, field", [
    ({"text": "", "kind": "task"}, "text"),
    ({"text": "   ", "kind": "task"}, "text"),
    ({"text": 5, "kind": "task"}, "text"),
    ({"text": "a", "kind": "meeting"}, "kind"),
    ({"text": "a", "kind": ["task"]}, "kind"),
    ({"text": "a", "kind": "task", "collection_ids": "work"}, "collection_ids"),
    ({"text": "a", "kind": "task", "time_zone": "Mars/Olympus"}, "time_zone"),
    ({"text": "a", "kind": "task", "time_zone": 1}, "time_zone"),
    ({"text": "a", "kind": "task", "time_zone": "../../etc/passwd"}, "time_zone"),
])
def test_parse_request__one_details_shape(fields, field):
    with pytest.raises(InvalidRequest) as caught:
        parse_request(**fields)
    assert caught.value.details["field"] == field


def test_parse_request__limits_are_the_callers():
    limits = RequestLimits(max_text_length=10, max_collection_ids=2)
    with pytest.raises(InvalidRequest) as caught:
        parse_request(text="x" * 11, kind="task", limits=limits)
    assert caught.value.details == {"field": "text", "max_length": 10}
    with pytest.raises(InvalidRequest) as caught:
        parse_request(text="x", kind="task", collection_ids=["a", "b", "c"], limits=limits)
    assert caught.value.details == {"field": "collection_ids", "max_items": 2}
    assert parse_request(text="x" * 10, kind="task", collection_ids=["a", "b"], limits=limits).text == "x" * 10


def test_parse_request__time_zone_default_and_override():
    assert parse_request(text="a", kind="task", default_time_zone="Europe/Berlin").time_zone == ZoneInfo("Europe/Berlin")
    assert parse_request(text="a", kind="task", time_zone="Asia/Tokyo",
                         default_time_zone="Europe/Berlin").time_zone == ZoneInfo("Asia/Tokyo")
    assert parse_request(text="a", kind="task").time_zone is timezone.utc


@pytest.mark.parametrize("document, field", [
    (["a"], "body"),
    ({"kind": "task"}, "text"),
    ({"text": "a"}, "kind"),
    ({"text": "a", "kind": "task", "extra": 1, "another": 2}, "another"),
])
def test_parse_document__rules(document, field):
    with pytest.raises(InvalidRequest) as caught:
        parse_document(document)
    assert caught.value.details["field"] == field


def test_parse_document__unknown_fields_are_all_listed():
    with pytest.raises(InvalidRequest) as caught:
        parse_document({"text": "a", "kind": "task", "zz": 1, "aa": 2})
    assert caught.value.details == {"field": "aa", "unknown_fields": ["aa", "zz"]}

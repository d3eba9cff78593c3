"""The cold read does the least the server allows: counted round trips on Radicale and Xandikos."""
from __future__ import annotations

import pytest
from lxml import etree

from resolver.calendars.caldav import CalDAVCalendar
from resolver.calendars.caldav import http
from resolver.conf import resolver_settings
from resolver.domain.items import Kind

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, bytes]]:
    """Every request the reader's client sends: (method, path, body)."""
    seen: list[tuple[str, str, bytes]] = []
    original = http.Transport._send

    def spy(self, method: str, path: str, body: bytes, **kwargs):
        seen.append((method, path, body))
        return original(self, method, path, body, **kwargs)

    monkeypatch.setattr(http.Transport, "_send", spy)
    return seen


def test_cold_read__discovery_combined_then_one_sync_per_collection(live, sent) -> None:
    calendar = CalDAVCalendar.from_settings(resolver_settings)
    cold = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    collections = len(cold.collections_searched)
    assert cold.requests == len(sent)
    # principal and home set asked together on the account's URL
    assert b"current-user-principal" in sent[0][2] and b"calendar-home-set" in sent[0][2]
    reports = [body for method, _path, body in sent if method == "REPORT"]
    assert all(b"sync-collection" in body for body in reports[::2 if live.name == "xandikos" else 1])
    # Every sync of a cold read starts from the empty token (the initial sync, RFC 6578 3.2).
    tokens = [etree.fromstring(body).findtext("{DAV:}sync-token") for body in reports if b"sync-collection" in body]
    assert len(tokens) == collections and not any(tokens)
    if live.name == "radicale":
        # The principal is the home: its Depth 1 answer is the listing; the
        # initial sync brings every member's data: one REPORT per collection.
        assert cold.requests == 2 + collections
    else:
        # Xandikos: principal, home, listing; its sync lists members without data,
        # so one calendar-multiget of the listed members follows (both kinds: the
        # other kind's cold read then needs its sync only), and the reader stops
        # asking this server's initial syncs for data after the first.
        assert cold.requests == 3 + 2 * collections
        assert all(b"calendar-multiget" in body for body in reports[1::2])
        syncs = [body for body in reports if b"sync-collection" in body]
        assert b"calendar-data" in syncs[0] and not any(b"calendar-data" in body for body in syncs[1:])
        sent.clear()
        events = calendar.fetch(kind=Kind.EVENT, collection_ids=None)
        # The events came with the tasks' multiget: the home's listing and one sync per collection.
        assert events.requests == 1 + collections, [(m, p) for m, p, _b in sent]
    sent.clear()
    warm = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    # The remembered home's listing, then one sync-collection per collection.
    assert warm.requests == 1 + collections
    assert warm.items == cold.items

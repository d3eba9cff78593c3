"""The cold read asks the server for the least work: counted round trips on Radicale and Xandikos."""
from __future__ import annotations

import pytest
from lxml import etree

from resolver.calendars import caldav_from_settings
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


def test_cold_read__discovery_combined_then_token_and_query_per_collection(live, sent) -> None:
    calendar = caldav_from_settings(settings=resolver_settings)
    cold = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    collections = len(cold.collections_searched)
    assert cold.requests == len(sent)
    # principal and home set asked together on the account's URL
    assert b"current-user-principal" in sent[0][2] and b"calendar-home-set" in sent[0][2]
    # Per collection: its sync-token property (Depth 0), then the kind's calendar-query
    # with the data, after the token; no initial sync-collection.
    per_collection = sent[-2 * collections:]
    for (method, path, body), (next_method, next_path, next_body) in zip(per_collection[::2], per_collection[1::2]):
        assert method == "PROPFIND" and b"sync-token" in body
        assert next_method == "REPORT" and next_path == path
        assert b"calendar-query" in next_body and b"calendar-data" in next_body and b"VTODO" in next_body
    assert not any(b"sync-collection" in body for _method, _path, body in sent)
    # Radicale's principal is the home: its Depth 1 answer is the listing (2 round
    # trips of discovery); Xandikos: principal, home, listing.
    assert cold.requests == (2 if live.name == "radicale" else 3) + 2 * collections
    sent.clear()
    warm = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    # The remembered home's listing, then one sync-collection per collection, from the token.
    assert warm.requests == 1 + collections
    syncs = [body for method, _path, body in sent if method == "REPORT"]
    assert len(syncs) == collections and all(b"sync-collection" in body for body in syncs)
    assert all(etree.fromstring(body).findtext("{DAV:}sync-token") for body in syncs)
    assert warm.items == cold.items
    sent.clear()
    events = calendar.fetch(kind=Kind.EVENT, collection_ids=None)
    # The other kind's first read: its own token and calendar-query per collection.
    assert events.requests == 1 + 2 * collections, [(m, p) for m, p, _b in sent]

"""The cold read asks the server for the least work: counted round trips on Radicale and Xandikos."""
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


def test_cold_read__discovery_combined_then_token_and_query_per_collection(live, sent) -> None:
    calendar = CalDAVCalendar.from_settings(resolver_settings)
    cold = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    collections = len(cold.collections_searched)
    assert cold.requests == len(sent)
    # principal and home set asked together on the account's URL
    assert b"current-user-principal" in sent[0][2] and b"calendar-home-set" in sent[0][2]
    token_asks = [(method, path) for method, path, body in sent if method == "PROPFIND" and b"sync-token" in body]
    # Asked of every collection where it is a URI; of the first only where it is not.
    assert len(token_asks) == (collections if live.name == "radicale" else 1)
    if live.name == "radicale":
        # Its sync-token property is a URI: per collection that token (Depth 0),
        # then the kind's calendar-query with the data; no initial sync-collection.
        # The principal is the home: its Depth 1 answer is the listing.
        per_collection = sent[-2 * collections:]
        for (method, path, body), (next_method, next_path, next_body) in zip(per_collection[::2],
                                                                             per_collection[1::2]):
            assert method == "PROPFIND" and b"sync-token" in body
            assert next_method == "REPORT" and next_path == path
            assert b"calendar-query" in next_body and b"calendar-data" in next_body and b"VTODO" in next_body
        assert not any(b"sync-collection" in body for _method, _path, body in sent)
        assert cold.requests == 2 + 2 * collections
    else:
        # Xandikos: principal, home, listing; its sync-token property is not a URI,
        # so the initial sync gives the token. Its sync lists members without data,
        # so one calendar-multiget of the listed members follows (both kinds: the
        # other kind's cold read then needs its sync only), and the reader stops
        # asking this server's initial syncs for data after the first.
        reports = [body for method, _path, body in sent if method == "REPORT"]
        tokens = [etree.fromstring(body).findtext("{DAV:}sync-token") for body in reports
                  if b"sync-collection" in body]
        assert len(tokens) == collections and not any(tokens)
        assert cold.requests == 3 + 1 + 2 * collections
        assert all(b"calendar-multiget" in body for body in reports[1::2])
        syncs = [body for body in reports if b"sync-collection" in body]
        assert b"calendar-data" in syncs[0] and not any(b"calendar-data" in body for body in syncs[1:])
    sent.clear()
    warm = calendar.fetch(kind=Kind.TASK, collection_ids=None)
    # The remembered home's listing, then per collection its CS:getctag (first seen now:
    # not yet a witness, ctags.Ctags.fields) and one sync-collection from the token.
    assert warm.requests == 1 + 2 * collections
    ctags = [body for method, _path, body in sent if method == "PROPFIND" and b"getctag" in body]
    assert len(ctags) == collections
    syncs = [body for method, _path, body in sent if method == "REPORT"]
    assert len(syncs) == collections and all(b"sync-collection" in body for body in syncs)
    assert all(etree.fromstring(body).findtext("{DAV:}sync-token") for body in syncs)
    assert warm.items == cold.items
    sent.clear()
    events = calendar.fetch(kind=Kind.EVENT, collection_ids=None)
    if live.name == "radicale":
        # The other kind's first read: its own token and calendar-query per collection.
        assert events.requests == 1 + 2 * collections, [(m, p) for m, p, _b in sent]
    else:
        # The events came with the tasks' multiget: the listing and one initial sync per
        # collection (the token property is not asked again).
        assert events.requests == 1 + collections, [(m, p) for m, p, _b in sent]
        assert not any(b"calendar-multiget" in body or b"calendar-query" in body for _m, _p, body in sent)

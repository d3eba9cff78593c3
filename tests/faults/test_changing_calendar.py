"""The calendar changes between two requests: every answer is the server's current state.

Someone else edits, deletes, closes or duplicates an item between two
resolutions. The second resolution must see the change, and every ETag it
returns must be the one the server holds at that moment, as a fresh PROPFIND
and a fresh calendar-multiget REPORT report it. Writes go only to `faults-*`
collections created here, on the faults tests' own Radicale.
"""
from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

import pytest
import requests
from lxml import etree

from lifeproject.seeding import Spec, client, to_ical
from resolver import services
from resolver.domain.items import Kind, derive_item_id
from tests.faults.conftest import post_resolve, run_command
from tests.support.fault_proxy import FaultyRadicale
from tests.support.resolving import resolve_outcome

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

NOW = datetime.now(timezone.utc).replace(microsecond=0)
DAY = timedelta(days=1)
DAV = "{DAV:}"
_numbers = itertools.count(1)


class Other:
    """Someone else, writing to the calendar between our requests."""

    def __init__(self, server: FaultyRadicale, collection_id: str) -> None:
        self.server = server
        self.collection_id = collection_id
        self.session = requests.Session()
        self.session.auth = (server.username, server.password)
        principal = client(server.url, server.username, server.password).principal()
        principal.make_calendar(name=collection_id, cal_id=collection_id)

    @property
    def collection_url(self) -> str:
        return f"{self.server.url}{self.server.username}/{self.collection_id}/"

    def href(self, uid: str) -> str:
        return f"{self.server.collection_path(self.collection_id)}{uid}.ics"

    def put(self, spec: Spec) -> None:
        response = self.session.put(f"{self.collection_url}{spec.uid}.ics", data=to_ical(spec).encode("utf-8"),
                                    headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=10)
        assert response.status_code in (201, 204), response.status_code

    def delete(self, uid: str) -> None:
        response = self.session.delete(f"{self.collection_url}{uid}.ics", timeout=10)
        assert response.status_code in (200, 204), response.status_code

    def propfind_etags(self) -> dict[str, str]:
        """href -> getetag, from a fresh Depth 1 PROPFIND of the collection."""
        body = b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>'
        response = self.session.request("PROPFIND", self.collection_url, data=body, timeout=10,
                                        headers={"Depth": "1", "Content-Type": "application/xml"})
        assert response.status_code == 207
        return _etags(response.content)

    def multiget_etags(self, uids: list[str]) -> dict[str, str]:
        """href -> getetag, from a fresh calendar-multiget REPORT of the given items."""
        hrefs = "".join(f"<D:href>{self.href(uid)}</D:href>" for uid in uids)
        body = ('<?xml version="1.0"?><C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                f"<D:prop><D:getetag/></D:prop>{hrefs}</C:calendar-multiget>").encode("utf-8")
        response = self.session.request("REPORT", self.collection_url, data=body, timeout=10,
                                        headers={"Depth": "1", "Content-Type": "application/xml"})
        assert response.status_code == 207
        return _etags(response.content)

    def current_etag(self, uid: str) -> str:
        """The server's ETag for the item now; both ways of asking must agree."""
        by_propfind = self.propfind_etags()[self.href(uid)]
        assert self.multiget_etags([uid])[self.href(uid)] == by_propfind
        return by_propfind


def _etags(multistatus: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for response in etree.fromstring(multistatus).iter(f"{DAV}response"):
        href = response.findtext(f"{DAV}href")
        etag = response.findtext(f".//{DAV}getetag")
        if href and etag:
            found[href] = etag
    return found


@pytest.fixture
def other(faulty_live: FaultyRadicale) -> Iterator[Other]:
    yield Other(faulty_live, f"faults-change-{next(_numbers)}")


def resolve(other: Other, text: str, kind: str = "task", *, door: str = "service",
            collection_ids: list[str] | None = None, api: Any = None) -> dict[str, Any]:
    """Resolve through one door and return the envelope; checks the resolver wrote nothing."""
    cids = collection_ids or [other.collection_id]
    other.server.forget_requests()
    if door == "service":
        outcome = resolve_outcome(text=text, kind=kind, collection_ids=cids, door="test")
        envelope = services.envelope_for(outcome)
    elif door == "api":
        response = post_resolve(api, {"text": text, "kind": kind, "collection_ids": cids})
        assert response.status_code == 200
        envelope = response.json()
    else:
        args = [arg for cid in cids for arg in ("--collection", cid)]
        result = run_command("--text", text, "--kind", kind, *args, "--json")
        envelope = result.envelope
        assert result.code == (0 if envelope["status"] == "ok" else 3)
    assert other.server.writes() == []
    return envelope


def candidates(envelope: dict[str, Any]) -> dict[str, str]:
    """uid -> etag of the clarification's candidates."""
    return {c["uid"]: c["etag"] for c in envelope["data"]["candidates"]}


@pytest.mark.parametrize("door", ["service", "api", "command"])
def test_change__edited_between_requests(other: Other, api, door: str) -> None:
    """An edit changes the ETag; the resolver returns the new one, for the same item ID."""
    other.put(Spec("c-alpha", "Alpha task", when=NOW + 2 * DAY))
    first = resolve(other, "Alpha task", door=door, api=api)
    assert first["status"] == "ok" and first["data"]["etag"] == other.current_etag("c-alpha")

    other.put(Spec("c-alpha", "Alpha task", when=NOW + 5 * DAY, extra={"description": "moved by someone"}))
    second = resolve(other, "Alpha task", door=door, api=api)
    assert second["status"] == "ok"
    assert second["data"]["item_id"] == first["data"]["item_id"]
    assert second["data"]["etag"] != first["data"]["etag"]
    assert second["data"]["etag"] == other.current_etag("c-alpha")


def test_change__every_edit_is_seen(other: Other) -> None:
    """Five edits in a row: each resolution returns the ETag the server holds right then."""
    seen = set()
    for round_ in range(5):
        other.put(Spec("c-alpha", "Alpha task", when=NOW + (round_ + 1) * DAY))
        envelope = resolve(other, "Alpha task")
        assert envelope["data"]["etag"] == other.current_etag("c-alpha")
        seen.add(envelope["data"]["etag"])
    assert len(seen) == 5


def test_change__retitled_between_requests(other: Other) -> None:
    other.put(Spec("c-alpha", "Alpha task"))
    item_id = resolve(other, "Alpha task")["data"]["item_id"]
    other.put(Spec("c-alpha", "Renamed errand"))
    old = resolve(other, "Alpha task")
    assert old["status"] == "needs_clarification" and old["data"]["candidates"] == []
    new = resolve(other, "Renamed errand")
    assert new["data"]["item_id"] == item_id and new["data"]["etag"] == other.current_etag("c-alpha")


def test_change__deleted_between_requests(other: Other) -> None:
    """A deleted item no longer resolves, by title, UID or item ID."""
    other.put(Spec("c-alpha", "Alpha task"))
    other.put(Spec("c-beta", "Beta chore"))
    first = resolve(other, "Alpha task")
    assert first["status"] == "ok"
    other.delete("c-alpha")
    for text in ("Alpha task", "c-alpha", first["data"]["item_id"]):
        envelope = resolve(other, text)
        assert envelope["status"] == "needs_clarification"
        assert "c-alpha" not in candidates(envelope)
    assert resolve(other, "Beta chore")["data"]["etag"] == other.current_etag("c-beta")


def test_change__closed_between_requests(other: Other) -> None:
    """Completed by someone else: the task is no longer live."""
    other.put(Spec("c-alpha", "Alpha task"))
    assert resolve(other, "Alpha task")["status"] == "ok"
    other.put(Spec("c-alpha", "Alpha task", status="COMPLETED", completed=NOW))
    envelope = resolve(other, "Alpha task")
    assert envelope["status"] == "needs_clarification" and envelope["data"]["candidates"] == []


def test_change__event_moved_out_of_the_window(other: Other) -> None:
    other.put(Spec("c-event", "Planning lunch", kind="event", when=NOW + 3 * DAY))
    first = resolve(other, "Planning lunch", "event")
    assert first["status"] == "ok" and first["data"]["etag"] == other.current_etag("c-event")
    other.put(Spec("c-event", "Planning lunch", kind="event", when=NOW + 200 * DAY))
    assert resolve(other, "Planning lunch", "event")["data"]["candidates"] == []
    other.put(Spec("c-event", "Planning lunch", kind="event", when=NOW + 4 * DAY))
    back = resolve(other, "Planning lunch", "event")
    assert back["status"] == "ok" and back["data"]["etag"] == other.current_etag("c-event")


@pytest.mark.parametrize("door", ["service", "api", "command"])
def test_change__duplicate_title_appears(other: Other, api, door: str) -> None:
    """The first request resolves; after a same-titled item appears, the second clarifies."""
    other.put(Spec("c-alpha", "Alpha task"))
    first = resolve(other, "Alpha task", door=door, api=api)
    assert first["status"] == "ok" and first["data"]["uid"] == "c-alpha"

    other.put(Spec("c-alpha-2", "  ALPHA TASK "))
    second = resolve(other, "Alpha task", door=door, api=api)
    assert second["status"] == "needs_clarification"
    assert second["data"]["method"] == "deterministic"
    assert candidates(second) == {uid: other.current_etag(uid) for uid in ("c-alpha", "c-alpha-2")}
    options = {option["value"] for option in second["data"]["questions"][0]["options"]}
    assert options == {c["item_id"] for c in second["data"]["candidates"]}
    # The original item keeps its ID and ETag: nothing about it changed.
    assert candidates(second)["c-alpha"] == first["data"]["etag"]


def test_change__duplicate_in_another_collection(faulty_live: FaultyRadicale, other: Other) -> None:
    """A same-titled item in a second collection: clarifies across both, resolves within one."""
    second_collection = Other(faulty_live, f"faults-change-{next(_numbers)}")
    other.put(Spec("c-alpha", "Alpha task"))
    both = [other.collection_id, second_collection.collection_id]
    assert resolve(other, "Alpha task", collection_ids=both)["status"] == "ok"
    second_collection.put(Spec("c-alpha", "Alpha task"))  # the same UID, elsewhere
    envelope = resolve(other, "Alpha task", collection_ids=both)
    assert envelope["status"] == "needs_clarification"
    found = {(c["collection_id"], c["item_id"]) for c in envelope["data"]["candidates"]}
    assert found == {
        (cid, derive_item_id(faulty_live.collection_path(cid), "c-alpha")) for cid in both
    }
    alone = resolve(other, "Alpha task", collection_ids=[second_collection.collection_id])
    assert alone["status"] == "ok"
    assert alone["data"]["etag"] == second_collection.current_etag("c-alpha")


def test_change__fetch_reflects_the_server_exactly(faulty_live: FaultyRadicale, other: Other) -> None:
    """After a burst of changes, every live item's ETag equals the server's, and no stale item remains."""
    for n in range(6):
        other.put(Spec(f"c-item-{n}", f"Burst item {n}"))
    other.delete("c-item-2")
    other.put(Spec("c-item-3", "Burst item 3", status="CANCELLED"))
    other.put(Spec("c-item-4", "Burst item four"))
    calendar = services.calendar_from_settings()
    fetched = calendar.fetch(kind=Kind.TASK, collection_ids=[other.collection_id])
    server = other.propfind_etags()
    assert {item.uid for item in fetched.items} == {"c-item-0", "c-item-1", "c-item-4", "c-item-5"}
    for item in fetched.items:
        assert item.etag == server[other.href(item.uid)]

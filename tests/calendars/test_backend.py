"""resolver/calendars/backend.py: a backend written from docs/calendars.md ("Adding a calendar backend") alone.

It is checked at start-up (resolver.E012 names what a class lacks) and read
by a door like the CalDAV backend.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone, tzinfo
from typing import Any, Sequence

import pytest

from resolver.checks import check_calendar_backend
from resolver.domain.errors import CollectionNotFound
from resolver.domain.items import Collection, Kind, make_item
from resolver.domain.ports import FetchResult
from tests.support.commands import run_resolve

pytestmark = pytest.mark.django_db


class NotebookCalendar:
    """Tasks from a notebook kept in the settings' URL field (a made-up source)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    @classmethod
    def from_settings(cls, settings: Any) -> NotebookCalendar:
        return cls(owner=settings.CALDAV_USERNAME)

    def collections(self) -> Sequence[Collection]:
        return [Collection(collection_id="notebook", url_path="/notebook/", display_name="Notebook")]

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: tzinfo) -> FetchResult:
        unknown = [cid for cid in collection_ids or () if cid != "notebook"]
        if unknown:
            raise CollectionNotFound("Unknown collection ID.", details={"collection_ids": unknown})
        items = [make_item(collection_path="/notebook/", uid="page-1", title="Oil the bicycle chain", etag='"1"',
                           kind=Kind.TASK, href="/notebook/page-1.ics")] if kind is Kind.TASK else []
        return FetchResult(items=tuple(items), collections_searched=("notebook",),
                           read_at=datetime.now(timezone.utc))


class WithoutFetch:
    """A backend that forgot fetch()."""

    @classmethod
    def from_settings(cls, settings: Any) -> WithoutFetch:
        return cls()

    def collections(self) -> Sequence[Collection]:
        return []


def test_backend_contract__a_backend_from_the_docs_passes_the_check_and_is_read(settings: Any) -> None:
    settings.RESOLVER = {"CALENDAR_BACKEND": f"{__name__}.NotebookCalendar", "CALDAV_USERNAME": "ann"}
    assert check_calendar_backend() == []
    code, out, _ = run_resolve("--text", "oil the bicycle chain", "--kind", "task", "--json")
    assert code == 0 and json.loads(out)["data"]["href"] == "/notebook/page-1.ics"


def test_backend_contract__the_check_names_what_a_class_lacks(settings: Any) -> None:
    settings.RESOLVER = {"CALENDAR_BACKEND": f"{__name__}.WithoutFetch"}
    (error,) = check_calendar_backend()
    assert error.id == "resolver.E012" and "WithoutFetch" in error.msg and "fetch()" in error.msg


def test_backend_contract__the_default_and_a_factory_with_its_return_annotation_pass(settings: Any) -> None:
    settings.RESOLVER = {"CALENDAR_BACKEND": "resolver.calendars.caldav.CalDAVCalendar"}
    assert check_calendar_backend() == []
    settings.RESOLVER = {"CALENDAR_BACKEND": "tests.support.memory_backend.MemoryBackend"}
    assert check_calendar_backend() == []

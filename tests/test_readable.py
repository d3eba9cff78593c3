"""resolver/readable.py: the one way every door shows a candidate's date to people."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from resolver import readable
from resolver.domain.items import Kind, Occurrence, make_item
from resolver.envelope import iso
from resolver.readable import Moment, candidate_label, candidate_when, item_when, readable_date

UTC = timezone.utc
DUE = datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
SERIES_START = datetime(2025, 1, 6, 10, 0, tzinfo=UTC)
OFFERED = Occurrence(start=datetime(2026, 3, 16, 10, 0, tzinfo=UTC), end=datetime(2026, 3, 16, 11, 0, tzinfo=UTC),
                     recurrence_id="20260316T100000Z")
SINGLE = Occurrence(start=OFFERED.start, end=OFFERED.end, recurrence_id=None)


def _task(due=DUE):
    return make_item(collection_path="/u/work/", uid="t", title="Team offsite", etag='"1"', kind=Kind.TASK, due=due)


def _event():
    return make_item(collection_path="/u/work/", uid="e", title="Weekly sync", etag='"1"', kind=Kind.EVENT,
                     start=SERIES_START)


def _as_candidate(item, occurrence=None):
    """The envelope's shape of the same facts (resolver/envelope.py item_dict)."""
    if item.kind is Kind.TASK:
        return {"title": item.title, "collection_id": item.collection_id, "due": iso(item.due)}
    return {"title": item.title, "collection_id": item.collection_id, "start": iso(item.start),
            "occurrence": occurrence.as_dict() if occurrence else None}


@pytest.mark.parametrize(("value", "shown"), [
    (datetime(2026, 5, 5, 9, 0, tzinfo=UTC), "Tue 05 May 2026, 09:00 UTC"),
    ("2026-05-05T09:00:00+00:00", "Tue 05 May 2026, 09:00 UTC"),
    (datetime(2026, 5, 5, 9, 0), "Tue 05 May 2026, 09:00"),
    (date(2026, 5, 5), "Tue 05 May 2026"),
    ("2026-05-05", "Tue 05 May 2026"),
    ("not a date", "not a date"),
    (None, "None"),
])
def test_readable_date__typed_or_iso(value, shown):
    assert readable_date(value) == shown


@pytest.mark.parametrize(("item", "occurrence", "next", "moment"), [
    (_task(), None, False, Moment.DUE),
    (_event(), None, False, Moment.STARTS),
    (_event(), SINGLE, True, Moment.STARTS),
    (_event(), OFFERED, True, Moment.NEXT),
    (_event(), OFFERED, False, Moment.OCCURRENCE),
])
def test_when__typed_and_envelope_facts_agree(item, occurrence, next, moment):
    """The page reads typed items, the MCP door and the command the envelope: the same date and words."""
    typed = item_when(item, occurrence, next=next)
    from_envelope = candidate_when(_as_candidate(item, occurrence), next=next)
    assert typed.moment is from_envelope.moment is moment
    assert typed.readable == from_envelope.readable and typed.iso == from_envelope.iso


def test_when__nothing_dated_is_none():
    assert item_when(_task(due=None)) is None
    assert candidate_when({"due": None}) is None
    assert candidate_when({"occurrence": "broken", "start": None}) is None


def test_when__the_occurrence_comes_before_the_series_start():
    found = candidate_when(_as_candidate(_event(), OFFERED), next=True)
    assert (found.label, found.inline) == ("Next occurrence", "next Mon 16 Mar 2026, 10:00 UTC")
    assert found.iso == OFFERED.start.isoformat()


def test_candidate_label__one_line_with_the_suggestion_marked():
    candidate = {**_as_candidate(_task()), "suggested": True}
    assert candidate_label(candidate) == "Team offsite (work, due Sat 14 Mar 2026, 09:00 UTC, suggested)"
    assert candidate_label({"title": " ", "collection_id": None}) == "(untitled) (?)"


def test_readable__imports_no_door():
    """A service for every door: it imports none of them, and nothing of Django."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(readable.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.split(".")[0] == "django"}
    assert not {m for m in imported if m and m.startswith(("resolver.web", "resolver.mcp", "resolver.api",
                                                           "resolver.management"))}

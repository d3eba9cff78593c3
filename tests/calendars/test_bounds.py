"""Bounded work per resource: each hostile resource is read within its bounds, or skipped with a reason."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from resolver.calendars import ical, recurrence
from resolver.calendars.ical import Limits, UnparseableResource, live_items, read_resource, window_from
from resolver.domain.items import MAX_TITLE_CHARS, TITLE_CUT_MARKER, TITLE_SCORED_CHARS, Kind, make_item
from resolver.domain.matching import exact_matches
from tests.support.hostile_ics import HOSTILE

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
WINDOW = window_from(NOW, 90)


def _read(text: str, limits: Limits = ical.DEFAULT_LIMITS):
    return live_items(text, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=WINDOW, limits=limits)


class _CountingMeter(recurrence._Meter):
    """The real meter, recording the largest number of steps any one series took."""

    most = 0

    def __init__(self, budget: int) -> None:
        super().__init__(budget)
        self.budget = budget

    def step(self) -> None:
        try:
            super().step()
        finally:
            _CountingMeter.most = max(_CountingMeter.most, self.budget - self.left)


@pytest.fixture
def steps(monkeypatch):
    monkeypatch.setattr(recurrence, "_Meter", _CountingMeter)
    _CountingMeter.most = 0
    return _CountingMeter


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_each_hostile_resource_is_read_within_its_bounds_or_skipped(name, steps):
    build, uid, expected = HOSTILE[name]
    text = build(NOW)
    if expected == "live":
        [item] = _read(text)
        assert item.uid == uid
        assert item.occurrences and item.occurrences[0].end >= NOW
        assert item.occurrences[0].start < WINDOW.end
    else:
        with pytest.raises(UnparseableResource) as raised:
            _read(text)
        assert raised.value.reason == expected
    # Never more work than the budget (plus the one step that found it spent).
    assert steps.most <= recurrence.DEFAULT_BUDGET + 1


def test_a_secondly_series_from_years_ago_starts_now():
    [item] = _read(HOSTILE["secondly_from_2020"][0](NOW))
    starts = [o.start for o in item.occurrences[:3]]
    assert starts == [NOW, NOW + timedelta(seconds=1), NOW + timedelta(seconds=2)]
    # The instance keeps its place in the series: its RECURRENCE-ID is its own start.
    assert item.occurrences[0].recurrence_id == NOW.isoformat()


def test_the_budget_is_the_setting():
    text = HOSTILE["minutely_last_week"][0](NOW)
    assert _read(text)
    # A budget too small to reach today from the moved start gives up instead.
    with pytest.raises(UnparseableResource) as raised:
        _read(text.replace("FREQ=MINUTELY", "FREQ=MINUTELY;BYMONTH=2,3"), Limits(recurrence_budget=50))
    assert raised.value.reason == "recurrence_too_complex"


def test_a_sparse_rule_is_still_found():
    # Every 29 February: the next one is years away, beyond the window, and found so.
    text = HOSTILE["impossible_rule"][0](NOW).replace("BYMONTHDAY=30", "BYMONTHDAY=29")
    assert _read(text) == []
    text = text.replace("BYMONTH=2;BYMONTHDAY=29", "BYMONTH=6;BYMONTHDAY=3")
    [item] = _read(text)
    assert item.occurrences[0].start == datetime(2026, 6, 3, 9, tzinfo=timezone.utc)


def test_count_moves_along_with_the_start():
    base = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:c\r\nSUMMARY:C\r\n"
            "DTSTART:20260501T120000Z\r\nRRULE:FREQ=HOURLY;COUNT={count}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    # The n-th occurrence is n - 1 hours after 1 May 12:00: NOW (1 June 12:00) is the 745th.
    assert _read(base.format(count=744)) == []
    [item] = _read(base.format(count=745))
    assert [o.start for o in item.occurrences] == [NOW]
    [item] = _read(base.format(count=746))
    assert [o.start for o in item.occurrences] == [NOW, NOW + timedelta(hours=1)]


@pytest.mark.parametrize("limits, text, reason", [
    (Limits(max_bytes=1000), HOSTILE["long_title"][0](NOW), "resource_too_large"),
    (Limits(max_overrides=10), HOSTILE["overrides_3000"][0](NOW), "too_many_overrides"),
    (Limits(max_dates=10), HOSTILE["rdate_40000"][0](NOW), "too_many_dates"),
    (Limits(max_depth=2), HOSTILE["nested_alarms"][0](NOW), "too_many_components"),
])
def test_each_bound_is_its_setting(limits, text, reason):
    with pytest.raises(UnparseableResource) as raised:
        read_resource(text, limits=limits)
    assert raised.value.reason == reason


def test_size_is_counted_in_bytes():
    text = HOSTILE["minutely_last_week"][0](NOW).replace("Hostile minutely recent", "Ä" * 800)
    assert len(text) < 1500 < len(text.encode("utf-8"))
    with pytest.raises(UnparseableResource):
        read_resource(text, limits=Limits(max_bytes=1500))


def test_a_long_title_is_cut_when_read_and_marked():
    [item] = _read(HOSTILE["long_title"][0](NOW))
    whole = HOSTILE["long_title"][0](NOW).split("SUMMARY:")[1].split("\r\n")[0]
    assert len(whole) > 200_000
    assert item.title == whole[:MAX_TITLE_CHARS] + TITLE_CUT_MARKER and item.title_truncated
    assert len(item.title_key) == MAX_TITLE_CHARS + 1
    # Matching scores the words of the first TITLE_SCORED_CHARS characters only (items.scored_part).
    assert " ".join(item.title_tokens) == "hostile long title" + " padding words" * 10
    # Neither its first 500 characters nor the cut title as shown is an exact match: a cut title is not the title.
    assert exact_matches(item.title[:MAX_TITLE_CHARS], [item]) == []
    assert exact_matches(item.title, [item]) == []
    assert exact_matches(item.uid, [item]) == [item] and exact_matches(item.item_id, [item]) == [item]
    short = make_item(collection_path="/u/c/", uid="s", title="  Short title ", etag='"e"', kind=Kind.TASK)
    assert exact_matches("short TITLE", [short]) == [short] and not short.title_truncated


def test_the_parse_memo_keeps_the_cut_title_only():
    facts = read_resource(HOSTILE["long_title"][0](NOW))
    [component] = facts.components
    assert len(component.title) == MAX_TITLE_CHARS + 1 and component.title.endswith(TITLE_CUT_MARKER)


def test_a_title_at_the_bound_is_kept_whole_and_one_more_character_is_cut():
    at = "x" * (MAX_TITLE_CHARS - 1) + "y"
    kept = make_item(collection_path="/u/c/", uid="a", title=at, etag='"e"', kind=Kind.TASK)
    assert kept.title == at and not kept.title_truncated and exact_matches(at.upper(), [kept]) == [kept]
    over = make_item(collection_path="/u/c/", uid="b", title=at + "z", etag='"e"', kind=Kind.TASK)
    assert over.title == at + TITLE_CUT_MARKER and over.title_truncated
    # Cutting is idempotent: a cut title given again (the parse memo's) is the same item.
    again = make_item(collection_path="/u/c/", uid="b", title=over.title, etag='"e"', kind=Kind.TASK)
    assert again == over and again.title_truncated and again.title_key == over.title_key
    # The marker's NFKC form ("...") typed after the cut text is no exact match either.
    assert exact_matches(at + "...", [over]) == [] and exact_matches(at, [over]) == []


def test_a_uid_over_its_bound_skips_the_resource_and_one_at_it_is_read():
    with pytest.raises(UnparseableResource) as raised:
        _read(HOSTILE["long_uid"][0](NOW))
    assert raised.value.reason == "uid_too_long"
    at = HOSTILE["minutely_last_week"][0](NOW)
    uid = at.split("UID:")[1].split("\r\n")[0]
    longest = "u" * ical.MAX_UID_CHARS
    [item] = _read(at.replace(f"UID:{uid}", f"UID:{longest}"))
    assert item.uid == longest
    with pytest.raises(UnparseableResource):
        _read(at.replace(f"UID:{uid}", f"UID:{longest}u"))

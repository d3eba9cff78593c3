"""Property: the bounded, jump-ahead reader agrees with plain expansion from DTSTART.

Random RRULEs (FREQ, INTERVAL, BY* parts, COUNT, UNTIL) and DTSTARTs, as
whole resources through `live_items`. Whenever plain dateutil expansion from
DTSTART finishes within a generous bound, the reader finds the same liveness
and the same first live occurrence; when the reader gives up
(recurrence_too_complex), plain expansion needed more steps than the budget.
The reader never takes more steps than its budget.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from dateutil import rrule as du
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from resolver.calendars import recurrence
from resolver.calendars.ical import UnparseableResource, live_items, window_from
from resolver.domain.items import Kind

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
WINDOW = window_from(NOW, 90)
GENEROUS = 400_000
FREQS = ["SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def _subset(values, most=3):
    return st.lists(st.sampled_from(values), min_size=1, max_size=most, unique=True)


@st.composite
def rules(draw):
    freq = draw(st.sampled_from(FREQS))
    parts = [f"FREQ={freq}"]
    if draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 40))}")
    if draw(st.integers(0, 3)) == 0:
        parts.append(f"BYMONTH={','.join(map(str, draw(_subset(list(range(1, 13))))))}")
    if draw(st.integers(0, 3)) == 0:
        days = list(range(-31, 0)) + list(range(1, 32))
        parts.append(f"BYMONTHDAY={','.join(map(str, draw(_subset(days))))}")
    if draw(st.integers(0, 2)) == 0:
        if freq in ("MONTHLY", "YEARLY") and draw(st.booleans()):
            ordinal = draw(st.sampled_from([-2, -1, 1, 2, 3, 4, 5]))
            parts.append(f"BYDAY={ordinal}{draw(st.sampled_from(DAYS))}")
        else:
            parts.append(f"BYDAY={','.join(draw(_subset(DAYS)))}")
    if draw(st.integers(0, 4)) == 0:
        parts.append(f"BYHOUR={','.join(map(str, draw(_subset(list(range(24))))))}")
    if draw(st.integers(0, 5)) == 0:
        parts.append(f"BYMINUTE={','.join(map(str, draw(_subset(list(range(60))))))}")
    if draw(st.integers(0, 6)) == 0:
        parts.append(f"BYYEARDAY={','.join(map(str, draw(_subset([1, 32, 60, 100, 200, 365, 366, -1]))))}")
    if draw(st.integers(0, 6)) == 0:
        parts.append(f"BYSETPOS={draw(st.sampled_from([1, -1, 2]))}")
    ending = draw(st.integers(0, 3))
    if ending == 0:
        parts.append(f"COUNT={draw(st.integers(1, 3000))}")
    elif ending == 1:
        until = NOW + timedelta(seconds=draw(st.integers(-86400 * 400, 86400 * 120)))
        parts.append(f"UNTIL={until.strftime('%Y%m%dT%H%M%SZ')}")
    return ";".join(parts)


starts_ = st.one_of(
    st.integers(-3600 * 6, 3600),            # hours around now: dense rules stay expandable
    st.integers(-86400 * 3, 86400),          # days
    st.integers(-86400 * 365 * 7, 86400 * 60),  # years back
).map(lambda seconds: (NOW + timedelta(seconds=seconds)).replace(microsecond=0))


def _text(rule: str, start: datetime, minutes: int) -> str:
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    end = (start + timedelta(minutes=minutes)).strftime("%Y%m%dT%H%M%SZ")
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:p\r\nSUMMARY:P\r\n"
            f"DTSTART:{stamp}\r\nDTEND:{end}\r\nRRULE:{rule}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def _live(start: datetime, length: timedelta) -> bool:
    if length == timedelta(0):
        return WINDOW.start <= start < WINDOW.end
    return start < WINDOW.end and start + length > WINDOW.start


def _plain(rule: str, start: datetime, length: timedelta) -> tuple[datetime | None, int] | None:
    """(first live start, steps taken) by expansion from DTSTART; None when over the generous bound."""
    kwargs = dict(recurrence.parse_rule(rule))
    if "until" in kwargs:
        kwargs["until"] = recurrence._until(kwargs["until"], start, timezone.utc)
    candidates = [start] if _live(start, length) else []  # DTSTART is always an instance
    meter = recurrence._Meter(GENEROUS)
    try:
        expansion = du.rrule(dtstart=start, cache=False, **kwargs)
    except ValueError as err:
        assert "empty set" in str(err)
        return (candidates[0] if candidates else None), 0
    recurrence._watch(expansion, meter)
    try:
        for value in expansion:
            meter.step()
            if value >= WINDOW.end:
                break
            if _live(value, length):
                candidates.append(value)
                break
    except recurrence.RecurrenceTooComplex:
        return None
    except (ValueError, OverflowError):
        pass  # ran past the year 9999
    return (min(candidates) if candidates else None), GENEROUS - meter.left


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules(), start=starts_, minutes=st.sampled_from([0, 30, 1440, 60 * 24 * 9]))
def test_reader_agrees_with_plain_expansion(rule: str, start: datetime, minutes: int) -> None:
    length = timedelta(minutes=minutes)
    plain = _plain(rule, start, length)
    assume(plain is not None)
    expected, plain_steps = plain
    text = _text(rule, start, minutes)
    try:
        found = live_items(text, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=WINDOW)
    except UnparseableResource as err:
        event("too complex")
        assert err.reason == "recurrence_too_complex", (rule, start, err.reason)
        assert plain_steps > recurrence.DEFAULT_BUDGET, (rule, start, plain_steps)
        return
    first = found[0].occurrences[0].start if found else None
    event("live" if found else "not live")
    assert first == expected, (rule, start, minutes)
    if found:
        starts = [o.start for o in found[0].occurrences]
        assert starts == sorted(starts) and len(set(starts)) == len(starts)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=rules(), start=starts_)
def test_reader_never_exceeds_its_budget(rule: str, start: datetime) -> None:
    most = 0
    original = recurrence._Meter.step

    def step(self) -> None:
        nonlocal most
        try:
            original(self)
        finally:
            most = max(most, recurrence.DEFAULT_BUDGET - self.left)

    recurrence._Meter.step = step
    try:
        live_items(_text(rule, start, 30), kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=WINDOW)
    except UnparseableResource:
        pass
    finally:
        recurrence._Meter.step = original
    assert most <= recurrence.DEFAULT_BUDGET + 1

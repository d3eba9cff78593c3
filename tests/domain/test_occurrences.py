"""Time in the pipeline: occurrences, the title-plus-time rule, time-only references (no server)."""
from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from resolver.calendars.memory import MemoryCalendar
from resolver.domain.items import Kind, Method, Occurrence, make_item
from resolver.domain.pipeline import Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.requests import ResolveRequest
from resolver.judges.disabled import DisabledJudge

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=BERLIN)  # a Monday


def event(uid: str, title: str, starts: list[datetime], *, series: bool, hours: float = 1.0):
    occurrences = tuple(
        Occurrence(start=s, end=s + timedelta(hours=hours), recurrence_id=s.isoformat() if series else None)
        for s in starts)
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.EVENT,
                     start=occurrences[0].start, occurrences=occurrences, href=f"/u/home/{uid}.ics")


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2027, 1, day, hour, minute, tzinfo=BERLIN)


YOGA = event("yoga", "Yoga class", [at(d, 18) for d in (12, 14, 19, 21)], series=True)
BUDGET = event("budget", "Budget review", [at(14, 10)], series=False)
DESIGN = event("design", "Design review", [at(13, 10)], series=False)
OMAR = event("omar", "Call with Omar", [at(11, 16), at(12, 11)], series=True, hours=0.5)
DOUBLE = event("double", "Standup", [at(12, 9), at(12, 17)], series=True, hours=0.25)
EVENTS = [YOGA, BUDGET, DESIGN, OMAR, DOUBLE]
TASKS = [
    make_item(collection_path="/u/work/", uid="inv", title="Pay invoice", etag='"i"', kind=Kind.TASK,
              due=date(2027, 1, 12)),
    make_item(collection_path="/u/work/", uid="inv2", title="Pay invoice for hosting", etag='"j"', kind=Kind.TASK,
              due=date(2027, 2, 20)),
]


def run(text: str, kind: Kind = Kind.EVENT, items=None, time_zone: str = "Europe/Berlin"):
    calendar = MemoryCalendar(items=list(items if items is not None else EVENTS + TASKS))
    return resolve(request=ResolveRequest(text=text, kind=kind, time_zone=ZoneInfo(time_zone)), calendar=calendar,
                   judge=DisabledJudge(), policy=NoThresholds(), request_id="req_t", now=NOW)


def test_title_plus_time__one_occurrence_in_range_resolves_with_it():
    outcome = run("Yoga class tomorrow")
    assert outcome.status is Status.OK and outcome.method is Method.DETERMINISTIC
    assert outcome.item.uid == "yoga"
    occurrence = outcome.occurrences[outcome.item.item_id]
    assert occurrence.start == at(12, 18) and occurrence.recurrence_id == at(12, 18).isoformat()


def test_title_plus_time__several_occurrences_in_range_is_a_clarification():
    outcome = run("Standup tomorrow")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.candidates[0].uid == "double"


def test_title_plus_time__no_occurrence_in_range_is_a_clarification():
    outcome = run("Yoga class on Wednesday")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.candidates[0].uid == "yoga"
    # Outside the range it still is a candidate, with its next live occurrence.
    assert outcome.occurrences[YOGA.item_id].start == at(12, 18)


def test_time__in_range_ranks_above_out_of_range():
    outcome = run("Thursday's review")
    assert [c.uid for c in outcome.candidates][:2] == ["budget", "design"]
    outcome = run("review on Wednesday")
    assert [c.uid for c in outcome.candidates][:2] == ["design", "budget"]


def test_time__the_named_occurrence_of_a_series():
    outcome = run("yoga next Thursday")  # said on a Monday: the 14th
    assert outcome.candidates[0].uid == "yoga"
    assert outcome.occurrences[YOGA.item_id].start == at(14, 18)


def test_time__a_time_of_day_picks_the_occurrence():
    outcome = run("call with Omar at 4pm")
    assert outcome.status is Status.OK and outcome.item.uid == "omar"
    assert outcome.occurrences[OMAR.item_id].start == at(11, 16)


def test_time__only_a_time_matches_the_events_in_range():
    outcome = run("tomorrow")
    # By start: the standup at 9:00, Omar at 11:00, yoga at 18:00; nothing else is tomorrow.
    assert [c.uid for c in outcome.candidates] == ["double", "omar", "yoga"]
    assert outcome.occurrences[OMAR.item_id].start == at(12, 11)


def test_time__tasks_by_due_date():
    outcome = run("invoice due tomorrow", kind=Kind.TASK)
    assert outcome.candidates[0].uid == "inv"
    outcome = run("Pay invoice tomorrow", kind=Kind.TASK)
    assert outcome.status is Status.OK and outcome.item.uid == "inv"


def test_time__never_drops_an_item_only_because_of_time():
    outcome = run("budget review yesterday")
    assert "budget" in [c.uid for c in outcome.candidates]


def test_exact_title_wins_before_any_time_reading():
    friday = event("fri", "Friday drinks", [at(15, 18)], series=False)
    outcome = run("friday drinks", items=[friday, YOGA])
    assert outcome.status is Status.OK and outcome.item.uid == "fri"


def test_occurrence__every_event_candidate_and_the_resolved_event_carry_one():
    outcome = run("review")
    assert set(outcome.occurrences) == {c.item_id for c in outcome.candidates}
    resolved = run("Budget review")
    assert resolved.occurrences[BUDGET.item_id].recurrence_id is None


def test_time_zone__decides_the_day_named():
    # 09:00 in Berlin is 17:00 in Tokyo; "tomorrow" in Tokyo is the 12th there.
    outcome = run("Yoga class tomorrow", time_zone="Asia/Tokyo")
    # The 12th in Tokyo ends at 16:00 Berlin time, before the class at 18:00.
    assert outcome.status is Status.NEEDS_CLARIFICATION


def test_time__a_time_alone_names_the_next_occurrence_at_that_time():
    weekly = event("piano", "Piano lesson", [at(12, 10), at(13, 16), at(19, 10), at(20, 16)], series=True)
    outcome = run("piano lesson at 4pm", items=[weekly, YOGA])
    assert outcome.occurrences[weekly.item_id].start == at(13, 16)
    assert outcome.status is Status.NEEDS_CLARIFICATION  # two occurrences at 4pm: no single one named


def test_time__another_languages_time_where_the_request_names_none():
    """English is the default; "Yoga class jeudi" and "Yoga class am Donnerstag" are Thursday's class, the
    occurrence the person named, as "Yoga class on Thursday" is (timeexpr.find_time_expression_in_any)."""
    for text in ("Yoga class on Thursday", "Yoga class jeudi", "Yoga class am Donnerstag", "Yoga class el jueves"):
        outcome = run(text)
        assert outcome.status is Status.OK and outcome.method is Method.DETERMINISTIC, text
        assert outcome.occurrences[outcome.item.item_id].start == at(14, 18), text


def test_time__another_languages_reading_of_a_title_word_is_the_title_word():
    """German reads "morgen" as tomorrow; where a title holds the word ("Call Morgen", a name) it is that title's
    word: the task is offered by its words, where tomorrow would have offered what is due then."""
    morgen = make_item(collection_path="/u/work/", uid="morgen", title="Call Morgen", etag='"m"', kind=Kind.TASK,
                       due=date(2027, 1, 20))
    outcome = run("ring morgen", kind=Kind.TASK, items=[morgen, *TASKS])
    assert [c.uid for c in outcome.candidates] == ["morgen"]
    # Without a title that holds it, "morgen" is tomorrow: what is due then.
    assert run("Pay invoice morgen", kind=Kind.TASK).item.uid == "inv"


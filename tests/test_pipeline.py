"""resolver/domain/pipeline.py, without a server.

Its request rules (resolver/domain/requests.py) are in tests/domain/test_requests.py.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from resolver.calendars.memory import MemoryCalendar
from resolver.domain import judgment as jdg
from resolver.domain.items import Item, Kind, Method, make_item
from resolver.domain.pipeline import Outcome, Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.ports import CalendarSource, Judge
from resolver.domain.requests import parse_request
from resolver.judges.disabled import DisabledJudge

READ_AT = datetime(2026, 3, 10, 8, 15, tzinfo=timezone.utc)


def task(uid: str, title: str, collection: str = "work") -> Item:
    return make_item(collection_path=f"/u/{collection}/", uid=uid, title=title, etag=f'"{uid}-1"',
                     kind=Kind.TASK, href=f"/u/{collection}/file-{uid[::-1]}.ics")


class Calendar(MemoryCalendar):
    """A memory calendar that records what the pipeline asked for and reports a fixed read time."""

    def __init__(self, items: list[Item]) -> None:
        super().__init__(items=items)
        self.asked: list[dict[str, Any]] = []

    def fetch(self, **kwargs: Any):  # type: ignore[override]
        self.asked.append(kwargs)
        result = super().fetch(**kwargs)
        return type(result)(items=result.items, collections_searched=result.collections_searched, read_at=READ_AT)


class Scripted:
    """A judge answering with fixed probabilities, recording every question."""

    def __init__(self, probabilities: dict[str, float]) -> None:
        self.probabilities = probabilities
        self.questions: list[jdg.Question] = []

    def judge(self, question: jdg.Question, *, request_id: str) -> jdg.Judgment:
        self.questions.append(question)
        top = max(self.probabilities, key=lambda k: self.probabilities[k])
        return jdg.Judgment(model="jev-test", choice=top, probabilities=self.probabilities,
                            server_request_id="j1", latency_ms=1, attempts=1, backend="jev")


class Approving:
    def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None:
        return jdg.ThresholdRule(threshold=0.8, margin=0.1)


def run(text: str, items: list[Item], *, judge: Any = None, policy: Any = None, **request: Any) -> Outcome:
    return resolve(request=parse_request(text=text, kind="task", **request), calendar=Calendar(items),
                   judge=judge or DisabledJudge(), policy=policy or NoThresholds(), request_id="req_t")


ITEMS = [task("a", "Draft portfolio outline"), task("b", "Review portfolio slides"),
         task("c", "Team offsite planning", "work"), task("d", "Team offsite planning", "personal")]


def test_ports__backends_satisfy_the_protocols():
    assert isinstance(MemoryCalendar(), CalendarSource)
    assert isinstance(DisabledJudge(), Judge)


def test_pipeline__exact_unique_title_resolves_without_the_judge():
    judge = Scripted({"1": 1.0, jdg.NO_MATCH: 0.0})
    outcome = run("  draft PORTFOLIO outline ", ITEMS, judge=judge)
    assert (outcome.status, outcome.method, outcome.item.uid) == (Status.OK, Method.DETERMINISTIC, "a")
    assert outcome.reason is None and judge.questions == []


def test_pipeline__read_at_is_the_calendars():
    assert run("Draft portfolio outline", ITEMS).read_at == READ_AT


def test_pipeline__duplicate_titles_reason():
    outcome = run("Team offsite planning", ITEMS)
    assert (outcome.status, outcome.reason, outcome.method) == (
        Status.NEEDS_CLARIFICATION, "duplicate_titles", Method.DETERMINISTIC)
    assert {i.uid for i in outcome.candidates} == {"c", "d"}


def test_pipeline__no_candidates_reason():
    outcome = run("qwzx", ITEMS)
    assert (outcome.reason, outcome.candidates, outcome.method) == ("no_candidates", (), None)


def test_pipeline__judge_off_is_ambiguous_with_a_warning():
    outcome = run("portfolio", ITEMS)
    assert outcome.reason == "ambiguous"
    assert [w.details for w in outcome.warnings if w.code == "judgment_unavailable"] == [{"reason": "disabled"}]


def test_pipeline__judge_no_match_reason():
    outcome = run("portfolio", ITEMS, judge=Scripted({"1": 0.2, "2": 0.1, jdg.NO_MATCH: 0.7}))
    assert (outcome.reason, outcome.suggested_item_id) == ("judge_no_match", None)


def test_pipeline__below_threshold_is_ambiguous_and_above_resolves():
    judge = Scripted({"1": 0.6, "2": 0.3, jdg.NO_MATCH: 0.1})
    assert run("portfolio", ITEMS, judge=judge, policy=Approving()).reason == "ambiguous"
    judge = Scripted({"1": 0.95, "2": 0.03, jdg.NO_MATCH: 0.02})
    outcome = run("portfolio", ITEMS, judge=judge, policy=Approving())
    assert (outcome.status, outcome.method, outcome.reason) == (Status.OK, Method.SEMANTIC, None)


def test_pipeline__judge_never_sees_hrefs_uids_or_item_ids():
    judge = Scripted({"1": 0.5, "2": 0.5, jdg.NO_MATCH: 0.0})
    run("portfolio", ITEMS, judge=judge)
    sent = json.dumps([q.body for q in judge.questions] + [q.state for q in judge.questions])
    for item in ITEMS:
        assert item.href not in sent and item.item_id not in sent and f'"{item.uid}"' not in sent
    numbers = [c["candidate_number"] for c in judge.questions[0].state["candidates"]]
    assert numbers == list(range(1, len(numbers) + 1))


def test_pipeline__at_most_19_candidates_and_narrowing_disclosed():
    items = [task(f"t{i:02}", f"bulk chore {i}") for i in range(30)]
    outcome = run("bulk chore", items)
    assert len(outcome.candidates) == jdg.MAX_CANDIDATES
    assert [w.details for w in outcome.warnings if w.code == "candidate_narrowed"] == [{"matched": 30, "kept": 19}]


def test_pipeline__time_zone_reaches_the_calendar():
    calendar = Calendar(ITEMS)
    resolve(request=parse_request(text="portfolio", kind="task", time_zone="Europe/Berlin"), calendar=calendar,
            judge=DisabledJudge(), policy=NoThresholds(), request_id="req_t")
    assert calendar.asked[0]["time_zone"] is ZoneInfo("Europe/Berlin")


# -- live items of one title: never one of them on confidence, unless the time tells them apart ----------------

def test_pipeline__a_judge_sure_of_one_of_two_equal_titles_is_asked_about_both():
    """"Team offsite planning" in two calendars: the judge's 0.95 for one says nothing the reference does."""
    judge = Scripted({"1": 0.95, "2": 0.03, jdg.NO_MATCH: 0.02})
    outcome = run("offsite planning", ITEMS, judge=judge, policy=Approving())
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.decision.reason == "same_title" and outcome.decision.resolved_number is None
    assert {i.uid for i in outcome.candidates} == {"c", "d"}


def test_pipeline__a_time_only_one_of_two_equal_titles_meets_lets_the_judge_resolve_it():
    """Due on Friday and on Monday: "offsite planning on Friday" names one. Two equal titles never resolve by the
    title-plus-time rule (it asks), so the judge is asked; its answer stands."""
    due = [task("fri", "Team offsite planning"), task("mon", "Team offsite planning", "personal")]
    items = [make_item(collection_path=f"/u/{c}/", uid=i.uid, title=i.title, etag='"1"', kind=Kind.TASK,
                       due=datetime(2026, 3, day, 17, tzinfo=timezone.utc))
             for i, c, day in ((due[0], "work", 13), (due[1], "personal", 16))]
    judge = Scripted({"1": 0.95, "2": 0.03, jdg.NO_MATCH: 0.02})
    friday = run("offsite planning on Friday", items, judge=judge, policy=Approving(), time_zone="UTC")
    assert friday.numbering[1] == items[0].item_id  # in the range: first, and the judge's choice
    assert friday.status is Status.OK and friday.item.uid == "fri"
    judge = Scripted({"1": 0.95, "2": 0.03, jdg.NO_MATCH: 0.02})
    week = run("offsite planning next week", items + [make_item(
        collection_path="/u/home/", uid="tue", title="Team offsite planning", etag='"1"', kind=Kind.TASK,
        due=datetime(2026, 3, 17, 17, tzinfo=timezone.utc))], judge=judge, policy=Approving(), time_zone="UTC")
    assert week.status is Status.NEEDS_CLARIFICATION and week.decision.reason == "same_title"

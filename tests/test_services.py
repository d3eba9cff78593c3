"""resolver/services.py: the door contract every door (the MCP door included) calls."""
from __future__ import annotations

import ast
import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from resolver import clarifications, services
from resolver.domain.errors import (
    CandidateGone, ClarificationExpired, ClarificationNotFound, InvalidRequest, NotACandidate, OccurrenceGone,
)
from resolver.domain.items import Kind, Method, Occurrence, make_item
from resolver.domain.pipeline import Status
from tests.support import memory_backend
from tests.web.conftest import issued_seconds_ago

pytestmark = pytest.mark.django_db

START = datetime(2030, 1, 7, 9, tzinfo=timezone.utc)
WEEK = timedelta(days=7)


def _weekly(first: datetime, count: int) -> tuple[Occurrence, ...]:
    return tuple(Occurrence(start=first + n * WEEK, end=first + n * WEEK + timedelta(hours=1),
                            recurrence_id=(first + n * WEEK).isoformat()) for n in range(count))


OCCURRENCES = _weekly(START, 4)
SERIES = make_item(collection_path="/demo/work/", uid="weekly", title="Weekly sync", etag='"e9"', kind=Kind.EVENT,
                   start=datetime(2029, 1, 1, 9, tzinfo=timezone.utc), href="/demo/work/x-weekly.ics", occurrences=OCCURRENCES)
OTHER = make_item(collection_path="/demo/personal/", uid="weekly-2", title="Weekly sync", etag='"e8"',
                  kind=Kind.EVENT, start=datetime(2029, 1, 2, 9, tzinfo=timezone.utc), href="/demo/personal/weekly-2.ics",
                  occurrences=_weekly(START + timedelta(days=1), 4))
TASK = make_item(collection_path="/demo/work/", uid="t1", title="Draft portfolio outline", etag='"e1"',
                 kind=Kind.TASK, href="/demo/work/t1.ics")


@dataclasses.dataclass
class FakeUser:
    pk: int


ALICE = services.Caller(door="test", user=FakeUser(1), base_url="https://r.example/")
BOB = services.Caller(door="test", user=FakeUser(2), base_url="https://r.example/")


@pytest.fixture
def memory(settings):
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH}
    memory_backend.CALENDAR.items = [SERIES, OTHER, TASK]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []


def _sync_on_the_third_week(caller=ALICE) -> services.Answer:
    """Both series, and the occurrence the reference names: not the next one."""
    answer = services.answer({"text": "Weekly sync", "kind": "event"}, caller=caller)
    assert answer.status is Status.NEEDS_CLARIFICATION
    third = {SERIES.item_id: OCCURRENCES[2], OTHER.item_id: OTHER.occurrences[2]}
    # As the pipeline offers it for "weekly sync on <third week>": the occurrence in the named range.
    outcome = dataclasses.replace(answer.outcome, occurrences=third)
    claims = clarifications.claims_for(outcome, user_id=caller.user_id, time_zone="UTC")
    return dataclasses.replace(answer, outcome=outcome, claims=claims, token=clarifications.issue(claims))


def test_calendar_for__the_backend_by_dotted_path(memory):
    assert services.calendar_for(ALICE) is memory and services.calendar_for(None) is memory


def test_answer__resolved_has_no_token_or_link(memory):
    answer = services.answer({"text": "Draft portfolio outline", "kind": "task"}, caller=ALICE)
    assert answer.status is Status.OK and answer.token is None and answer.clarification_url is None
    assert answer.envelope["data"]["uid"] == "t1"


def test_answer__clarification_carries_token_link_and_claims(memory):
    answer = services.answer({"text": "Weekly sync", "kind": "event", "time_zone": "Europe/Berlin"}, caller=ALICE)
    assert answer.clarification_url.startswith("https://r.example/resolve/clarify/")
    assert answer.envelope["data"]["clarification_url"] == answer.clarification_url
    claims = services.read_clarification(answer.token, caller=ALICE)
    assert claims == answer.claims
    assert claims.time_zone == "Europe/Berlin"
    assert claims.occurrences == tuple(
        clarifications.occurrence_key(answer.outcome.occurrences[i]) for i in claims.candidate_ids)


def test_answer__no_user_no_link_and_a_token_nobody_can_open(memory):
    answer = services.answer({"text": "Weekly sync", "kind": "event"}, caller=services.Caller(door="cli"))
    assert answer.clarification_url is None and "clarification_url" not in answer.envelope["data"]
    with pytest.raises(ClarificationNotFound):
        services.read_clarification(answer.token, caller=ALICE)


def test_answer__same_rules_as_every_door(memory):
    with pytest.raises(InvalidRequest) as caught:
        services.answer({"text": "x", "kind": "task", "colection_ids": []}, caller=ALICE)
    assert caught.value.details["field"] == "colection_ids"


def test_pick__answers_the_occurrence_that_was_offered(memory):
    """The third week was shown; the pick returns the third week, not the next occurrence."""
    answer = _sync_on_the_third_week()
    picked = services.pick(answer.token, item_id=SERIES.item_id, caller=ALICE)
    data = picked.envelope["data"]
    assert (picked.status, picked.outcome.method) == (Status.OK, Method.USER_SELECTED)
    assert data["occurrence"] == OCCURRENCES[2].as_dict() != SERIES.occurrences[0].as_dict()
    assert (data["href"], data["etag"], data["read_at"][-1]) == ("/demo/work/x-weekly.ics", '"e9"', "Z")
    assert picked.outcome.request_id == answer.outcome.request_id


def test_pick__the_offered_occurrence_no_longer_live(memory):
    answer = _sync_on_the_third_week()
    # The third week was cancelled (EXDATE) while the person chose.
    memory.items = [dataclasses.replace(SERIES, occurrences=OCCURRENCES[:2] + OCCURRENCES[3:]), OTHER, TASK]
    with pytest.raises(OccurrenceGone):
        services.pick(answer.claims, item_id=SERIES.item_id, caller=ALICE)
    live = {c.item_id: c for c in services.clarification_candidates(answer.claims, caller=ALICE)}
    assert (live[SERIES.item_id].occurrence_gone, live[SERIES.item_id].choosable) == (True, False)
    assert (live[OTHER.item_id].occurrence_gone, live[OTHER.item_id].choosable) == (False, True)


def test_clarification_candidates__show_the_offered_occurrence_and_whether_it_is_next(memory):
    answer = services.answer({"text": "Weekly sync", "kind": "event"}, caller=ALICE)
    assert all(c.next and c.occurrence == c.item.occurrences[0]
               for c in services.clarification_candidates(answer.claims, caller=ALICE))
    later = _sync_on_the_third_week()
    cards = services.clarification_candidates(later.claims, caller=ALICE)
    assert all(not c.next and c.occurrence == c.item.occurrences[2] for c in cards)
    assert services.next_occurrence_ids(answer.outcome) == {SERIES.item_id, OTHER.item_id}
    assert services.next_occurrence_ids(later.outcome) == frozenset()


def test_pick__not_offered(memory):
    answer = _sync_on_the_third_week()
    with pytest.raises(NotACandidate):
        services.pick(answer.claims, item_id=TASK.item_id, caller=ALICE)


def test_pick__gone(memory):
    answer = _sync_on_the_third_week()
    memory.items = [OTHER, TASK]  # the series was deleted since the question was asked
    with pytest.raises(CandidateGone):
        services.pick(answer.claims, item_id=SERIES.item_id, caller=ALICE)


def test_pick__another_callers_token_or_an_expired_one(memory):
    answer = _sync_on_the_third_week()
    with pytest.raises(ClarificationNotFound):
        services.pick(answer.token, item_id=SERIES.item_id, caller=BOB)
    with issued_seconds_ago(901):
        old = clarifications.issue(answer.claims)
    with pytest.raises(ClarificationExpired):
        services.pick(old, item_id=SERIES.item_id, caller=ALICE)


def test_pick__re_reads_in_the_requests_zone(memory, monkeypatch):
    seen = []
    real = memory.fetch
    monkeypatch.setattr(memory, "fetch", lambda **kw: seen.append(kw["time_zone"]) or real(**kw))
    answer = services.answer({"text": "Weekly sync", "kind": "event", "time_zone": "Asia/Tokyo"}, caller=ALICE)
    services.pick(answer.token, item_id=SERIES.item_id, caller=ALICE)
    assert [clarifications.zone_name(z) for z in seen] == ["Asia/Tokyo", "Asia/Tokyo"]


def test_pick__logs_the_re_read(memory, caplog, monkeypatch):
    answer = _sync_on_the_third_week()
    real = memory.fetch
    # A server read of three round trips (the memory calendar makes none).
    monkeypatch.setattr(memory, "fetch", lambda **kw: dataclasses.replace(real(**kw), requests=3))
    with caplog.at_level("INFO", logger="resolver.requests"):
        services.pick(answer.claims, item_id=SERIES.item_id, caller=ALICE)
    line = [r for r in caplog.records if r.getMessage() == "resolution"][-1]
    assert (line.method, line.calendar_requests, line.door) == ("user_selected", 3, "test")
    assert line.calendar_ms is not None


def test_user_for_username__names_the_bad_value(memory, settings, django_user_model):
    settings.RESOLVER = {**settings.RESOLVER, "SITE_URL": "https://r.example"}
    with pytest.raises(InvalidRequest) as caught:
        services.user_for_username("nobody")
    assert caught.value.message == "No such user: 'nobody'." and caught.value.details["value"] == "nobody"
    user = django_user_model.objects.create_user("carol")
    assert services.user_for_username("carol") == user


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at module level or inside a function."""
    tree = ast.parse(path.read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    return imported | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


# resolver.asgi composes the doors (/mcp beside the host's Django app): a door itself.
_DOORS = ("resolver.web", "resolver.api", "resolver.mcp", "resolver.management", "resolver.templatetags",
          "resolver.asgi")
_DEMO = ("lifeproject",)


def _module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")


def test_layers__no_lower_layer_imports_a_door():
    """Below every door (services, clarifications, envelope, the domain, the backends): no door, no demo project."""
    root = Path(__file__).resolve().parents[1] / "resolver"
    lower = [p for p in root.rglob("*.py") if "migrations" not in p.parts
             and not _module_name(p, root).startswith(_DOORS) and p.name != "urls.py"]
    assert {root / "services.py", root / "clarifications.py", root / "envelope.py"} <= set(lower)
    for path in lower:
        imported = _imports(path)
        assert not {m for m in imported if m.startswith(_DOORS + _DEMO)}, path


def test_layers__domain_imports_only_the_domain():
    """resolver/domain/ imports nothing of the app above it (see tests/domain/test_layers.py for the exception)."""
    from tests.domain.test_layers import ALLOWED_OUTSIDE_THE_DOMAIN

    root = Path(__file__).resolve().parents[1] / "resolver"
    for path in (root / "domain").rglob("*.py"):
        imported = {m for m in _imports(path) if m == "resolver" or m.startswith("resolver.")}
        assert {m for m in imported if not m.startswith("resolver.domain")} <= ALLOWED_OUTSIDE_THE_DOMAIN, path
        assert not {m for m in _imports(path) if m.split(".")[0] in ("django", "rest_framework")}, path


def test_layers__no_app_module_imports_the_demo_project():
    """The installed package works without lifeproject/."""
    root = Path(__file__).resolve().parents[1] / "resolver"
    for path in root.rglob("*.py"):
        assert not {m for m in _imports(path) if m.startswith(_DEMO)}, path


# --- the judge's advice without probabilities -------------------------------------------

class AdviceJudge:
    """A chat model that names an option (the candidate with this title) and gives no log-probabilities."""

    def __init__(self, title: str) -> None:
        self.title = title

    def judge(self, question, *, request_id):
        from resolver.domain import judgment as jdg

        self.choice = next(str(c["candidate_number"]) for c in question.state["candidates"]
                           if c["title"] == self.title)
        return jdg.Judgment(model="local-model", choice=self.choice, server_request_id=None, latency_ms=5, attempts=1,
                            probabilities=jdg.advice_probabilities(self.choice, question), backend="openai",
                            probability_source=jdg.ProbabilitySource.NONE, attempt_validity=("valid",))


class ApproveEverything:
    """Approves any threshold for the judge's model (not the built-in ranker's: it would answer first)."""

    def find(self, *, question, model, fingerprint):
        from resolver.domain.judgment import ThresholdRule

        return ThresholdRule(threshold=0.0, margin=0.0) if model == "local-model" else None


def test_advice__suggested_first_with_null_probability_never_ok(memory):
    """Candidate 2 named without probabilities: suggested, ordered first, and still a clarification."""
    memory.items = [TASK, make_item(collection_path="/demo/work/", uid="t2", title="Review portfolio slides",
                                    etag='"e2"', kind=Kind.TASK, href="/demo/work/t2.ics")]
    answer = services.answer({"text": "portfolio", "kind": "task"}, caller=ALICE, judge=AdviceJudge("Review portfolio slides"),
                             policy=ApproveEverything())
    assert answer.status is Status.NEEDS_CLARIFICATION and answer.outcome.reason == "ambiguous"
    first, second = answer.envelope["data"]["candidates"]
    assert (first["uid"], first["suggested"], first["probability"]) == ("t2", True, None)
    assert (second["uid"], second["suggested"], second["probability"]) == ("t1", False, None)
    assert answer.claims.suggested_item_id == first["item_id"] and answer.claims.probabilities == ()
    from resolver.mcp import elicitation

    labels = [o["title"] for o in elicitation.requested_schema(answer.envelope)["properties"]["item_id"]["oneOf"]]
    assert labels[:2] == ["Review portfolio slides (work, suggested)", "Draft portfolio outline (work)"]

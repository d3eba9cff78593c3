"""The pipeline with the relevance model: its order and floor, and a resolution only under an approved threshold."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from resolver.calendars.memory import MemoryCalendar
from resolver.domain import judgment as jdg
from resolver.domain.codes import Reason
from resolver.domain.items import Item, Kind, Method, make_item
from resolver.domain.pipeline import Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.relevance import RelevanceModel
from resolver.domain.requests import parse_request
from resolver.judges.disabled import DisabledJudge
from resolver.provenance import provenance_dict


def task(uid: str, title: str) -> Item:
    return make_item(collection_path="/u/work/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK,
                     href=f"/u/work/{uid}.ics")


ITEMS = [task("dentist", "Dentist appointment"), task("plumber", "Call the plumber"),
         task("outline", "Draft portfolio outline"), task("slides", "Review portfolio slides"),
         task("dup1", "Water the plants"), task("dup2", "Water the plants")]


@pytest.fixture
def model(tmp_path: Path) -> RelevanceModel:
    """Words alone: a candidate's utility is 6 x the matcher's score; P(none) is the logistic of 3 - 6 x the
    best score; below 0.3 is not offered."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"name": "fixture-ranker", "variants": {"words": {
        "features": ["lex_score"], "weights": [6.0], "temperature": 1.0, "floor": 0.3,
        "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 3.0}}}}))
    return RelevanceModel.load(path)


class Judge:
    """Records whether it was asked; answers like the disabled judge."""

    def __init__(self) -> None:
        self.asked = 0

    def judge(self, question: jdg.Question, *, request_id: str):
        self.asked += 1
        return DisabledJudge().judge(question, request_id=request_id)


class Policy:
    """Approves one threshold, for one model and fingerprint only."""

    def __init__(self, model: str, fingerprint: str, threshold: float, margin: float = 0.1) -> None:
        self.rule = jdg.ThresholdRule(threshold=threshold, margin=margin, approved_id=7)
        self.key = (model, fingerprint)
        self.asked: list[tuple[str, str]] = []

    def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None:
        self.asked.append((model, fingerprint))
        return self.rule if (model, fingerprint) == self.key and question == jdg.QUESTION_ID else None


def run(text: str, ranker: RelevanceModel, *, policy=None, judge=None):
    return resolve(request=parse_request(text=text, kind="task"), calendar=MemoryCalendar(items=list(ITEMS)),
                   judge=judge or Judge(), policy=policy or NoThresholds(), request_id="req_r", ranker=ranker)


def test_ranker__a_reference_to_nothing_answers_no_candidates(model):
    """No word matches: nothing reaches the model, nothing is offered."""
    outcome = run("rent a canoe for saturday", model)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.reason is Reason.NO_CANDIDATES
    assert outcome.candidates == ()


def test_ranker__a_weak_match_below_the_floor_is_not_offered(model):
    """'call' matches 'Call the plumber' weakly (score 0.31): P(none) = logistic(3 - 6 x 0.31) = 0.75, so the
    plumber's 0.25 is under the floor."""
    weak = run("call mum about the weekend", model)
    assert weak.reason is Reason.NO_CANDIDATES and weak.candidates == ()
    strong = run("the plumber", model)
    assert [c.uid for c in strong.candidates] == ["plumber"]


def test_ranker__a_model_that_offers_at_most_one_discloses_the_narrowing(tmp_path):
    """Both portfolio tasks reach the floor; the model offers its most probable one and the envelope says
    two matched (invariant 2)."""
    path = tmp_path / "capped.json"
    path.write_text(json.dumps({"name": "fixture-capped", "variants": {"words": {
        "features": ["lex_score"], "weights": [6.0], "temperature": 1.0, "floor": 0.01, "offer_at_most": 1,
        "none": {"features": [], "weights": [], "bias": -6.0}}}}))
    outcome = run("portfolio outline", RelevanceModel.load(path))
    assert [c.uid for c in outcome.candidates] == ["outline"]
    narrowed = [w for w in outcome.warnings if w.code == "candidate_narrowed"]
    assert narrowed and narrowed[0].details == {"matched": 2, "kept": 1}


def test_ranker__words_naming_no_title_with_a_date_are_weighed_not_listed_by_the_date(model):
    """"llama trekking on friday": with the encoder the model weighs the titles it brings (here none is probable:
    no_candidates), not every item due Friday; without the encoder the date's items stay the only candidates."""
    from datetime import date, datetime, timezone

    from tests.encoders.hashing import HashingEncoder

    friday = [make_item(collection_path="/u/work/", uid=f"f{n}", title=title, etag='"1"', kind=Kind.TASK,
                        href=f"/u/work/f{n}.ics", due=date(2027, 1, 15))
              for n, title in enumerate(["Send the invoice", "Water the plants", "Book the venue"])]
    now = datetime(2027, 1, 11, 9, 0, tzinfo=timezone.utc)  # a Monday

    def ask(semantic):
        return resolve(request=parse_request(text="llama trekking on friday", kind="task"),
                       calendar=MemoryCalendar(items=friday), judge=Judge(), policy=NoThresholds(),
                       request_id="req_d", ranker=model, semantic=semantic, now=now)

    weighed = ask(HashingEncoder())
    assert weighed.reason is Reason.NO_CANDIDATES and weighed.candidates == ()
    assert {c.uid for c in ask(None).candidates} == {"f0", "f1", "f2"}


def test_ranker__a_question_by_date_in_another_language_lists_the_dates_items(model):
    """"was ist am Freitag fällig" where English is configured: the German grammar reads the time, and the German
    fillers ("was", "ist", "fällig") name no title, so it asks by date alone, as "what is due on friday" does;
    the model has nothing to weigh."""
    from datetime import date, datetime, timezone

    from tests.encoders.hashing import HashingEncoder

    friday = [make_item(collection_path="/u/work/", uid=f"f{n}", title=title, etag='"1"', kind=Kind.TASK,
                        href=f"/u/work/f{n}.ics", due=date(2027, 1, 15))
              for n, title in enumerate(["Send the invoice", "Water the plants", "Book the venue"])]
    later = make_item(collection_path="/u/work/", uid="later", title="Pay rent", etag='"1"', kind=Kind.TASK,
                      href="/u/work/later.ics", due=date(2027, 1, 20))
    now = datetime(2027, 1, 11, 9, 0, tzinfo=timezone.utc)  # a Monday
    for text in ("what is due on friday", "was ist am Freitag fällig", "qu'est-ce que j'ai vendredi"):
        outcome = resolve(request=parse_request(text=text, kind="task"),
                          calendar=MemoryCalendar(items=[*friday, later]), judge=Judge(), policy=NoThresholds(),
                          request_id="req_d", ranker=model, semantic=HashingEncoder(), now=now)
        assert {c.uid for c in outcome.candidates} == {"f0", "f1", "f2"}, text


def test_ranker__without_an_approved_threshold_nothing_is_resolved(model):
    judge = Judge()
    outcome = run("the dentist", model, judge=judge)
    assert outcome.status is Status.NEEDS_CLARIFICATION and [c.uid for c in outcome.candidates] == ["dentist"]
    assert outcome.reason is Reason.SINGLE_CANDIDATE and judge.asked == 1


def test_ranker__an_approved_threshold_for_its_fingerprint_resolves(model):
    name, fingerprint = model.scorer_name(None), model.fingerprint(None)
    policy, judge = Policy(name, fingerprint, threshold=0.5), Judge()
    outcome = run("the dentist", model, policy=policy, judge=judge)
    assert outcome.status is Status.OK and outcome.method is Method.SEMANTIC and outcome.item.uid == "dentist"
    assert judge.asked == 0  # the certified ranker answered; the judge was not needed
    assert outcome.judgment.backend == jdg.RANKER_BACKEND and outcome.judgment.model == name
    provenance = provenance_dict(outcome.question, outcome.judgment, rule=outcome.rule)
    assert provenance["fingerprint"] == fingerprint and provenance["backend"] == "ranker"
    assert provenance["threshold"] == 0.5 and provenance["threshold_id"] == 7
    assert provenance["probability"] == outcome.judgment.probabilities["1"] >= 0.5
    assert provenance["runner_up_probability"] == outcome.judgment.probabilities["no_match"]


def test_ranker__a_threshold_for_another_fingerprint_does_not_apply(model, tmp_path):
    policy = Policy(model.scorer_name(None), "0" * 64, threshold=0.0)
    outcome = run("the dentist", model, policy=policy)
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert (model.scorer_name(None), model.fingerprint(None)) in policy.asked


def test_ranker__below_the_approved_threshold_is_a_clarification(model):
    policy = Policy(model.scorer_name(None), model.fingerprint(None), threshold=0.999)
    outcome = run("the dentist", model, policy=policy)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.reason is Reason.SINGLE_CANDIDATE


def test_ranker__duplicate_titles_are_never_resolved_on_confidence(model):
    """Two equal titles are equally probable: a tie, whatever the threshold."""
    policy = Policy(model.scorer_name(None), model.fingerprint(None), threshold=0.0)
    outcome = run("water plants", model, policy=policy)
    assert outcome.status is Status.NEEDS_CLARIFICATION and {c.uid for c in outcome.candidates} == {"dup1", "dup2"}


MILK = [task("soy", "Buy soy milk"), task("dentist", "Dentist appointment")]


@pytest.mark.parametrize(("text", "resolved"), [("buy almond milk", False), ("buy the soy milk", True)])
def test_ranker__a_word_swapped_for_the_titles_own_is_asked_whatever_the_threshold(model, text, resolved):
    """"buy almond milk" when only "Buy soy milk" is there: the same sentence about another thing. The model is
    as sure of it as of a paraphrase, so its top candidate is listed first and the person asked
    (domain/substitution.py); the title's own words resolve under the same threshold."""
    policy = Policy(model.scorer_name(None), model.fingerprint(None), threshold=0.5)
    outcome = resolve(request=parse_request(text=text, kind="task"), calendar=MemoryCalendar(items=list(MILK)),
                      judge=Judge(), policy=policy, request_id="req_r", ranker=model)
    assert (outcome.status is Status.OK) is resolved
    swapped = [w.details for w in outcome.warnings if w.code == "word_swapped"]
    if resolved:
        assert swapped == []
    else:
        assert outcome.reason is Reason.SINGLE_CANDIDATE and [c.uid for c in outcome.candidates] == ["soy"]
        assert outcome.suggested_item_id is None
        # Why the approved threshold did not resolve it.
        assert swapped == [{"item_id": outcome.candidates[0].item_id, "reference_word": "almond",
                            "title_word": "soy"}]


def test_ranker__a_swap_below_the_threshold_is_a_plain_clarification(model):
    """No threshold would have resolved it: nothing to explain."""
    outcome = resolve(request=parse_request(text="buy almond milk", kind="task"),
                      calendar=MemoryCalendar(items=list(MILK)), judge=Judge(), policy=NoThresholds(),
                      request_id="req_r", ranker=model)
    assert outcome.status is Status.NEEDS_CLARIFICATION and [w.code for w in outcome.warnings] == [
        "judgment_unavailable"]


def test_ranker__an_exact_title_stays_deterministic(model):
    judge = Judge()
    outcome = run("Call the plumber", model, judge=judge)
    assert outcome.method is Method.DETERMINISTIC and outcome.item.uid == "plumber" and judge.asked == 0


def test_ranker__the_judge_question_names_the_ranker(model):
    """The judge sees the model's pool: the model's name and fingerprint are in its fingerprint."""
    outcome = run("portfolio", model)
    assert outcome.question.retrieval == f"{model.scorer_name(None)} {model.fingerprint(None)[:16]}"
    assert {c.uid for c in outcome.candidates} == {"outline", "slides"}


def test_ranker__a_collection_with_the_same_titles_as_another_never_lists_the_others_items():
    """The matching memo reuses one title index for sequences with the same titles (two collections of an
    account alike); the model's pool must still hold this request's items only."""
    from resolver.domain.semantic import MultilingualUSE

    def same(collection: str) -> list[Item]:
        return [make_item(collection_path=f"/u/{collection}/", uid=f"{collection}-{n}", title=title,
                          etag=f'"{collection}{n}"', kind=Kind.TASK, href=f"/u/{collection}/{n}.ics")
                for n, title in enumerate(("Buy groceries", "Renew passport", "Call the plumber"))]

    calendar = MemoryCalendar(items=same("calm") + same("wild"))
    encoder, model = MultilingualUSE(), RelevanceModel.load()
    for collection in ("calm", "wild"):
        outcome = resolve(request=parse_request(text="groceries", kind="task", collection_ids=[collection]),
                          calendar=calendar, judge=Judge(), policy=NoThresholds(), request_id="req_c",
                          semantic=encoder, ranker=model)
        assert outcome.candidates and {c.collection_id for c in outcome.candidates} == {collection}


# -- completed and cancelled items (FetchResult.closed) ---------------------------------------------------------

def done(uid: str, title: str, status: str = "COMPLETED") -> Item:
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK,
                     href=f"/u/home/{uid}.ics", status=status)


SHOPPING = [task("apples", "Buy apples"), task("bread", "Buy bread"), task("rent", "Pay the rent")]
CLOSED = [done("rice", "Buy rice"), done("old-rent", "Pay the rent"), done("gym", "Cancel the gym", "CANCELLED")]


def run_closed(text: str, ranker: RelevanceModel | None):
    return resolve(request=parse_request(text=text, kind="task"),
                   calendar=MemoryCalendar(items=list(SHOPPING), closed=list(CLOSED)), judge=Judge(),
                   policy=NoThresholds(), request_id="req_c", ranker=ranker)


def closed_warning(outcome) -> dict | None:
    found = [w for w in outcome.warnings if w.code == "closed_item_matched"]
    return found[0].details if found else None


@pytest.mark.parametrize("with_model", [True, False])
def test_closed__a_title_only_a_closed_item_has_is_no_candidates_naming_it(model, with_model):
    """With or without the model: the exact title of a done task answers nothing open, and says which it is."""
    outcome = run_closed("buy rice", model if with_model else None)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.reason is Reason.NO_CANDIDATES
    assert outcome.candidates == () and "completed or cancelled" in outcome.prompt
    (shown,) = closed_warning(outcome)["items"]
    assert (shown["title"], shown["status"], shown["collection_id"]) == ("Buy rice", "COMPLETED", "home")


def test_closed__a_live_item_of_the_same_title_is_still_resolved():
    outcome = run_closed("Pay the rent", None)
    assert outcome.status is Status.OK and outcome.item.uid == "rent" and closed_warning(outcome) is None


def test_closed__more_probable_than_every_live_one_nothing_is_offered(model):
    """"rice to buy" matches the done "Buy rice" on both words, the live "Buy apples" on one: the model finds
    the done task most probable, and the clarification offers nothing and names it."""
    outcome = run_closed("rice to buy", model)
    assert outcome.reason is Reason.NO_CANDIDATES and outcome.candidates == ()
    assert [i["item_id"] for i in closed_warning(outcome)["items"]] == [CLOSED[0].item_id]


def test_closed__a_tie_with_a_live_item_offers_the_live_one_and_never_the_closed(model):
    """This month's "Pay the rent" and last month's, done: equally probable, the live one is offered alone."""
    outcome = run_closed("the rent", model)
    assert [c.uid for c in outcome.candidates] == ["rent"] and closed_warning(outcome) is None


def test_closed__a_closed_item_is_never_a_candidate(model):
    """"buy" matches every shopping task, the done one too: the live ones are offered, the done one is not."""
    outcome = run_closed("buy", model)
    assert {c.uid for c in outcome.candidates} <= {"apples", "bread"} and outcome.candidates


# -- items of the other kind ------------------------------------------------------------------------------------

def event(uid: str, title: str) -> Item:
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.EVENT,
                     href=f"/u/home/{uid}.ics")


EVENTS = [event("standup", "Team standup"), event("concert", "Piano concert"), event("e-rent", "Pay the rent")]


class Counting(MemoryCalendar):
    """A memory calendar that counts its reads by kind, and can fail on one kind."""

    def __init__(self, *args, failing: Kind | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads: list[Kind] = []
        self.failing = failing

    def fetch(self, *, kind, collection_ids, time_zone):
        self.reads.append(kind)
        if kind is self.failing:
            from resolver.domain.errors import CalendarUnavailable

            raise CalendarUnavailable("down")
        return super().fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)


def run_kinds(text: str, ranker: RelevanceModel | None, *, failing: Kind | None = None):
    calendar = Counting(items=list(SHOPPING) + list(EVENTS), failing=failing)
    outcome = resolve(request=parse_request(text=text, kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=ranker)
    return outcome, calendar.reads


def other_kind_warning(outcome) -> dict | None:
    found = [w for w in outcome.warnings if w.code == "other_kind_matched"]
    return found[0].details if found else None


@pytest.mark.parametrize("with_model", [True, False])
def test_other_kind__a_title_only_an_event_has_is_no_task_naming_the_event(model, with_model):
    """Asked for a task by an event's exact title: no candidates, the event named, the prompt says the kinds."""
    outcome, reads = run_kinds("team standup", model if with_model else None)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.reason is Reason.NO_CANDIDATES
    assert outcome.candidates == () and reads == [Kind.TASK, Kind.EVENT]
    (shown,) = other_kind_warning(outcome)["items"]
    assert (shown["title"], shown["kind"], shown["collection_id"]) == ("Team standup", "event", "home")
    assert shown["item_id"] == EVENTS[0].item_id
    assert outcome.prompt.startswith("No task in your calendars matches") and "names an event" in outcome.prompt


def test_other_kind__an_exact_task_is_read_without_the_other_kind():
    """Deterministic first: a task's own title resolves on one read, even where an event shares it."""
    outcome, reads = run_kinds("Pay the rent", None)
    assert outcome.status is Status.OK and outcome.item.uid == "rent" and reads == [Kind.TASK]


@pytest.mark.parametrize("with_model", [True, False])
@pytest.mark.parametrize("text", ["the concert, piano", "pianos concert"])
def test_other_kind__the_titles_words_in_any_order_or_form_name_the_event(model, with_model, text):
    outcome, _ = run_kinds(text, model if with_model else None)
    assert outcome.reason is Reason.NO_CANDIDATES and outcome.candidates == ()
    assert [i["item_id"] for i in other_kind_warning(outcome)["items"]] == [EVENTS[1].item_id]


@pytest.mark.parametrize("with_model", [True, False])
def test_other_kind__a_title_holding_every_word_no_task_holds_names_it(model, with_model):
    """"piano": the event "Piano concert" holds it, no task does: the event is named, never offered."""
    outcome, reads = run_kinds("piano", model if with_model else None)
    assert reads == [Kind.TASK, Kind.EVENT] and outcome.candidates == ()
    assert [i["item_id"] for i in other_kind_warning(outcome)["items"]] == [EVENTS[1].item_id]


def test_other_kind__several_events_named_are_said_in_the_plural(model):
    """"meeting": four events hold it, no task does: the three first named, the prompt says "events"."""
    meetings = [event(f"m{n}", f"{name} meeting") for n, name in enumerate(("Team", "Board", "Ops", "Budget"))]
    calendar = Counting(items=list(SHOPPING) + meetings)
    outcome = resolve(request=parse_request(text="meeting", kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=model)
    assert outcome.reason is Reason.NO_CANDIDATES and len(other_kind_warning(outcome)["items"]) == 3
    assert "it names events. Ask for events instead" in outcome.prompt


def test_other_kind__words_no_title_of_either_kind_explains_name_nothing(model):
    """"piano tuning": "Piano concert" leaves "tuning" over, as every task leaves a word or more; the events
    never join the model's pool (where they cost references to live items their place, docs/retrieval.md)."""
    calendar = Counting(items=list(SHOPPING) + list(EVENTS) + [task("tuner", "Call the tuner")])
    outcome = resolve(request=parse_request(text="piano tuning", kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=model)
    assert calendar.reads == [Kind.TASK, Kind.EVENT] and other_kind_warning(outcome) is None
    assert all(c.kind is Kind.TASK for c in outcome.candidates)


@pytest.mark.parametrize("with_model", [True, False])
def test_other_kind__a_title_held_whole_that_explains_more_than_any_task_names_it(model, with_model):
    """"piano concert tickets": the event "Piano concert" leaves one word over, every task all three."""
    outcome, _ = run_kinds("piano concert tickets", model if with_model else None)
    assert outcome.reason is Reason.NO_CANDIDATES and outcome.candidates == ()
    assert [i["item_id"] for i in other_kind_warning(outcome)["items"]] == [EVENTS[1].item_id]


@pytest.mark.parametrize("closed", [False, True])
def test_other_kind__a_task_that_leaves_as_few_words_over_keeps_it(model, closed):
    """"Buy concert tickets" leaves "piano" over, as "Piano concert" leaves "tickets": the task may be meant,
    live or done (then the closed item's own rules answer), and the event is not named."""
    tickets = task("tickets", "Buy concert tickets")
    calendar = Counting(items=list(SHOPPING) + list(EVENTS) + ([] if closed else [tickets]),
                        closed=[tickets] if closed else [])
    outcome = resolve(request=parse_request(text="piano concert tickets", kind="task"), calendar=calendar,
                      judge=Judge(), policy=NoThresholds(), request_id="req_k", ranker=model)
    assert other_kind_warning(outcome) is None and calendar.reads == [Kind.TASK, Kind.EVENT]
    assert all(c.kind is Kind.TASK for c in outcome.candidates)
    if not closed:
        assert [c.uid for c in outcome.candidates][:1] == ["tickets"]


def test_other_kind__a_title_holding_a_word_the_reference_negates_is_not_named(model):
    """"the piano concert itself, not the tickets": "Piano concert tickets" explains more but holds the negated
    word; "Piano concert" is named."""
    calendar = Counting(items=list(SHOPPING) + list(EVENTS) + [event("tix", "Piano concert tickets")])
    outcome = resolve(request=parse_request(text="the piano concert itself, not the tickets", kind="task"),
                      calendar=calendar, judge=Judge(), policy=NoThresholds(), request_id="req_k", ranker=model)
    assert [i["item_id"] for i in other_kind_warning(outcome)["items"]] == [EVENTS[1].item_id]


@pytest.mark.parametrize("text", ["concert piano", "Piano concert"])
def test_other_kind__a_task_holding_every_word_is_offered_and_the_events_not_read(model, text):
    """The event's title in words, or its very title, but a task holds both words too: it may be meant, and
    the other kind is not read at all."""
    calendar = Counting(items=list(SHOPPING) + list(EVENTS) + [task("tickets", "Book the piano concert tickets")])
    outcome = resolve(request=parse_request(text=text, kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=model)
    assert [c.uid for c in outcome.candidates] == ["tickets"] and other_kind_warning(outcome) is None
    assert calendar.reads == [Kind.TASK] and outcome.calendar_requests == 0


def test_other_kind__an_event_is_never_a_candidate_and_a_task_meant_is_still_offered(model):
    """"buy bread" names the task; the events compete and are never offered."""
    outcome, _ = run_kinds("bread to buy", model)
    assert [c.uid for c in outcome.candidates][:1] == ["bread"] and other_kind_warning(outcome) is None
    assert all(c.kind is Kind.TASK for c in outcome.candidates)


def test_other_kind__a_server_failing_on_the_other_kind_costs_only_that(model):
    """The other kind's read fails: the request goes on with the tasks alone, as before."""
    outcome, reads = run_kinds("team standup", model, failing=Kind.EVENT)
    assert reads == [Kind.TASK, Kind.EVENT] and other_kind_warning(outcome) is None
    assert outcome.reason is not None  # a clarification, never an error


class Answering(Counting):
    """A source with the optional `fetch_since` (resolver/calendars/backend.py): it records what it was asked."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.since: list[tuple[Kind, object]] = []

    def fetch_since(self, *, kind, collection_ids, time_zone, since):
        self.since.append((kind, since))
        return super().fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)


def test_other_kind__a_source_that_can_is_asked_for_it_since_the_first_read(model):
    """The other kind's read goes to `fetch_since` where the source has one, with the first read's read_at:
    what that read showed may answer it (reader._carry); a source without one is read with `fetch` (above)."""
    calendar = Answering(items=list(SHOPPING) + list(EVENTS))
    outcome = resolve(request=parse_request(text="team standup", kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=model)
    ((kind, since),) = calendar.since
    assert kind is Kind.EVENT and calendar.reads == [Kind.TASK, Kind.EVENT]
    assert since is not None and since == outcome.read_at  # the tasks' read, this request's
    assert other_kind_warning(outcome)["items"][0]["title"] == "Team standup"


class SlowOtherKind(Counting):
    """The other kind's read waits on the server until its deadline passes, as a reader's socket would."""

    def fetch(self, *, kind, collection_ids, time_zone):
        if kind is Kind.EVENT:
            from resolver.domain import deadline
            from resolver.domain.errors import CalendarUnavailable

            while not deadline.expired():
                time.sleep(0.005)
            self.reads.append(kind)
            raise CalendarUnavailable("timeout", details={"reason": "timeout"})
        return super().fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)


def test_other_kind__a_read_past_its_budget_leaves_the_request_half_of_its_deadline(model):
    """The other kind's read may spend half of what the request has left: past it, the request goes on (and
    answers) with the other half still its own."""
    from resolver.domain import deadline

    calendar = SlowOtherKind(items=list(SHOPPING) + list(EVENTS))
    with deadline.running(0.4) as running:
        outcome = resolve(request=parse_request(text="team standup", kind="task"), calendar=calendar,
                          judge=Judge(), policy=NoThresholds(), request_id="req_k", ranker=model)
        assert running.remaining() > 0  # half of what was left when the read began, less the matching
    assert calendar.reads == [Kind.TASK, Kind.EVENT] and other_kind_warning(outcome) is None
    assert outcome.reason is Reason.NO_CANDIDATES


def test_other_kind__off_the_other_kind_is_never_read(model):
    """RESOLVER["OTHER_KIND"] False: an event's very title asked as a task reads tasks alone, as before."""
    calendar = Counting(items=list(SHOPPING) + list(EVENTS))
    outcome = resolve(request=parse_request(text="Team standup", kind="task"), calendar=calendar, judge=Judge(),
                      policy=NoThresholds(), request_id="req_k", ranker=model, other_kind=False)
    assert calendar.reads == [Kind.TASK] and other_kind_warning(outcome) is None


# -- words first: the encoder is not asked when a title holds every word and words alone are sure ------------

class CountingHashes:
    """The hashing encoder, counting its calls."""

    def __init__(self) -> None:
        from tests.encoders.hashing import HashingEncoder

        self.inner, self.calls = HashingEncoder(), 0
        self.name = self.inner.name

    def encode(self, texts):
        self.calls += 1
        return self.inner.encode(texts)


def first_model(tmp_path: Path, *, at: float | None = 0.9, floor: float = 0.3, weight: float = 6.0) -> RelevanceModel:
    """The fixture model's words alone variant, a signal variant that also reads the cosine, and (unless `at`
    is None) the words first variant: the same weights, sharper, and surer that something is meant (P(none)'s
    bias 1 instead of 3), answering at `at`."""
    words = {"features": ["lex_score"], "weights": [weight], "temperature": 1.0, "floor": floor,
             "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 3.0}}
    variants = {"words": words, "signal": {**words, "features": ["lex_score", "cosine"], "weights": [weight, 1.0]}}
    if at is not None:
        variants["words_first"] = {**words, "temperature": 0.5, "words_first": at,
                                   "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 1.0}}
    path = tmp_path / f"first-{at}-{floor}-{weight}.json"
    path.write_text(json.dumps({"name": "fixture-first", "variants": variants}))
    return RelevanceModel.load(path)


def run_encoded(text: str, ranker: RelevanceModel, encoder, *, policy=None):
    return resolve(request=parse_request(text=text, kind="task"), calendar=MemoryCalendar(items=list(ITEMS)),
                   judge=Judge(), policy=policy or NoThresholds(), request_id="req_w", ranker=ranker,
                   semantic=encoder)


def test_words_first__a_title_holding_every_word_answers_without_the_encoder(tmp_path):
    model, encoder = first_model(tmp_path), CountingHashes()
    outcome = run_encoded("the dentist", model, encoder)
    assert encoder.calls == 0
    assert [c.uid for c in outcome.candidates] == ["dentist"] and outcome.status is Status.NEEDS_CLARIFICATION
    # The model's answer under its own name with the encoder: what the judge is told chose the candidates.
    assert outcome.question.retrieval == model.retrieval(encoder.name)


def test_words_first__an_approved_threshold_for_the_model_resolves_its_answer(tmp_path):
    """A certificate for the model (its name and fingerprint with the encoder) covers what it answers first."""
    model, encoder = first_model(tmp_path), CountingHashes()
    policy = Policy(model.scorer_name(encoder.name), model.fingerprint(encoder.name), threshold=0.9)
    outcome = run_encoded("the dentist", model, encoder, policy=policy)
    assert outcome.status is Status.OK and outcome.method is Method.SEMANTIC and outcome.item.uid == "dentist"
    assert encoder.calls == 0 and outcome.judgment.model == model.scorer_name(encoder.name)
    assert outcome.judgment.fingerprint == model.fingerprint(encoder.name)


def test_words_first__its_probability_is_the_words_first_variants(tmp_path):
    """Its own P(none) (surer than the words alone variant's), not the words alone variant's."""
    model, encoder = first_model(tmp_path), CountingHashes()
    first = run_encoded("the dentist", model, encoder,
                        policy=Policy(model.scorer_name(encoder.name), model.fingerprint(encoder.name), 0.0))
    alone = run("the dentist", model, policy=Policy(model.scorer_name(None), model.fingerprint(None), 0.0))
    assert first.status is Status.OK and alone.status is Status.OK and encoder.calls == 0
    # One candidate: its probability is 1 - P(none), and P(none)'s logits differ by the biases, 3 - 1.
    def none_logit(p: float) -> float:
        return math.log((1 - p) / p)

    assert first.judgment.probabilities["1"] > alone.judgment.probabilities["1"]
    assert none_logit(alone.judgment.probabilities["1"]) - none_logit(first.judgment.probabilities["1"]) \
        == pytest.approx(2.0, abs=0.01)


def test_words_first__under_its_threshold_the_encoder_is_asked(tmp_path):
    """Two portfolio tasks hold the word: neither is as probable as 0.9, and the encoder weighs them."""
    encoder = CountingHashes()
    outcome = run_encoded("portfolio", first_model(tmp_path), encoder)
    assert encoder.calls > 0 and {c.uid for c in outcome.candidates} == {"outline", "slides"}


def test_words_first__a_duplicate_title_is_never_answered_first(tmp_path):
    """Two items hold every word, equally: each has half, under 0.6, and the encoder is asked."""
    encoder = CountingHashes()
    outcome = run_encoded("plants", first_model(tmp_path, at=0.6), encoder)
    assert encoder.calls > 0 and {c.uid for c in outcome.candidates} == {"dup1", "dup2"}


def test_words_first__a_word_no_title_holds_asks_the_encoder(tmp_path):
    encoder = CountingHashes()
    run_encoded("dentist checkup", first_model(tmp_path), encoder)
    assert encoder.calls > 0


def test_words_first__a_model_without_the_variant_always_encodes(tmp_path):
    model, encoder = first_model(tmp_path, at=None), CountingHashes()
    assert model.words_first is None
    outcome = run_encoded("the dentist", model, encoder)
    assert encoder.calls > 0 and outcome.question.retrieval == model.retrieval(encoder.name)


def test_words_first__the_fingerprint_changes_with_its_threshold(tmp_path):
    assert first_model(tmp_path, at=0.9).fingerprint("e") != first_model(tmp_path, at=0.8).fingerprint("e")


@pytest.mark.parametrize("many", [29, 40])
def test_words_first__a_pool_crowded_with_titles_holding_every_word_skips_the_encoder_and_never_resolves(
        tmp_path, many):
    """40 titles hold "dentist": the words' best 30 all hold it, and the words first variant is not sure of one
    ("Dentist visit" leads, at 0.91, under the variant's 0.99). Its order is the answer without the encoder (as
    the fusion rule skipped it for a full pool of strong word matches), a clarification even under an approved
    threshold and margin of 0: no certificate covers it. With 29 the pool is not full, the encoder weighs them, and the same threshold
    resolves the model's first."""
    from resolver.domain.relevance import PREPOOL

    model, encoder = first_model(tmp_path, floor=0.001, weight=15.0, at=0.99), CountingHashes()
    items = [task("short", "Dentist visit")] + [task(f"d{n}", f"Dentists visits, kids {n} of {many}")
                                                for n in range(many - 1)]
    policy = Policy(model.scorer_name(encoder.name), model.fingerprint(encoder.name), threshold=0.0, margin=0.0)
    outcome = resolve(request=parse_request(text="dentist", kind="task"), calendar=MemoryCalendar(items=items),
                      judge=Judge(), policy=policy, request_id="req_c", ranker=model, semantic=encoder)
    if many >= PREPOOL:
        assert encoder.calls == 0 and outcome.status is Status.NEEDS_CLARIFICATION
        assert outcome.candidates[0].uid == "short" and outcome.reason is not Reason.NO_CANDIDATES
        assert outcome.question.retrieval == model.retrieval(encoder.name)
        assert any(w.code == "candidate_narrowed" for w in outcome.warnings)
    else:
        assert encoder.calls > 0 and outcome.status is Status.OK and outcome.method is Method.SEMANTIC
        assert outcome.item.uid == "short"


def test_words_first__a_crowded_pool_of_a_reference_naming_a_time_asks_the_encoder(tmp_path):
    """"dentist tomorrow" over 40 titles holding "dentist": the time tells them apart, so the pool is not crowded:
    the encoder's variant weighs them, as without the rule, and a certificate for it may resolve."""
    model, encoder = first_model(tmp_path, floor=0.001, weight=15.0, at=0.99), CountingHashes()
    items = [task("short", "Dentist visit")] + [task(f"d{n}", f"Dentists visits, kids {n} of 40") for n in range(39)]
    outcome = resolve(request=parse_request(text="dentist tomorrow", kind="task"),
                      calendar=MemoryCalendar(items=items), judge=Judge(), policy=NoThresholds(), request_id="req_t",
                      ranker=model, semantic=encoder)
    assert encoder.calls > 0 and outcome.candidates


@pytest.mark.parametrize("at", [0, -0.5, 1.5, "NaN"])
def test_words_first__a_threshold_outside_zero_to_one_is_refused(tmp_path, at):
    from resolver.domain.relevance import ModelFileError

    with pytest.raises(ModelFileError):
        first_model(tmp_path, at=float(at))


def test_ranker__one_of_two_equal_titles_the_pool_split_is_never_resolved(tmp_path):
    """Twins that differ in nothing but where the pool cut fell: 29 titles score higher for "water plants garden",
    so only one "Water the plants" is among the words' best 30; a model that prefers the weakest match makes
    that one sure. Resolving it would be an accident of the cut: the answer is a clarification (same_title).
    The control: with the other copy titled otherwise, the same model resolves one of the two."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"name": "fixture-weakest", "variants": {"words": {
        "features": ["lex_score"], "weights": [-30.0], "temperature": 1.0, "floor": 0.0,
        "none": {"features": ["best_lex"], "weights": [0.0], "bias": -6.0}}}}))
    weakest = RelevanceModel.load(path)
    policy = Policy(weakest.scorer_name(None), weakest.fingerprint(None), threshold=0.5)
    beds = [task(f"bed{k}", f"Water the plants in garden bed {k}") for k in range(29)]

    def run_with(second_title: str):
        items = beds + [task("twin1", "Water the plants"), task("twin2", second_title)]
        return resolve(request=parse_request(text="water plants garden", kind="task"),
                       calendar=MemoryCalendar(items=items), judge=Judge(), policy=policy, request_id="req_t",
                       ranker=weakest)

    twins = run_with("Water the plants")
    assert twins.status is Status.NEEDS_CLARIFICATION
    assert len([c for c in twins.candidates if c.uid.startswith("twin")]) == 1  # the cut split them
    control = run_with("Water the plants by the door")
    assert control.status is Status.OK and control.method is Method.SEMANTIC and control.item.uid.startswith("twin")

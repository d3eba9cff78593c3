"""Core scenarios through the service function, against the live test calendar."""
from __future__ import annotations

import pytest

from resolver import services
from resolver.calendars.caldav import CalDAVCalendar
from resolver.domain.errors import CalendarUnavailable, CollectionNotFound, InvalidRequest
from resolver.domain.items import Method, derive_item_id
from resolver.domain.codes import Reason
from resolver.domain.pipeline import Status
from tests.support.calendars import BULK_COUNT, listed_at_most
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.django_db


def resolve(text: str, kind: str = "task", collection_ids: list[str] | None = None):
    return resolve_outcome(text=text, kind=kind, collection_ids=collection_ids)


def uids(outcome) -> list[str]:
    return [item.uid for item in outcome.candidates]


def test_resolve__exact_title(live):
    outcome = resolve("Draft portfolio outline")
    assert outcome.status is Status.OK
    assert outcome.method is Method.DETERMINISTIC
    assert outcome.item.uid == "t-portfolio"
    assert outcome.item.collection_id == "work"
    assert outcome.item.etag.startswith('"')


def test_resolve__exact_uid(live):
    outcome = resolve("t-slides")
    assert (outcome.status, outcome.item.title) == (Status.OK, "Review portfolio slides")


def test_resolve__exact_item_id(live):
    item_id = resolve("Draft portfolio outline").item.item_id
    outcome = resolve(item_id)
    assert outcome.status is Status.OK and outcome.item.uid == "t-portfolio"


def test_resolve__item_id_is_derived_from_path_and_uid(live):
    item = resolve("Draft portfolio outline").item
    path = [c for c in services.list_collections() if c.collection_id == "work"][0].url_path
    assert item.item_id == derive_item_id(path, "t-portfolio")


def test_resolve__case_and_whitespace(live):
    outcome = resolve("   dRAFT PORTFOLIO outline \t")
    assert outcome.status is Status.OK and outcome.item.uid == "t-portfolio"


def test_resolve__title_with_inner_spaces_is_trimmed_only(live):
    assert resolve("padded   title").item.uid == "t-spaces"


def test_resolve__casefold_nfkc(live):
    outcome = resolve("STRASSE REPARIEREN")
    assert outcome.status is Status.OK and outcome.item.uid == "t-strasse"


def test_resolve__uid_must_match_exactly(live):
    """IDs and UIDs are compared as given; only titles are trimmed."""
    assert resolve(" t-slides").status is Status.NEEDS_CLARIFICATION


def test_resolve__duplicate_titles_across_collections_clarify(live):
    outcome = resolve("Team offsite planning")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.method is Method.DETERMINISTIC
    assert sorted(uids(outcome)) == ["t-offsite-personal", "t-offsite-work"]
    assert {item.collection_id for item in outcome.candidates} == {"work", "personal"}


def test_resolve__duplicate_titles_resolve_within_one_collection(live):
    outcome = resolve("Team offsite planning", collection_ids=["personal"])
    assert outcome.status is Status.OK and outcome.item.uid == "t-offsite-personal"


@pytest.mark.parametrize("text", ["Pay invoice", "Cancelled errand", "File taxes", "t-paid", "t-cancelled"])
def test_resolve__closed_tasks_never_resolve(live, text):
    outcome = resolve(text)
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert not {"t-paid", "t-cancelled", "t-completed-date"} & set(uids(outcome))


@pytest.mark.parametrize(("text", "kind", "title", "status"), [
    ("Pay invoice", "task", "Pay invoice", "COMPLETED"),
    ("t-cancelled", "task", "Cancelled errand", "CANCELLED"),
    ("Cancelled launch", "event", "Cancelled launch", "CANCELLED"),
])
def test_resolve__a_closed_items_title_answers_nothing_open_and_names_it(live, text, kind, title, status):
    outcome = resolve(text, kind=kind)
    assert outcome.reason is Reason.NO_CANDIDATES and outcome.candidates == ()
    (warning,) = [w for w in outcome.warnings if w.code == "closed_item_matched"]
    assert [(i["title"], i["status"]) for i in warning.details["items"]] == [(title, status)]
    assert "completed or cancelled" in outcome.prompt


@pytest.mark.parametrize("text", ["Past retro", "Far future gala", "Draft portfolio outline"])
def test_resolve__an_ended_or_far_event_or_a_live_title_names_nothing_closed(live, text):
    outcome = resolve(text, kind="task" if text.startswith("Draft") else "event")
    assert not [w for w in outcome.warnings if w.code == "closed_item_matched"]


def test_resolve__task_without_status_is_open(live):
    assert resolve("Call the plumber").item.uid == "t-nostatus"


@pytest.mark.parametrize("text", ["Past retro", "Cancelled launch", "Far future gala"])
def test_resolve__past_cancelled_and_far_events_never_resolve(live, text):
    outcome = resolve(text, kind="event")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert not {"e-past", "e-cancelled", "e-far"} & set(uids(outcome))


def test_resolve__recurring_series_started_long_ago(live):
    outcome = resolve("weekly sync", kind="event")
    assert outcome.status is Status.OK and outcome.item.uid == "e-weekly"
    assert outcome.item.start is not None


def test_resolve__ongoing_event(live):
    assert resolve("Ongoing conference", kind="event").item.uid == "e-ongoing"


def test_resolve__kind_mismatch(live):
    assert resolve("Design review", kind="task").status is Status.NEEDS_CLARIFICATION
    assert resolve("Draft portfolio outline", kind="event").status is Status.NEEDS_CLARIFICATION


class SecondReads:
    """The configured calendar, its second reads in a request (`fetch_since`) recorded."""

    def __init__(self, inner) -> None:
        self.inner, self.again = inner, []

    def collections(self):
        return self.inner.collections()

    def fetch(self, **kwargs):
        return self.inner.fetch(**kwargs)

    def fetch_since(self, **kwargs):
        result = self.inner.fetch_since(**kwargs)
        self.again.append(result)
        return result


def test_resolve__warm_the_other_kind_is_named_from_the_first_reads_answer(live):
    """An event's title asked as a task reads the events too (other_kind_matched). Once both kinds were read
    at one sync token, the tasks' sync shows the events' changes as well (reader._carry): the events' read in
    the same request sends nothing (how changes are carried: tests/calendars/test_reader.py)."""
    calendar = SecondReads(services.calendar_for(None))
    for _ in range(2):
        outcome = resolve_outcome(text="Design review", kind="task", calendar=calendar)
        assert outcome.reason is Reason.NO_CANDIDATES
        assert [w.details["items"][0]["title"] for w in outcome.warnings if w.code == "other_kind_matched"] \
            == ["Design review"]
    assert calendar.again[-1].requests == 0
    assert calendar.again[-1].read_at == outcome.read_at


def test_resolve__partial_reference_clarifies_with_ranked_candidates(live):
    outcome = resolve("portfolio")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert set(uids(outcome)) == {"t-portfolio", "t-slides"}
    assert outcome.warnings[0].code == "judgment_unavailable"
    assert outcome.warnings[0].details == {"reason": "disabled"}


def test_resolve__typo_reference(live):
    outcome = resolve("portfolo outlne")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert uids(outcome)[0] == "t-portfolio"


def test_resolve__more_than_19_matches_are_narrowed(live):
    outcome = resolve("bulk chore")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert len(outcome.candidates) == listed_at_most() < BULK_COUNT
    narrowed = [w for w in outcome.warnings if w.code == "candidate_narrowed"]
    # "matched" is how many reached the model's floor: the 25 chores share a probability of about 1/25 of
    # what P(none) leaves, near the floor, so it may be fewer than 25, never fewer than are listed.
    assert narrowed and narrowed[0].details["kept"] == listed_at_most()
    assert listed_at_most() < narrowed[0].details["matched"] <= BULK_COUNT
    assert "narrow" in outcome.prompt


def test_resolve__empty_pool(live):
    outcome = resolve("xylophone quartet")
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.candidates == ()
    assert "Rephrase" in outcome.prompt


def test_resolve__stopwords_alone_make_no_candidate(live):
    assert resolve("the").candidates == ()
    assert resolve("to a the").candidates == ()


def test_resolve__untitled_item_matches_by_uid(live):
    outcome = resolve("t-untitled")
    assert outcome.status is Status.OK and outcome.item.title == ""


def test_resolve__unknown_collection_is_an_error(live):
    with pytest.raises(CollectionNotFound) as caught:
        resolve("Draft portfolio outline", collection_ids=["nope"])
    assert caught.value.details == {"collection_ids": ["nope"], "known_collection_ids": ["bulk", "personal", "work"]}
    assert caught.value.message == "Unknown collection ID `nope`; known: bulk, personal, work."


@pytest.mark.parametrize("text", ["", "   ", "x" * 501])
def test_resolve__invalid_text(live, text):
    with pytest.raises(InvalidRequest):
        resolve(text)


def test_resolve__invalid_kind(live):
    with pytest.raises(InvalidRequest):
        resolve("Weekly sync", kind="meeting")


def test_list_collections(live):
    assert [c.collection_id for c in services.list_collections()] == ["bulk", "personal", "work"]


def test_resolve__unreachable_server_is_calendar_unavailable():
    calendar = CalDAVCalendar(url="http://127.0.0.1:9/", username="u", password="p", timeout=2)
    with pytest.raises(CalendarUnavailable) as caught:
        resolve_outcome(text="x", kind="task", calendar=calendar)
    assert caught.value.details["reason"] in {"unreachable", "timeout"}

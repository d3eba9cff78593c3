"""Exact matching, candidate scoring, ranking and narrowing (no server)."""
from __future__ import annotations

import pytest

from resolver.domain.items import Kind, make_item, normalise
from resolver.domain.matching import build_pool, exact_matches, score_candidates


def item(uid: str, title: str, collection: str = "work"):
    return make_item(collection_path=f"/u/{collection}/", uid=uid, title=title, etag='"1"', kind=Kind.TASK)


ITEMS = [
    item("a", "Draft portfolio outline"),
    item("b", "Review portfolio slides"),
    item("c", "Weekly sync – design"),
    item("d", "Weekly sync – platform"),
    item("e", "Straße reparieren"),
    item("f", "The report"),
]


def test_normalise__nfkc_casefold_trim():
    assert normalise("  STRASSE ") == normalise("straße") == "strasse"
    assert normalise("ﬁle") == "file"  # NFKC ligature


def test_exact__title_uid_and_id():
    assert [i.uid for i in exact_matches("draft PORTFOLIO outline ", ITEMS)] == ["a"]
    assert [i.uid for i in exact_matches("b", ITEMS)] == ["b"]
    assert [i.uid for i in exact_matches(ITEMS[2].item_id, ITEMS)] == ["c"]


def test_exact__duplicates_are_all_returned():
    dupes = [item("x", "Same"), item("y", "same", collection="home")]
    assert {i.uid for i in exact_matches("SAME", dupes)} == {"x", "y"}


def test_score__partial_and_typo():
    assert {c.item.uid for c in score_candidates("portfolio", ITEMS)} == {"a", "b"}
    assert score_candidates("portfolo outlne", ITEMS)[0].item.uid == "a"
    assert score_candidates("strasse", ITEMS)[0].item.uid == "e"


def test_score__prefix_of_a_word():
    assert {c.item.uid for c in score_candidates("portf", ITEMS)} == {"a", "b"}


def test_score__stopwords_alone_never_match():
    assert score_candidates("the", ITEMS) == []
    assert score_candidates("to a the of", ITEMS) == []


def test_score__unrelated_text_matches_nothing():
    assert score_candidates("xylophone", ITEMS) == []


def test_score__ties_are_broken_deterministically():
    twins = [item(str(n), "Weekly sync") for n in range(5)]
    first = [c.item.item_id for c in score_candidates("weekly", twins)]
    second = [c.item.item_id for c in score_candidates("weekly", list(reversed(twins)))]
    assert first == second == sorted(first)


def test_score__better_match_ranks_first():
    ranked = [c.item.uid for c in score_candidates("weekly sync design", ITEMS)]
    assert ranked[0] == "c" and "d" in ranked


def test_pool__narrows_to_limit_and_reports_matched():
    many = [item(f"n{n}", f"Bulk chore {n}") for n in range(30)]
    pool = build_pool("bulk", many, limit=19)
    assert len(pool.candidates) == 19 and pool.matched == 30 and pool.narrowed
    assert not build_pool("portfolio", ITEMS, limit=19).narrowed


# -- issue 21: clitics, folding, date alone ----------------------------------------------------------

from datetime import datetime, timedelta  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

from resolver.domain.items import Occurrence  # noqa: E402
from resolver.domain.matching import title_naming_words  # noqa: E402
from resolver.domain.timeexpr import find_time_expression  # noqa: E402
from resolver.domain.times import when_from_iso  # noqa: E402

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 11, 9, 0, tzinfo=BERLIN)  # a Monday


def dated(uid: str, title: str, due: str | None, collection: str = "work"):
    return make_item(collection_path=f"/u/{collection}/", uid=uid, title=title, etag='"1"', kind=Kind.TASK,
                     due=when_from_iso(due), status="NEEDS-ACTION")


def pool(text: str, items, limit: int = 19):
    expression = find_time_expression(text, now=NOW, tz=BERLIN)
    rest = expression.rest if expression else text
    return build_pool(rest, items, limit=limit, time_range=expression.range if expression else None, tz=BERLIN,
                      bonus_words=expression.expression.split() if expression else ())


def test_clitics__a_possessive_is_not_a_word_s():
    items = [item("z", "Fix Zara's bike"), item("t", "Tom's review"), item("l", "Lena's notes"),
             item("b", "Bike shed")]
    # Before, "s" matched every possessive title: Tom's and Lena's ranked with Zara's.
    assert [c.item.uid for c in score_candidates("Zara's", items)] == ["z"]
    assert {c.item.uid for c in score_candidates("zara’s bike", items)} == {"z", "b"}
    assert score_candidates("zara’s bike", items)[0].item.uid == "z"


def test_clitics__whats_is_not_a_prefix_of_whatsapp():
    items = [item("w", "Whatsapp group for the launch"), item("i", "Incident report")]
    assert [c.item.uid for c in score_candidates("what's the incident report", items)] == ["i"]


def test_folding__a_name_without_its_accent_is_an_exact_word():
    items = [item("b", "Call Björn about the lease"), item("n", "Call the bank"), item("o", "Call Bjorg")]
    ranked = score_candidates("call bjorn", items)
    assert ranked[0].item.uid == "b"
    assert ranked[0].score > ranked[1].score


def test_folding__accented_reference_finds_a_plain_title():
    items = [item("r", "Update my resume"), item("s", "Resubmit the form")]
    assert score_candidates("résumé", items)[0].item.uid == "r"


@pytest.mark.parametrize("reference", ["zuerich office", "zurich office", "Zürich office", "ZUERICH office"])
def test_folding__german_transliterations_are_the_same_word(reference):
    items = [item("z", "Zürich office visit"), item("h", "Home office setup"), item("a", "Zurigo trip")]
    assert score_candidates(reference, items)[0].item.uid == "z"


def test_folding__umlaut_spelling_in_the_title_too():
    items = [item("m", "Send the Mueller contract"), item("c", "Send the contract")]
    assert score_candidates("müller contract", items)[0].item.uid == "m"


def test_folding__strasse_and_sharp_s():
    items = [item("k", "Pick up keys at Hauptstraße 12"), item("p", "Pick up parcel")]
    assert score_candidates("keys hauptstrasse", items)[0].item.uid == "k"


def test_folding__exact_title_match_is_not_folded():
    """Invariant 1: a deterministic match is the title trimmed and case-folded, nothing more."""
    items = [item("a", "Lunch with André")]
    assert exact_matches("lunch with andre", items) == []
    assert [i.uid for i in exact_matches("LUNCH WITH ANDRÉ ", items)] == ["a"]
    assert [i.uid for i in exact_matches("Fix Zara's bike", [item("z", "Fix Zara's bike")])] == ["z"]
    assert exact_matches("Fix Zara bike", [item("z", "Fix Zara's bike")]) == []


CALENDAR = [
    dated("fri1", "Finish portfolio outline", "2027-01-15"),
    dated("fri2", "Submit expense report", "2027-01-15T17:00:00+01:00"),
    dated("fri3", "Fix the gutters", "2027-01-15", collection="home"),
    dated("mon", "Order toner", "2027-01-18"),
    dated("late1", "Return the rental car keys", "2027-01-10", collection="home"),
    dated("late2", "Submit the December timesheet", "2027-01-05T17:00:00+01:00"),
    dated("today", "Call the plumber", "2027-01-11"),
    dated("none", "Weekly report", None),
]


@pytest.mark.parametrize("reference", [
    "what do I have due on Friday", "anything due Friday?", "whatever is due on Friday", "the stuff due Friday",
    "tasks due on Friday", "what's due Friday", "todo for Friday",
])
def test_date_alone__fillers_name_no_title(reference):
    found = pool(reference, CALENDAR)
    assert {c.item.uid for c in found.candidates} == {"fri1", "fri2", "fri3"}
    assert all(c.in_range for c in found.candidates)


def test_date_alone__nearest_first():
    found = pool("what's due on Friday", CALENDAR)
    assert [c.item.uid for c in found.candidates][-1] == "fri2"  # due at 17:00, after the two all-day ones


def test_date_alone__overdue_is_a_range_before_now():
    found = pool("what's overdue", CALENDAR)
    # Due before now; "Call the plumber" is due today, not yet overdue; undated is never overdue.
    assert [c.item.uid for c in found.candidates] == ["late2", "late1"]


def test_date_alone__a_collection_name_is_weak_evidence():
    found = pool("the home stuff due Friday", CALENDAR)
    uids = [c.item.uid for c in found.candidates]
    assert uids[0] == "fri3"
    assert set(uids) == {"fri1", "fri2", "fri3"}  # evidence, not a filter


def test_date_alone__narrowed_and_disclosed():
    many = [dated(f"t{n}", f"Task number {n}", "2027-01-15") for n in range(30)]
    found = pool("what's due Friday", many)
    assert len(found.candidates) == 19 and found.matched == 30 and found.narrowed


def test_date_alone__a_title_word_keeps_the_ranking():
    found = pool("expense report due Friday", CALENDAR)
    assert found.candidates[0].item.uid == "fri2"
    assert "mon" not in {c.item.uid for c in found.candidates}


def test_date_alone__words_matching_no_title_fall_back_to_the_date():
    found = pool("the zyxwv thing on Friday", CALENDAR)
    assert {c.item.uid for c in found.candidates} == {"fri1", "fri2", "fri3"}


def test_date_alone__not_for_words_matching_no_title_when_the_caller_weighs_the_encoders_titles():
    """The relevance model with the encoder: an empty pool, not Friday's items; fillers alone still ask by date."""
    expression = find_time_expression("the zyxwv thing on Friday", now=NOW, tz=BERLIN)
    found = build_pool(expression.rest, CALENDAR, limit=19, time_range=expression.range, tz=BERLIN,
                       unmatched_by_date=False)
    assert found.candidates == () and not found.by_date
    fillers = find_time_expression("what do I have on Friday", now=NOW, tz=BERLIN)
    assert build_pool(fillers.rest, CALENDAR, limit=19, time_range=fillers.range, tz=BERLIN,
                      unmatched_by_date=False).by_date


def test_title_naming_words__fillers_and_collections_set_aside():
    assert title_naming_words("what do I have at home", CALENDAR) == []
    assert title_naming_words("my meetings", CALENDAR) == []
    assert title_naming_words("the gutters at home", CALENDAR) == ["gutters"]


def test_date_alone__events_by_occurrence():
    def event(uid, title, start):
        begin = datetime.fromisoformat(start)
        occurrence = Occurrence(start=begin, end=begin + timedelta(hours=1))
        return make_item(collection_path="/u/work/", uid=uid, title=title, etag='"1"', kind=Kind.EVENT,
                         start=begin, occurrences=(occurrence,))
    events = [event("a", "Board meeting", "2027-01-21T15:00:00+01:00"),
              event("b", "Lunch with André", "2027-01-21T12:30:00+01:00"),
              event("c", "Standup", "2027-01-22T09:30:00+01:00")]
    found = pool("my meetings on the 21st", events)
    assert [c.item.uid for c in found.candidates] == ["b", "a"]


def test_fillers__a_filler_alone_still_matches_as_a_beginning():
    """"wanna" is all the reference has: it may begin "Wannabes" (a filler only steps aside beside other words)."""
    items = [item("w", "The Wannabes"), item("x", "Whatsapp backup")]
    assert [c.item.uid for c in build_pool("wanna", items, limit=19).candidates] == ["w"]
    assert [c.item.uid for c in build_pool("what's the backup", items, limit=19).candidates] == ["x"]


def test_title_naming_words__a_collection_name_that_is_also_a_title_word_names_a_title():
    items = [item("t", "Transition is from 8am", collection="timezone-transition"), item("g", "Water", "garden")]
    assert title_naming_words("transition", items) == ["transition"]
    assert title_naming_words("garden", items) == []


def test_pool__a_limited_pool_is_the_head_of_the_full_ranking_through_long_ties():
    """Only the rows that can reach the first `limit` get their full key (soonest, title, ...): the
    head must still be exactly what ranking every candidate gives, ties and all."""
    teams = ["design", "platform", "sales", "ops", "data", "growth", "mobile", "web"]
    tied = [item(f"w{n}", f"Weekly sync {team}", collection=("work", "home")[n % 2])
            for n, team in enumerate(teams * 3)]
    tied += [item("s", "Weekly sync"), item("r", "Weekly report"), item("x", "Sync the weekly notes")]
    full = score_candidates("weekly sync", tied)
    for limit in (1, 2, 5, 8, 19, 40):
        pool = build_pool("weekly sync", tied, limit=limit)
        assert [(c.item.item_id, c.score) for c in pool.candidates] == [(c.item.item_id, c.score)
                                                                        for c in full[:limit]]
        assert pool.matched == len(full)


# -- the memo's title indexes ------------------------------------------------

def _titled(*titles: str) -> tuple:
    return tuple(make_item(collection_path="/u/c/", uid=f"u{n}", title=t, etag='"1"', kind=Kind.TASK)
                 for n, t in enumerate(titles))


def test_memo__the_same_items_in_a_new_sequence_reuse_the_index_without_their_titles(monkeypatch):
    from resolver.domain import matching

    memo = matching.MatchingMemo()
    items = _titled("Renew passport", "Pay rent", "Book dentist")
    index = memo.index(items)
    # What a reader gives for an unchanged collection: the very Items, in a new tuple.
    monkeypatch.setattr(matching, "TitleIndex", lambda *a, **k: pytest.fail("index built again"))
    calls = []
    monkeypatch.setattr(matching.MatchingMemo, "_by_titles", property(lambda self: calls.append(1) or {}),
                        raising=False)
    assert memo.index(tuple(list(items))) is index
    assert calls == []  # not looked up by content: no title_key read, no hash of them all


def test_memo__equal_items_that_are_other_objects_are_looked_up_by_their_titles():
    from resolver.domain import matching

    memo = matching.MatchingMemo()
    index = memo.index(_titled("Renew passport", "Pay rent"))
    assert memo.index(_titled("Renew passport", "Pay rent")) is index
    changed = memo.index(_titled("Renew passport", "Pay the rent"))
    assert changed is not index
    assert not matching._same_items(_titled("Renew passport"), _titled("Renew passport"))


def test_score__each_candidate_says_what_it_leaves_over_on_both_sides():
    """The relevance model compares a reference word no title word matches with the title words no
    reference word covers ("violin" where "piano" is): the matcher says which they are."""
    items = [make_item(collection_path="/u/home/", uid=uid, title=title, etag='"1"', kind=Kind.TASK)
             for uid, title in (("recital", "Zara's piano recital"), ("cab", "Customer advisory board prep"),
                                ("tap", "Fix the leaking kitchen tap"))]

    def first(reference: str):
        found = score_candidates(reference, items)[0]
        return found.item.uid, found.left_over, found.uncovered

    assert first("Zara's violin recital") == ("recital", ("violin",), ("piano",))
    assert first("fix the bathroom tap") == ("tap", ("bathroom",), ("leaking", "kitchen"))
    assert first("CAB prep") == ("cab", (), ())  # initials cover the words they span
    assert first("piano recitals") == ("recital", (), ("zara",))  # a stem covers; stopwords are never left over


def test_score__a_typo_is_at_most_two_letters_mistyped():
    from resolver.domain.matching import _edits

    """rapidfuzz's ratio lets long words differ by more than a typo: "Wasserkostenabrechnung" (the water bill)
    reads 81 against "Heizkostenabrechnung" (the heating bill), 8 insertions and deletions apart. A typo match
    is at most TYPO_EDITS apart; a swap of two letters and a missing one still are."""
    items = [make_item(collection_path="/u/home/", uid=uid, title=title, etag='"1"', kind=Kind.TASK)
             for uid, title in (("heat", "Heizkostenabrechnung prüfen"), ("folio", "Draft portfolio outline"))]
    found = score_candidates("Wasserkostenabrechnung prüfen", items)
    assert [c.item.uid for c in found] == ["heat"]
    assert found[0].left_over == ("wasserkostenabrechnung",)  # matched by "prüfen" alone
    assert score_candidates("Wasserkostenabrechnung", items) == []
    assert [c.item.uid for c in score_candidates("protfolio", items)] == ["folio"]  # two letters swapped
    assert [c.item.uid for c in score_candidates("heizkostenabrechnng", items)] == ["heat"]  # one missing
    assert _edits("wasserkostenabrechnung", "heizkostenabrechnung", 80.952) == 8


def test_score__words_written_apart_find_a_title_that_joins_them_beside_one_that_does_not():
    """"kick-off" for "Quarterly all-company kickoff" also when another title writes "kick-off" apart: both
    are offered, neither unmatched."""
    items = [make_item(collection_path="/u/work/", uid=uid, title=title, etag='"1"', kind=Kind.EVENT)
             for uid, title in (("dinner", "Offsite kick-off dinner"), ("kickoff", "Quarterly all-company kickoff"),
                                ("other", "Planning"))]
    found = {c.item.uid: c for c in score_candidates("kick-off", items)}
    assert set(found) == {"dinner", "kickoff"}
    assert found["kickoff"].left_over == () and found["dinner"].left_over == ()

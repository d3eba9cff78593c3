"""Exact matching, candidate scoring, ranking and narrowing (no server)."""
from __future__ import annotations

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

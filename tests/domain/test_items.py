"""Normalisation of titles and references: the exact key, clitics, diacritic folding."""
from __future__ import annotations

import pytest

from resolver.domain.items import MAX_TITLE_CHARS, Kind, fold, make_item, match_key, normalise, strip_clitics, umlaut_variant


def task(title: str):
    return make_item(collection_path="/u/work/", uid="u", title=title, etag='"1"', kind=Kind.TASK)


@pytest.mark.parametrize("text, stripped", [
    ("zara's bike", "zara bike"),
    ("zara’s bike", "zara bike"),            # the typographic apostrophe
    ("what's overdue", "what overdue"),
    ("we'll see", "we see"),
    ("they're late", "they late"),
    ("i've got it", "i got it"),
    ("i'd go", "i go"),
    ("i'm in", "i in"),
    ("don't forget", "do forget"),
    ("isn't it", "is it"),
    ("can't forget", "can forget"),
    ("won't do", "will do"),
    ("shan't go", "shall go"),
    ("réunion de l'équipe", "réunion de équipe"),   # French elision
    ("qu'il", "il"),
    ("parents' evening", "parents' evening"),       # a plural possessive is already its word
    ("rock n roll", "rock n roll"),
])
def test_strip_clitics__each_clitic_both_apostrophes(text, stripped):
    assert strip_clitics(text) == stripped


@pytest.mark.parametrize("text, folded", [
    ("björn", "bjorn"),
    ("andré", "andre"),
    ("zürich", "zurich"),
    ("crème brûlée", "creme brulee"),
    ("søren", "soren"),
    ("æsop", "aesop"),
    ("œuvre", "oeuvre"),
    ("łódź", "lodz"),
    ("são paulo", "sao paulo"),
    ("malmö", "malmo"),
    ("plain ascii", "plain ascii"),
])
def test_fold__diacritics_dropped(text, folded):
    assert fold(text) == folded


def test_fold__sharp_s_is_ss_already_in_the_key():
    assert normalise("Hauptstraße") == "hauptstrasse"
    assert match_key("Hauptstraße") == match_key("HAUPTSTRASSE") == "hauptstrasse"


@pytest.mark.parametrize("word, variant", [
    ("zuerich", "zurich"), ("mueller", "muller"), ("koeln", "koln"), ("waesche", "wasche"),
    ("bjoern", "bjorn"), ("zurich", None), ("plain", None),
])
def test_umlaut_variant__german_spellings_undone(word, variant):
    assert umlaut_variant(word) == variant


def test_make_item__words_folded_and_stripped_key_exact():
    item = task("Call Björn about Zara's bike")
    # The exact key stays the title trimmed and case-folded (invariant 1) ...
    assert item.title_key == "call björn about zara's bike"
    # ... while the words matching compares are folded and free of clitics: no word "s".
    assert item.title_tokens == ("call", "bjorn", "about", "zara", "bike")
    assert "s" not in item.title_words


def test_match_key__reference_side_is_the_same_function():
    assert match_key("  Zara’s BJÖRN ") == "zara bjorn"


def test_scored_part__a_long_key_is_scored_up_to_the_bound_at_a_word_end():
    from resolver.domain.items import TITLE_SCORED_CHARS, scored_part

    key = "renew " + "word " * 100
    part = scored_part(key)
    assert len(part) <= TITLE_SCORED_CHARS and part.endswith("word") and key.startswith(part)
    assert scored_part("short title") == "short title"
    # One word longer than the bound (a text without spaces) keeps its beginning rather than nothing.
    assert scored_part("x" * 400) == "x" * TITLE_SCORED_CHARS


def test_make_item__words_past_the_scored_bound_are_not_matched_but_the_exact_title_is():
    from resolver.domain.items import TITLE_SCORED_CHARS
    from resolver.domain.matching import exact_matches

    title = "Quarterly budget review " + "with notes " * 30 + "zeppelin"
    assert TITLE_SCORED_CHARS < len(title) <= MAX_TITLE_CHARS
    item = make_item(collection_path="/u/c/", uid="u", title=title, etag='"e"', kind=Kind.TASK)
    assert "zeppelin" not in item.title_tokens and "budget" in item.title_words
    assert item.title == title and not item.title_truncated
    assert exact_matches(title.upper(), [item]) == [item]


def test_kind__the_other_kind_and_its_article():
    assert (Kind.TASK.other, Kind.EVENT.other) == (Kind.EVENT, Kind.TASK)
    assert (Kind.TASK.with_article, Kind.EVENT.with_article) == ("a task", "an event")

"""Exact matching, candidate scoring, ranking and narrowing.

Scoring uses rapidfuzz: its C++ scorers handle typos (edit distance), token
order and partial titles, and are fast enough to score tens of thousands of
titles per request. Candidates are found in two steps so that cost stays
small on big calendars: the reference's words are matched (exactly, by
prefix, or within a small edit distance) against the vocabulary of all titles,
and only titles containing a matched word are scored in full.

Every title's words are split once, when its item is built (`Item.title_words`),
so a request does no per-title regex work: the vocabulary is a set union, a
title is a hit when its words meet the matched ones, the reference's words are
compared with the whole vocabulary in one rapidfuzz call, and each distinct
title is scored once. (bench/resolve.py measures this step alone.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain, compress
from operator import attrgetter, not_
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz, process

from resolver.domain.items import STOPWORDS, Item, normalise, words_of

__all__ = ["STOPWORDS", "Pool", "ScoredCandidate", "build_pool", "exact_matches", "score_candidates",
           "significant_words"]

_TITLE_WORDS = attrgetter("title_words")
_SCORE = attrgetter("score")
# The same fields as _order_key, read from a candidate's item.
_CANDIDATE_ORDER = attrgetter("item.title_key", "item.collection_id", "item.item_id")


@dataclass(frozen=True, slots=True)  # slots: thousands are built per request on big calendars
class ScoredCandidate:
    item: Item
    score: float


@dataclass(frozen=True)
class Pool:
    candidates: tuple[ScoredCandidate, ...]
    matched: int  # how many items matched before narrowing

    @property
    def narrowed(self) -> bool:
        return self.matched > len(self.candidates)


def exact_matches(text: str, items: Sequence[Item]) -> list[Item]:
    """Items whose ID or UID equals the text, or whose title equals it after normalising."""
    key = normalise(text)
    found: dict[str, Item] = {}
    for item in items:
        if item.item_id == text or item.uid == text or (key and item.title_key == key):
            found.setdefault(item.item_id, item)
    return sorted(found.values(), key=_order_key)


def _order_key(item: Item) -> tuple[str, str, str]:
    return (item.title_key, item.collection_id, item.item_id)


def significant_words(text: str) -> list[str]:
    return list(words_of(normalise(text)))


def _word_cutoff(word: str) -> float:
    # Short words need a closer match: one typo in four letters is a different word.
    if len(word) <= 3:
        return 101.0  # exact or prefix only
    if len(word) == 4:
        return 75.0
    return 80.0


def _matched_vocabulary(words: Sequence[str], vocabulary: set[str]) -> set[str]:
    """The vocabulary's tokens that match a word exactly, by prefix, or within a small edit distance."""
    matched = {word for word in words if word in vocabulary}
    tokens = list(vocabulary)
    fuzzy = [word for word in words if _word_cutoff(word) <= 100]
    if fuzzy:
        # One pass over the vocabulary for all words, not one per word: the
        # tokens are converted for rapidfuzz once. float64 keeps the scores
        # exactly as a per-word `process.extract(score_cutoff=...)` compares them.
        table = process.cdist(fuzzy, tokens, scorer=fuzz.ratio, dtype=np.float64,
                              score_cutoff=min(_word_cutoff(word) for word in fuzzy))
        for word, row in zip(fuzzy, table):
            matched.update(map(tokens.__getitem__, np.flatnonzero(row >= _word_cutoff(word)).tolist()))
    prefixes = [word for word in words if len(word) >= 3]
    if prefixes:
        # Tokens are runs of \w, each after a newline here, so `\nword\w*` finds
        # exactly the tokens that start with `word`; the literal newline-and-word
        # lets the regex engine jump between candidates instead of trying every position.
        lines = "\n" + "\n".join(tokens)
        for word in prefixes:
            matched.update(re.findall("\n(" + re.escape(word) + r"\w*)", lines))
    return matched


def score_candidates(text: str, items: Sequence[Item]) -> list[ScoredCandidate]:
    """Every item that plausibly matches the reference, best first, ties broken stably."""
    words = significant_words(text)
    if not words or not items:
        return []
    # map() and compress() keep the per-title steps in C: at 20,000 titles a
    # Python-level loop here costs more than the scoring itself.
    title_words = list(map(_TITLE_WORDS, items))
    vocabulary = set(chain.from_iterable(title_words))
    matched = _matched_vocabulary(words, vocabulary)
    if not matched:
        return []
    # A title is a hit when one of its words was matched: the same titles a
    # word-boundary regex over the title finds, without running one per title.
    hits = list(compress(range(len(title_words)), map(not_, map(matched.isdisjoint, title_words))))
    if not hits:
        return []
    # Equal words score equally: score each distinct title once (calendars
    # repeat titles: "Weekly report", "Call mum").
    hit_words = list(map(title_words.__getitem__, hits))
    distinct = list(dict.fromkeys(hit_words))
    query = " ".join(words)
    scores = process.cdist([query], list(map(" ".join, distinct)), scorer=fuzz.WRatio, dtype="float32")[0].tolist()
    # round() is exact but slow (it goes through the decimal digits); scores
    # repeat a lot, so each distinct value is rounded once.
    rounded = {value: round(value, 2) for value in set(scores)}
    score_of = dict(zip(distinct, map(rounded.__getitem__, scores)))
    scored = list(map(ScoredCandidate, map(items.__getitem__, hits), map(score_of.__getitem__, hit_words)))
    # Best score first, ties in _order_key order: two stable sorts with C-level
    # keys give the same order as one sort on (-score, *_order_key), faster.
    scored.sort(key=_CANDIDATE_ORDER)
    scored.sort(key=_SCORE, reverse=True)
    return scored


def build_pool(text: str, items: Sequence[Item], *, limit: int) -> Pool:
    scored = score_candidates(text, items)
    return Pool(candidates=tuple(scored[:limit]), matched=len(scored))

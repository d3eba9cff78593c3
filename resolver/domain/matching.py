"""Exact matching, candidate scoring, ranking and narrowing.

Scoring uses rapidfuzz: its C++ scorers handle typos (edit distance), token
order and partial titles, and are fast enough to score tens of thousands of
titles per request. Candidates are found in two steps so that cost stays
small on big calendars: the reference's words are matched (exactly, by
prefix, or within a small edit distance) against the vocabulary of all titles,
and only titles containing a matched word are scored in full.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from rapidfuzz import fuzz, process

from resolver.domain.items import Item, normalise

# Words that never make an item a candidate on their own.
STOPWORDS = frozenset(
    """a an the to of for on in at by and or with from my our your this that is are be
    it its me we i up""".split()
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
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
    return [w for w in _WORD.findall(normalise(text)) if w not in STOPWORDS]


def _word_cutoff(word: str) -> float:
    # Short words need a closer match: one typo in four letters is a different word.
    if len(word) <= 3:
        return 101.0  # exact or prefix only
    if len(word) == 4:
        return 75.0
    return 80.0


def _matched_vocabulary(words: Sequence[str], vocabulary: list[str]) -> set[str]:
    matched: set[str] = set()
    vocab_set = set(vocabulary)
    for word in words:
        if word in vocab_set:
            matched.add(word)
        cutoff = _word_cutoff(word)
        if cutoff <= 100:
            for token, _score, _index in process.extract(
                word, vocabulary, scorer=fuzz.ratio, score_cutoff=cutoff, limit=None
            ):
                matched.add(token)
        if len(word) >= 3:
            matched.update(token for token in vocabulary if token.startswith(word))
    return matched


def score_candidates(text: str, items: Sequence[Item]) -> list[ScoredCandidate]:
    """Every item that plausibly matches the reference, best first, ties broken stably."""
    words = significant_words(text)
    if not words or not items:
        return []
    keys = [item.title_key for item in items]
    vocabulary = sorted(set(_WORD.findall(" ".join(keys))) - STOPWORDS)
    matched = _matched_vocabulary(words, vocabulary)
    if not matched:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, matched))) + r")\b")
    hits = [i for i, key in enumerate(keys) if pattern.search(key)]
    if not hits:
        return []
    query = " ".join(words)
    choices = [" ".join(w for w in _WORD.findall(keys[i]) if w not in STOPWORDS) for i in hits]
    scores = process.cdist([query], choices, scorer=fuzz.WRatio, dtype="float32")[0]
    scored = [ScoredCandidate(items[i], round(float(s), 2)) for i, s in zip(hits, scores)]
    scored.sort(key=lambda c: (-c.score, *_order_key(c.item)))
    return scored


def build_pool(text: str, items: Sequence[Item], *, limit: int) -> Pool:
    scored = score_candidates(text, items)
    return Pool(candidates=tuple(scored[:limit]), matched=len(scored))

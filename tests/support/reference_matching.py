"""The first, straightforward candidate scoring, kept as an oracle.

resolver/domain/matching.py was rewritten for speed (issue 5) with the rule
that its results stay identical: same candidates, same scores, same order.
This module is the original algorithm, regex per title and all, so that
tests/domain/test_matching_equivalence.py can compare the two on many
calendars and references, and bench/resolve.py can report the speed-up.
"""
from __future__ import annotations

import re
from typing import Sequence

from rapidfuzz import fuzz, process

from resolver.domain.items import STOPWORDS, Item, normalise
from resolver.domain.matching import ScoredCandidate

_WORD = re.compile(r"\w+")


def _word_cutoff(word: str) -> float:
    if len(word) <= 3:
        return 101.0
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
    words = [w for w in _WORD.findall(normalise(text)) if w not in STOPWORDS]
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
    scored.sort(key=lambda c: (-c.score, c.item.title_key, c.item.collection_id, c.item.item_id))
    return scored

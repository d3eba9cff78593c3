"""Title vectors of the semantic signal, memoised per reader (a leaf: matching's memo owns them).

`MatchingMemo.vectors` (resolver/domain/matching.py) keeps one `TitleVectors`
per reader; resolver/domain/semantic.py fills and reads it. The vectors live
here, apart from both, so that neither imports the other to reach them.

Title vectors are memoised per (title, model), bounded, least recently used
first; the matrix of a title list (one contiguous float32 array, a row per
title) is kept for the last few lists, so a warm request multiplies it and
stacks nothing.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence

from resolver.domain import deadline

if TYPE_CHECKING:
    import numpy as np

# Vectors one reader keeps (512 float32 each: 2 KB; 50,000 are about 100 MB).
MAX_TITLE_VECTORS = 50_000
# Title-list matrices one reader keeps (a 20,000-title list is 40 MB).
MAX_MATRICES = 2
# Titles encoded between two looks at the deadline: at most ENCODE_BATCH of
# them, and at most ENCODE_BATCH_CHARS characters together (a title has at most
# MAX_TITLE_CHARS, resolver/domain/items.py). The encoder's cost grows with a
# text's length: 256 titles of 500 characters in another script cost about
# 4.6 s, so a count alone let one batch run far past the deadline; 8,192
# characters is a look about every 0.3 s at worst, and the same batches as
# before for titles of about 30 characters.
ENCODE_BATCH = 256
ENCODE_BATCH_CHARS = 8192


class Encoder(Protocol):
    """A sentence encoder: texts -> L2-normalised float32 rows."""

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class Titled(Protocol):
    """What the vectors need of a title index: its items, each with a title."""

    @property
    def items(self) -> Sequence[Any]: ...


class TitleVectors:
    """Title vectors by (title, model), bounded; and the matrices of the last title lists."""

    def __init__(self, capacity: int = MAX_TITLE_VECTORS) -> None:
        self._rows: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._matrices: OrderedDict[tuple[int, str], tuple[Titled, np.ndarray]] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def row(self, title: str, model: str) -> np.ndarray | None:
        """One title's vector when it is known (never encodes)."""
        with self._lock:
            return self._rows.get((title, model))

    def matrix(self, index: Titled, encoder: Encoder,
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

    def remember(self, texts: Sequence[str], rows: np.ndarray, model: str) -> None:
        """Keep vectors encoded elsewhere (a reference's words, encoded with the reference)."""
        with self._lock:
            for text, row in zip(texts, rows):
                self._rows[(text, model)] = row
            while len(self._rows) > self._capacity:
                self._rows.popitem(last=False)

    def rows(self, texts: list[str], encoder: Encoder,
             expired: Callable[[], bool] = deadline.expired) -> np.ndarray | None:
        """The vectors of `texts` (titles or single words), one row each, remembered as titles are;
        None when the deadline cut encoding short."""
        return self._rows_for(texts, encoder, encoder.name, expired)

    def _rows_for(self, titles: list[str], encoder: Encoder, model: str,
                  expired: Callable[[], bool]) -> np.ndarray | None:
        import numpy

        unique = dict.fromkeys(titles)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            known = self._rows
            for title in unique:
                key = (title, model)
                row = known.get(key)
                if row is not None:
                    known.move_to_end(key)
                    found[title] = row
        missing = [t for t in unique if t not in found] if len(found) < len(unique) else []
        if any(not t.strip() for t in missing):
            # An untitled item has no meaning to be near: a zero row, never above the floor.
            blank = [t for t in missing if not t.strip()]
            missing = [t for t in missing if t.strip()]
            width = encoder.encode(["-"]).shape[1]
            found.update({t: numpy.zeros(width, dtype=numpy.float32) for t in blank})
        for batch in _batches(missing):
            if expired():
                return None
            fresh = encoder.encode(batch)
            found.update(zip(batch, fresh))
            self.remember(batch, fresh, model)
        # numpy.array over equal rows is numpy.stack's result at a third of its cost (a warm request asks for
        # about a hundred rows).
        return numpy.array([found[t] for t in titles]) if titles \
            else numpy.zeros((0, 0), dtype=numpy.float32)


def _batches(titles: list[str]) -> Iterator[list[str]]:
    """The titles in order, in batches of at most ENCODE_BATCH titles and ENCODE_BATCH_CHARS characters."""
    batch: list[str] = []
    chars = 0
    for title in titles:
        if batch and (len(batch) >= ENCODE_BATCH or chars + len(title) > ENCODE_BATCH_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(title)
        chars += len(title)
    if batch:
        yield batch

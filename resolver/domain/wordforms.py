"""Word forms for one language: its Snowball stemmer, its stopwords and its fillers.

The stemmer is PyStemmer (the Snowball algorithms in C); stopwords are data
files in `resolver/data/stopwords/<language>.txt`, fillers (words that name no
title: "what", "anything", "due", "meetings") in `resolver/data/fillers/`.
Both are kept as written and with their diacritics folded, since matching
compares folded words. Stems are remembered
process-wide, bounded: the words of a calendar's titles repeat from one
request to the next, and stemming a 17,000-word vocabulary afresh would cost
more than all the other matching steps together.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import Stemmer

from resolver.domain.items import fold

DEFAULT_LANGUAGE = "english"
_DATA = Path(__file__).resolve().parent.parent / "data"
_STOPWORD_DIR = _DATA / "stopwords"
_FILLER_DIR = _DATA / "fillers"
# Enough for the vocabularies of many large calendars; cleared whole when full
# (a cheap bound: a stem is recomputed in about a microsecond).
_MAX_REMEMBERED_STEMS = 200_000


def languages() -> tuple[str, ...]:
    """The Snowball languages a deployment can choose."""
    return tuple(Stemmer.algorithms())


def _load_words(folder: Path, language: str) -> frozenset[str]:
    path = folder / f"{language}.txt"
    if not path.exists():
        return frozenset()
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words.update(line.split())
    return frozenset(words | {fold(w) for w in words})


def _load_stopwords(language: str) -> frozenset[str]:
    return _load_words(_STOPWORD_DIR, language)


@dataclass
class WordForms:
    language: str
    stopwords: frozenset[str]
    _stemmer: Stemmer.Stemmer = field(repr=False)
    _stems: dict[str, str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Words that name no title (question words, "due", "meetings"): a reference
    # of a time and only these asks by date alone.
    fillers: frozenset[str] = frozenset()

    def stems(self, words: list[str]) -> list[str]:
        """The stem of each word, in order."""
        known = self._stems
        missing = [w for w in dict.fromkeys(words) if w not in known]
        if missing:
            # PyStemmer's stemmer objects are not thread-safe.
            with self._lock:
                fresh = dict(zip(missing, self._stemmer.stemWords(missing)))
                if len(known) + len(fresh) > _MAX_REMEMBERED_STEMS:
                    known.clear()
                known.update(fresh)
        return [known.get(w) or self._stem_one(w) for w in words]

    def _stem_one(self, word: str) -> str:
        with self._lock:
            return self._stemmer.stemWord(word)


@lru_cache(maxsize=None)
def word_forms(language: str = DEFAULT_LANGUAGE) -> WordForms:
    """The shared WordForms of a language; raises ValueError for an unknown one."""
    if language not in Stemmer.algorithms():
        raise ValueError(f"Unknown Snowball language: {language!r}")
    return WordForms(language=language, stopwords=_load_stopwords(language), _stemmer=Stemmer.Stemmer(language),
                     fillers=_load_words(_FILLER_DIR, language))

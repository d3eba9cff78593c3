"""Exact matching, candidate scoring, ranking and narrowing.

A candidate's score says how much of the reference its title covers, each
reference word weighted by how specific it is among the titles searched in
this request (BM25's IDF over the titles that word matches), each match
counted with its quality: exact > stem > compound > initialism > prefix >
typo. Covering the title too earns a smaller reward, so a short title fully
covered beats a long one partly covered. rapidfuzz's `token_set_ratio` only
breaks near-ties; then the soonest due or occurring item comes first, then
title, collection and item ID, so the order is always deterministic.

Why not bm25s or rank-bm25: both score documents by the words they contain
exactly. Here a reference word must also find "invoice" for "invoices",
"soy milk" for "soymilk", "AGM" for "Annual general meeting", "intro" for
"introduction" and "protfolio" for "portfolio", and a title is a dozen words,
so the work is in finding which title words a reference word matches, not in
the sum over them. That step uses PyStemmer (Snowball, in C) and rapidfuzz's
`cdist` over the vocabulary (C++), and the sums stay small and exact in Python.

What depends only on the titles (vocabulary, stems, the joined keys searched
for compounds and initialisms) is kept in a `TitleIndex`, reused while the
calendar returns the same titles in the same order (an unchanged collection,
or one changed only in ETags, dates or statuses), and rebuilt when a title is
added, changed or removed.
"""
from __future__ import annotations

import operator
import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import timezone, tzinfo
from itertools import chain

from typing import TYPE_CHECKING, Any, Container, Sequence

from rapidfuzz import fuzz, process

from resolver.domain.errors import check_deadline
from resolver.domain.items import STOPWORDS, Item, match_key, normalise, tokens_of, umlaut_variant
from resolver.domain.title_vectors import MAX_TITLE_VECTORS, TitleVectors
from resolver.domain.times import TimeRange, _soonest, _soonest_in, in_range
from resolver.domain.wordforms import DEFAULT_LANGUAGE, WordForms, word_forms

if TYPE_CHECKING:
    import numpy as np
else:
    class _Numpy:
        """numpy, imported when ranking first needs it.

        An exact match (a reference equal to a title, ID or UID) never ranks,
        and `manage.py resolve` is a fresh process per call: importing numpy
        there costs more than the whole exact match. The first attribute read
        replaces this object with the module, so ranking pays nothing after.
        """

        def __getattr__(self, name: str):
            import numpy

            globals()["np"] = numpy
            return getattr(numpy, name)

    np = _Numpy()

__all__ = ["STOPWORDS", "MatchingMemo", "Pool", "ScoredCandidate", "build_pool", "exact_matches", "score_candidates",
           "significant_words", "title_naming_words", "items_in_range"]

# Match qualities: how much of a reference word's weight a title word earns.
EXACT, STEM, COMPOUND, INITIALISM, PREFIX = 1.0, 0.9, 0.9, 0.85, 0.7
FUZZY_LOW, FUZZY_HIGH = 0.45, 0.75
# A typo is a keystroke or two: at most this many single-letter insertions and deletions (two letters swapped or
# mistyped). rapidfuzz's ratio alone lets a long word differ by more: "Wasserkostenabrechnung" reads 81 against
# "Heizkostenabrechnung", another bill (8 apart). Of the labelled set's typo matches none more than 4 apart was
# a word of the item meant (docs/retrieval.md, "Ninth round").
TYPO_EDITS = 4
# A match at least this good counts as the word being present, for its IDF.
STRONG = 0.85
TITLE_COVERAGE_WEIGHT = 0.3
# Scores this close are a near-tie, ordered by rapidfuzz and then by time.
NEAR_TIE = 0.02
# "Zuerich" for "Zürich" (and back) only in words this long: shorter ones
# ("due", "toe", "goes") are English words, not German spellings.
UMLAUT_MIN_LENGTH = 5
# Among candidates this close to the best, one with a time in the reference's
# range ranks first; a weak title match never wins on time alone.
TIME_PLAUSIBLE = 0.5
# Items looked at between two looks at the request's deadline in a loop over every item
# (a title is at most items.MAX_TITLE_CHARS, so this many cost a few milliseconds).
DEADLINE_STRIDE = 4096



@dataclass(frozen=True, slots=True)  # slots: thousands are built per request on big calendars
class ScoredCandidate:
    item: Item
    score: float
    in_range: bool = False
    # The share of the reference's word weight (IDF) that no word of this title
    # matches in any way: a high score can still leave a specific word unexplained
    # ("Water the plants" for "water the balcony plants"); semantic.fuse weighs it.
    unmatched: float = field(default=0.0, compare=False)
    # A reference word matched this title only as its initials ("CAB" for "Customer
    # advisory board"): a sentence encoder cannot read that, so its cosine says little.
    initialism: bool = field(default=False, compare=False)
    # The share of the title's distinct words the reference covers (the relevance model's feature).
    coverage: float = field(default=0.0, compare=False)
    # The reference's significant words this title matches in no way, and the title's significant words no
    # reference word covers: the relevance model compares the two ("violin" left over where "piano" is).
    left_over: tuple[str, ...] = field(default=(), compare=False)
    uncovered: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Pool:
    candidates: tuple[ScoredCandidate, ...]
    matched: int  # how many items matched before narrowing
    # The items in a time range, asked for by date alone (no title named).
    by_date: bool = False
    # The semantic signal's model, when it changed what is listed or its order
    # (resolver/domain/semantic.py); its cosine similarity by item ID.
    semantic_model: str | None = None
    similarities: dict[str, float] = field(default_factory=dict, compare=False)
    # The relevance model's probabilities, when it ordered and cut the pool (resolver/domain/relevance.py).
    scored: Any = field(default=None, compare=False)
    # The share of the reference's word weight no title matches at all (words the calendar does not know).
    unknown: float = field(default=0.0, compare=False)
    # A completed or cancelled item (FetchResult.closed) the relevance model found more probable than every
    # live one: nothing is offered, and the clarification names it (`closed_item_matched`).
    closed: tuple[Item, ...] = field(default=(), compare=False)

    @property
    def narrowed(self) -> bool:
        return self.matched > len(self.candidates)


def exact_matches(text: str, items: Sequence[Item]) -> list[Item]:
    """Items whose ID or UID equals the text, or whose title equals it after normalising."""
    key = normalise(text)
    found: dict[str, Item] = {}
    for n, item in enumerate(items):
        if n % DEADLINE_STRIDE == 0:
            check_deadline()
        if item.item_id == text or item.uid == text or (key and item.title_key == key):
            found.setdefault(item.item_id, item)
    return sorted(found.values(), key=_order_key)


def _order_key(item: Item) -> tuple[str, str, str]:
    return (item.title_key, item.collection_id, item.item_id)


def significant_words(text: str, *, language: str = DEFAULT_LANGUAGE) -> list[str]:
    """The words that must match a title: clitics stripped, diacritics folded, stopwords dropped."""
    stop = word_forms(language).stopwords
    return [w for w in tokens_of(match_key(text)) if w not in stop]


def title_naming_words(text: str, items: Sequence[Item], *, language: str = DEFAULT_LANGUAGE,
                       also: str | None = None) -> list[str]:
    """The significant words left once fillers ("what", "anything", "due", "meetings") and
    the names of the items' collections are set aside: none means the reference names no title.

    `also`: another language whose stopwords and fillers are set aside too, the one whose grammar read the
    reference's time ("was steht morgen an" where English is configured asks by date alone)."""
    forms = word_forms(language)
    other = word_forms(also) if also is not None and also != language else None
    collections = _collection_words(items)
    # A collection's name that is also a title word ("transition" in the
    # collection "timezone-transition" and in "Transition is from 8am") names a title.
    return [w for w in significant_words(text, language=language) if w not in forms.fillers
            and (other is None or (w not in other.fillers and w not in other.stopwords))
            and (w not in collections or any(w in item.title_tokens for item in items))]


def _collection_words(items: Sequence[Item]) -> frozenset[str]:
    return frozenset(chain.from_iterable(tokens_of(match_key(c)) for c in {item.collection_id for item in items}))


# -- the per-collection index ------------------------------------------------

class TitleIndex:
    """What scoring needs from the titles alone, built once per item tuple."""

    def __init__(self, items: Sequence[Item], forms: WordForms) -> None:
        self.items = items
        self.forms = forms
        if forms.stopwords == STOPWORDS:
            self.words = [item.title_words for item in items]
        else:
            stop = forms.stopwords
            self.words = [tuple(t for t in item.title_tokens if t not in stop) for item in items]
        check_deadline()
        self.vocabulary: list[str] = list(set(chain.from_iterable(self.words)))
        self.vocabulary_set = frozenset(self.vocabulary)
        check_deadline()
        # Postings in C: every token's title positions, from one stable argsort
        # of the flattened token IDs, so a request slices instead of scanning titles.
        ids = dict(zip(self.vocabulary, range(len(self.vocabulary))))
        self.token_id = ids
        check_deadline()
        lengths = np.fromiter(map(len, self.words), dtype=np.int64, count=len(self.words))
        flat = np.fromiter(map(ids.__getitem__, chain.from_iterable(self.words)), dtype=np.int64,
                           count=int(lengths.sum()))
        positions = np.repeat(np.arange(len(self.words), dtype=np.int64), lengths)
        order = np.argsort(flat, kind="stable")
        self._postings = positions[order]
        self._bounds = np.searchsorted(flat[order], np.arange(len(self.vocabulary) + 1))
        check_deadline()
        self.distinct = np.fromiter(map(len, map(set, self.words)), dtype=np.float64, count=len(self.words))
        self._lines: str | None = None
        self._by_stem: dict[str, list[str]] | None = None
        self._by_variant: dict[str, list[str]] | None = None
        self._keys: tuple[str, list[int]] | None = None
        self._initials: tuple[str, list[int]] | None = None
        self._all_initials: tuple[str, list[int]] | None = None
        self._lock = threading.Lock()

    def postings(self, token: str) -> np.ndarray:
        n = self.token_id.get(token)
        if n is None:
            return self._postings[:0]
        return self._postings[self._bounds[n]:self._bounds[n + 1]]

    @property
    def lines(self) -> str:
        # Tokens each after a newline: `\nword\w*` finds exactly the tokens
        # that start with `word`, and lets the regex engine jump between them.
        if self._lines is None:
            self._lines = "\n" + "\n".join(self.vocabulary)
        return self._lines

    @property
    def by_stem(self) -> dict[str, list[str]]:
        if self._by_stem is None:
            with self._lock:
                if self._by_stem is None:
                    by_stem: dict[str, list[str]] = {}
                    # A slice at a time: millions of distinct words (a calendar of long titles) take seconds.
                    for start in range(0, len(self.vocabulary), DEADLINE_STRIDE * 16):
                        check_deadline()
                        part = self.vocabulary[start:start + DEADLINE_STRIDE * 16]
                        for token, stem in zip(part, self.forms.stems(part)):
                            by_stem.setdefault(stem, []).append(token)
                    self._by_stem = by_stem
        return self._by_stem

    @property
    def by_variant(self) -> dict[str, list[str]]:
        """Title words spelled with German umlaut digraphs, by their spelling without ("zuerich" -> "zurich")."""
        if self._by_variant is None:
            with self._lock:
                if self._by_variant is None:
                    by_variant: dict[str, list[str]] = {}
                    for token in self.vocabulary:
                        if len(token) >= UMLAUT_MIN_LENGTH and ("ae" in token or "oe" in token or "ue" in token):
                            variant = umlaut_variant(token)
                            if variant is not None:
                                by_variant.setdefault(variant, []).append(token)
                    self._by_variant = by_variant
        return self._by_variant

    def _joined(self, texts: list[str]) -> tuple[str, list[int]]:
        offsets: list[int] = []
        position = 0
        for text in texts:
            offsets.append(position)
            position += len(text) + 1
        return "\n".join(texts), offsets

    @property
    def keys(self) -> tuple[str, list[int]]:
        """Every title's tokens, one title a line, with each line's offset."""
        if self._keys is None:
            self._keys = self._joined([" ".join(item.title_tokens) for item in self.items])
        return self._keys

    @property
    def all_initials(self) -> tuple[str, list[int]]:
        """Every title's words' initials, stopwords included, one title a line."""
        if self._all_initials is None:
            self._all_initials = self._joined(["".join(w[0] for w in item.title_tokens) for item in self.items])
        return self._all_initials

    @property
    def initials(self) -> tuple[str, list[int]]:
        """Every title's significant words' initials, one title a line."""
        if self._initials is None:
            self._initials = self._joined(["".join(w[0] for w in words) for words in self.words])
        return self._initials


class MatchingMemo:
    """What matching remembers between requests for one reader: title indexes and title vectors.

    Owned by whoever reads the calendar (a CalDAV reader per account, a memory
    calendar), handed to the pipeline with the items (`FetchResult.memo`), and
    dropped with its owner: one account's titles never serve another's
    request. An index is kept by content (the same titles in the same order:
    what an unchanged collection gives, read again with new Item objects, new
    ETags or new occurrences), and the last sequence asked for by identity
    (the same tuple again, or its very Items in a new one: no title read). Bounded: `max_indexes` title
    lists, and the semantic signal's `vectors` (resolver/domain/semantic.py).
    """

    def __init__(self, *, max_indexes: int = 16, max_vectors: int | None = None) -> None:
        self._by_titles: OrderedDict[tuple[str, tuple[str, ...]], TitleIndex] = OrderedDict()
        # The last sequences asked for, most recent first: a request matches its live items and, for the
        # relevance model, its closed ones (FetchResult.closed); each must find its index by identity.
        self._last: list[tuple[Sequence[Item], str, TitleIndex]] = []
        self._lock = threading.Lock()
        self._max_indexes = max_indexes
        self._max_vectors = max_vectors
        self._vectors: TitleVectors | None = None

    def index(self, items: Sequence[Item], *, language: str = DEFAULT_LANGUAGE) -> TitleIndex:
        """The index of these titles, reused while a sequence with the same titles is asked for.

        The index depends on the titles alone (title_key, from which the words
        and tokens are derived), so a collection read again unchanged, or changed
        only in what is not a title (an ETag, a due date, a status), reuses it: a
        title added, changed or removed builds a new one.
        """
        forms = word_forms(language)
        with self._lock:
            recent = list(self._last)
        for last in recent:
            if last[1] == language and _same_items(last[0], items):
                self._remember_last(items, language, last[2])
                return last[2]
        titles = (language, tuple(item.title_key for item in items))
        with self._lock:
            index = self._by_titles.get(titles)
            if index is not None and index.forms is forms:
                self._by_titles.move_to_end(titles)
            else:
                index = None
        if index is None:
            index = TitleIndex(items, forms)
            with self._lock:
                self._by_titles[titles] = index
                while len(self._by_titles) > self._max_indexes:
                    self._by_titles.popitem(last=False)
        self._remember_last(items, language, index)
        return index

    def _remember_last(self, items: Sequence[Item], language: str, index: TitleIndex) -> None:
        with self._lock:
            kept = [last for last in self._last if last[2] is not index]
            self._last = [(items, language, index)] + kept[:LAST_SEQUENCES - 1]

    @property
    def vectors(self) -> TitleVectors:
        """The semantic signal's title vectors (resolver/domain/title_vectors.py), made on first use."""
        with self._lock:
            if self._vectors is None:
                self._vectors = TitleVectors(self._max_vectors or MAX_TITLE_VECTORS)
            return self._vectors

    def clear(self) -> None:
        """Forget every index and vector (what a new reader starts with)."""
        with self._lock:
            self._by_titles.clear()
            self._last = []
            self._vectors = None


# How many of the last sequences MatchingMemo.index recognises by identity: the live items and the closed ones
# of the kind asked for, and the other kind's live ones (with requests of both kinds, four).
LAST_SEQUENCES = 4


def _same_items(known: Sequence[Item], items: Sequence[Item]) -> bool:
    """The very Item objects of the last sequence, in order (Items are frozen: the same titles).

    A reader hands an unchanged collection's Items back as the same objects in
    a new sequence; comparing identities is a C loop, where the content key
    (every title_key, then a hash of them all) cost about 3 ms at 20,000 titles.
    """
    return known is items or (len(known) == len(items) and all(map(operator.is_, known, items)))


def title_index(items: Sequence[Item], *, language: str = DEFAULT_LANGUAGE,
                memo: MatchingMemo | None = None) -> TitleIndex:
    """The index of these titles: the memo's, or a fresh one when the caller keeps none."""
    if memo is None:
        return TitleIndex(items, word_forms(language))
    return memo.index(items, language=language)


# -- matching one reference word ---------------------------------------------

def _word_cutoff(word: str) -> float:
    # Short words need a closer match: one typo in four letters is a different word.
    if len(word) <= 3:
        return 101.0  # exact, stem or prefix only
    if len(word) == 4:
        return 75.0
    return 80.0


def _edits(word: str, token: str, ratio: float) -> int:
    """The insertions and deletions between two words, from rapidfuzz's ratio (100 x (1 - edits / total length))."""
    return round((100.0 - ratio) * (len(word) + len(token)) / 100.0)


def _improve(found: dict[str, float], token: str, quality: float) -> None:
    if found.get(token, 0.0) < quality:
        found[token] = quality


def _token_matches(words: list[str], index: TitleIndex) -> list[dict[str, float]]:
    """For each reference word, the title words it matches and how well."""
    vocabulary = index.vocabulary_set
    found: list[dict[str, float]] = [{} for _ in words]
    stems = index.forms.stems(words)
    fillers = index.forms.fillers
    by_stem = index.by_stem
    by_variant = index.by_variant
    # A filler alone ("wanna" for "The Wannabes") is all the reference has:
    # then it may still match as a beginning or a typo.
    guarded = fillers if any(word not in fillers for word in words) else frozenset()
    for matches, word, stem in zip(found, words, stems):
        for token in by_stem.get(stem, ()):
            _improve(matches, token, STEM)
        if word in vocabulary:
            matches[word] = EXACT
        if len(word) >= UMLAUT_MIN_LENGTH:
            # "Zuerich", "Zurich" and "Zürich" (folded: "zurich") are one word written three ways.
            plain = umlaut_variant(word) or word
            if plain != word and plain in vocabulary:
                matches[plain] = EXACT
            for token in by_variant.get(plain, ()):
                matches[token] = EXACT
        # Fillers ("what", "thing", "due") match a title word as written, never as
        # its beginning or a typo: "what's" is not a prefix of "Whatsapp".
        if len(word) >= 3 and word not in guarded:
            for token in re.findall("\n(" + re.escape(word) + r"\w+)", index.lines):
                _improve(matches, token, PREFIX)
    fuzzy = [(n, word) for n, word in enumerate(words) if _word_cutoff(word) <= 100 and word not in guarded]
    if fuzzy and index.vocabulary:
        # One pass over the vocabulary for all words, in C++.
        table = process.cdist([w for _, w in fuzzy], index.vocabulary, scorer=fuzz.ratio, dtype=np.float32,
                              score_cutoff=min(_word_cutoff(w) for _, w in fuzzy))
        for (n, word), row in zip(fuzzy, table):
            cutoff = _word_cutoff(word)
            for position in np.flatnonzero(row >= cutoff).tolist():
                ratio = float(row[position])
                if _edits(word, index.vocabulary[position], ratio) > TYPO_EDITS:
                    continue
                quality = FUZZY_LOW + (FUZZY_HIGH - FUZZY_LOW) * (ratio - cutoff) / (100.0 - cutoff)
                _improve(found[n], index.vocabulary[position], quality)
    return found


def _line_hits(pattern: str, joined: tuple[str, list[int]]) -> list[tuple[int, int, int]]:
    """(title position, start, end within the line) of each regex match."""
    text, offsets = joined
    hits = []
    for match in re.finditer(pattern, text):
        line = bisect_right(offsets, match.start()) - 1
        hits.append((line, match.start() - offsets[line], match.end() - offsets[line]))
    return hits


def _special_matches(words: list[str], all_tokens: list[str], exact_in_vocabulary: list[bool],
                     index: TitleIndex) -> list[dict[int, tuple[float, frozenset[str]]]]:
    """Matches that span title words: compounds written together, and initialisms.

    For each reference word: title position -> (quality, the title words covered).
    """
    special: list[dict[int, tuple[float, frozenset[str]]]] = [{} for _ in words]
    vocabulary = index.vocabulary_set
    stop = index.forms.stopwords
    for n, word in enumerate(words):
        if not word.isalpha():
            continue
        # "soymilk" for "Soy milk", "followup" for "follow-up"; also when the
        # word is a title word too ("checkout" for "Check out the library").
        if len(word) >= 5:
            for cut in range(2, len(word) - 1):
                head, tail = word[:cut], word[cut:]
                if not ((head in vocabulary or head in stop) and (tail in vocabulary or tail in stop)):
                    continue
                if head in stop and tail in stop:
                    continue
                covered = frozenset(t for t in (head, tail) if t not in stop)
                pattern = r"(?<![^\s\n])" + re.escape(head) + " " + re.escape(tail) + r"(?![^\s\n])"
                for line, _start, _end in _line_hits(pattern, index.keys):
                    special[n].setdefault(line, (COMPOUND, covered))
        # "AGM" for "Annual general meeting": initials of consecutive significant
        # words, or of all words ("RFP" for "request for proposal").
        if 2 <= len(word) <= 5 and not exact_in_vocabulary[n]:
            for joined, words_of_line in ((index.initials, index.words), (index.all_initials, None)):
                for line, start, end in _line_hits(re.escape(word), joined):
                    spanned = (words_of_line[line] if words_of_line is not None
                               else index.items[line].title_tokens)[start:end]
                    covered = frozenset(t for t in spanned if t not in stop)
                    current = special[n].get(line)
                    if covered and (current is None or current[0] < INITIALISM):
                        special[n][line] = (INITIALISM, covered)
    # "check out" for "Checkout": adjacent reference words written together in a title, also when another title
    # writes them apart ("kick-off" for "Quarterly all-company kickoff" beside "Offsite kick-off dinner").
    for left in joined_pairs(all_tokens, vocabulary):
        joined = all_tokens[left] + all_tokens[left + 1]
        for n, word in enumerate(words):
            if word in (all_tokens[left], all_tokens[left + 1]):
                special[n].update({line: (COMPOUND, frozenset((joined,)))
                                   for line in _titles_with(joined, index)})
    return special


def joined_pairs(tokens: Sequence[str], words: Container[str]) -> list[int]:
    """The positions k at which tokens[k] + tokens[k + 1] is one of `words`: two words a title writes as one."""
    return [k for k in range(len(tokens) - 1) if tokens[k] + tokens[k + 1] in words]


def _titles_with(token: str, index: TitleIndex) -> list[int]:
    return [n for n, words in enumerate(index.words) if token in words]


# -- scoring -------------------------------------------------------------------

def score_candidates(
    text: str,
    items: Sequence[Item],
    *,
    language: str = DEFAULT_LANGUAGE,
    time_range: TimeRange | None = None,
    tz: tzinfo = timezone.utc,
    bonus_words: Sequence[str] = (),
    memo: MatchingMemo | None = None,
) -> list[ScoredCandidate]:
    """Every item that plausibly matches the reference, best first, ties broken deterministically.

    `bonus_words` (a recognised time expression's words, "friday") never make
    an item a candidate, but count as covered where a title has them.
    """
    return _rank(text, items, language=language, time_range=time_range, tz=tz, bonus_words=bonus_words,
                 limit=None, memo=memo)[0]


def _rank(
    text: str,
    items: Sequence[Item],
    *,
    language: str,
    time_range: TimeRange | None,
    tz: tzinfo,
    bonus_words: Sequence[str],
    limit: int | None,
    memo: MatchingMemo | None = None,
    unknown_out: list[float] | None = None,
) -> tuple[list[ScoredCandidate], int]:
    """The best `limit` candidates (all when None) in order, and how many matched."""
    if not items:
        return [], 0
    forms = word_forms(language)
    all_tokens = list(tokens_of(match_key(text)))
    words = list(dict.fromkeys(w for w in all_tokens if w not in forms.stopwords))
    if not words:
        return [], 0
    check_deadline()
    index = title_index(items, language=language, memo=memo)
    hits, scores, unmatched, by_initials, coverage, unknown, matched = _scores(words, all_tokens, bonus_words, index)
    check_deadline()
    if unknown_out is not None:
        unknown_out.append(unknown)
    if hits.size == 0:
        return [], 0
    if time_range is not None:
        top = float(scores.max())
        in_range_flags = np.fromiter((in_range(items[p], time_range, tz) for p in hits.tolist()),
                                     dtype=bool, count=hits.size)
        first = np.where(in_range_flags & (scores >= TIME_PLAUSIBLE * top), 0, 1)
    else:
        in_range_flags = np.zeros(hits.size, dtype=bool)
        first = np.ones(hits.size, dtype=np.int64)
    buckets = -np.round(scores / NEAR_TIE)
    # Coarse order in C: time first, then the score's near-tie bucket.
    coarse = _coarse_cut(np.lexsort((buckets, first)), first, buckets, limit)
    ranked = _fine_order(words, index, items, hits, coarse, scores, first, buckets, in_range_flags,
                         unmatched, by_initials, coverage, limit, matched)
    return ranked, int(hits.size)


def _qualities(words: list[str], all_tokens: list[str], bonus_words: Sequence[str],
               index: TitleIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray, Covers]:
    """Per reference word, each title's best match quality (a row over titles), how many
    of each title's distinct words some reference word covered, the titles where some
    reference word's best match is the title's initials, and which title words are covered."""
    total = len(index.items)
    exact_in_vocabulary = [w in index.vocabulary_set for w in words]
    matches = _token_matches(words, index)
    special = _special_matches(words, all_tokens, exact_in_vocabulary, index)
    qualities = np.zeros((len(words), total), dtype=np.float64)
    covered = np.zeros(total, dtype=np.float64)
    by_initials = np.zeros(total, dtype=bool)
    for n, (matches_n, special_n) in enumerate(zip(matches, special)):
        row = qualities[n]
        for token, quality in matches_n.items():
            at = index.postings(token)
            row[at] = np.maximum(row[at], quality)
        for position, (quality, _cover) in special_n.items():
            if quality > row[position]:
                row[position] = quality
                by_initials[position] |= quality == INITIALISM
    # Title coverage: how many of a title's distinct words some reference word (or
    # a time expression's word: it covers, never makes a candidate) matched.
    cover_tokens = set(chain.from_iterable(matches)) | {w for w in (match_key(b) for b in bonus_words) if w}
    for token in cover_tokens:
        covered[index.postings(token)] += 1.0
    spanned: dict[int, set[str]] = {}
    for special_n in special:
        for position, (_quality, cover) in special_n.items():
            covered[position] += len(cover)
            spanned.setdefault(position, set()).update(cover)
    return qualities, covered, by_initials, Covers(tokens=cover_tokens, spanned=spanned)


@dataclass(frozen=True)
class Covers:
    """The title words some reference word covers: any title's (`tokens`), or one title's by a match that
    spans its words (`spanned`: a compound, initials)."""

    tokens: set[str]
    spanned: dict[int, set[str]]

    def uncovered(self, words: Sequence[str], position: int) -> tuple[str, ...]:
        spanned = self.spanned.get(position, ())
        return tuple(dict.fromkeys(w for w in words if w not in self.tokens and w not in spanned))


def _scores(words: list[str], all_tokens: list[str], bonus_words: Sequence[str],
            index: TitleIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, Matched]:
    """The positions of the titles some reference word matched, their scores, the share
    of the reference's word weight each matches in no way, which matched by initials,
    the share of each title's words the reference covers, and the share of the reference's
    word weight that no title matches at all (a word the calendar does not know), and what
    each matched title leaves over (Matched)."""
    total = len(index.items)
    qualities, covered, by_initials, covers = _qualities(words, all_tokens, bonus_words, index)
    # BM25's IDF of each reference word over the titles it matches (strongly, if any do).
    strong = (qualities >= STRONG).sum(axis=1)
    present = (qualities > 0).sum(axis=1)
    counts = np.where(strong > 0, strong, present)
    weights = np.log1p((total - counts + 0.5) / (counts + 0.5))
    reference = weights @ qualities
    hits = np.flatnonzero(reference > 0)
    unknown = float(weights[present == 0].sum() / weights.sum()) if weights.sum() > 0 else 0.0
    if hits.size == 0:
        return (hits, reference[:0], reference[:0], by_initials[:0], reference[:0], unknown,
                Matched(words, hits, qualities[:, :0] > 0, covers))
    distinct = index.distinct[hits]
    coverage = np.minimum(covered[hits], distinct) / np.maximum(distinct, 1.0)
    total_weight = weights.sum()
    unmatched = (weights @ (qualities[:, hits] <= 0)) / total_weight
    return (hits, reference[hits] / total_weight + TITLE_COVERAGE_WEIGHT * coverage, unmatched, by_initials[hits],
            coverage, unknown, Matched(words, hits, qualities[:, hits] > 0, covers))


@dataclass(frozen=True)
class Matched:
    """Which reference words each matched title (row: a position of `hits`) matches, and the covered words."""

    words: list[str]
    hits: np.ndarray
    mask: np.ndarray  # reference words x hits: the word matches that title in some way
    covers: Covers

    def left_over(self, row: int) -> tuple[str, ...]:
        return tuple(w for w, found in zip(self.words, self.mask[:, row].tolist()) if not found)


def _coarse_cut(coarse: np.ndarray, first: np.ndarray, buckets: np.ndarray, limit: int | None) -> np.ndarray:
    """The first `limit` rows, and every row tied with the last kept one: the fine order decides among them."""
    if limit is None or coarse.size <= limit:
        return coarse
    edge = (first[coarse[limit - 1]], buckets[coarse[limit - 1]])
    cut = limit
    while cut < coarse.size and (first[coarse[cut]], buckets[coarse[cut]]) == edge:
        cut += 1
    return coarse[:cut]


def _fine_order(words: list[str], index: TitleIndex, items: Sequence[Item], hits: np.ndarray,
                coarse: np.ndarray, scores: np.ndarray, first: np.ndarray, buckets: np.ndarray,
                in_range_flags: np.ndarray, unmatched: np.ndarray, by_initials: np.ndarray,
                coverage: np.ndarray, limit: int | None, matched: Matched) -> list[ScoredCandidate]:
    """The first `limit` candidates (all when None) in their final order.

    The order's key is (time first, score bucket, rapidfuzz ratio, soonest time,
    title, collection, ID). Its first three parts are numbers made in C for every
    row; the rest needs each item in Python, so it is made only for the rows that
    can still reach the first `limit`, and a candidate is built only for those
    kept: a tie of one bucket ("weekly sync" among thousands of weekly titles)
    is hundreds of rows of which 19 are listed.
    """
    positions = hits[coarse].tolist()
    rows = coarse.tolist()
    # rapidfuzz for near-ties only: one C++ call over the titles still in play.
    query = " ".join(words)
    ratios = process.cdist([query], [" ".join(index.words[p]) for p in positions],
                           scorer=fuzz.token_set_ratio, dtype=np.float32)[0]
    # np.rint rounds half to even, as round() does.
    numeric = list(zip(first[coarse].tolist(), buckets[coarse].tolist(), (-np.rint(ratios)).tolist()))
    order = sorted(range(len(rows)), key=numeric.__getitem__)
    if limit is not None and len(order) > limit:
        edge = numeric[order[limit - 1]]
        cut = limit
        while cut < len(order) and numeric[order[cut]] == edge:
            cut += 1
        del order[cut:]
    # Stable sorts: rows equal in the whole key keep the coarse order, as one sort over all did.
    order.sort(key=lambda n: numeric[n] + (_soonest(items[positions[n]]),) + _order_key(items[positions[n]]))
    return [ScoredCandidate(item=items[positions[n]], score=round(float(scores[rows[n]]), 4),
                            in_range=bool(in_range_flags[rows[n]]), unmatched=round(float(unmatched[rows[n]]), 4),
                            initialism=bool(by_initials[rows[n]]), coverage=round(float(coverage[rows[n]]), 4),
                            left_over=matched.left_over(rows[n]),
                            uncovered=matched.covers.uncovered(index.words[positions[n]], positions[n]))
            for n in order[:limit]]


def items_in_range(items: Sequence[Item], time_range: TimeRange, *, tz: tzinfo = timezone.utc) -> list[ScoredCandidate]:
    """A reference that is only a time ("tomorrow at 3pm"): the items in that range, soonest first."""
    check_deadline()
    found = [ScoredCandidate(item=item, score=0.0, in_range=True) for item in items if in_range(item, time_range, tz)]
    found.sort(key=lambda c: (_soonest_in(c.item, time_range, tz),) + _order_key(c.item))
    return found


def build_pool(
    text: str,
    items: Sequence[Item],
    *,
    limit: int,
    language: str = DEFAULT_LANGUAGE,
    time_range: TimeRange | None = None,
    tz: tzinfo = timezone.utc,
    bonus_words: Sequence[str] = (),
    memo: MatchingMemo | None = None,
    unmatched_by_date: bool = True,
    time_language: str | None = None,
) -> Pool:
    """The candidates for a reference (its time expression already taken out as `time_range`).

    A time plus words that name no title ("what do I have due on Friday",
    "anything overdue", "my meetings on the 21st") asks by date alone: the
    items due or occurring in the range, nearest first. So, with
    `unmatched_by_date`, does a time whose other words match no title at all.
    Without it such a reference gets an empty pool: the caller weighs what the
    encoder brings (the relevance model), and "llama trekking on saturday"
    is not offered everything on Saturday. Otherwise the titles are ranked,
    and the range only orders the plausible ones. `time_language`: the grammar that read the time, whose
    fillers name no title either (`title_naming_words`).
    """
    if time_range is not None and not title_naming_words(text, items, language=language, also=time_language):
        return _date_alone(text, items, time_range, tz=tz, limit=limit)
    unknown: list[float] = []
    ranked, matched = _rank(text, items, language=language, time_range=time_range, tz=tz,
                            bonus_words=bonus_words, limit=limit, memo=memo, unknown_out=unknown)
    if not ranked and time_range is not None and unmatched_by_date:
        return _date_alone(text, items, time_range, tz=tz, limit=limit)
    return Pool(candidates=tuple(ranked), matched=matched, unknown=unknown[0] if unknown else 1.0)


def _date_alone(text: str, items: Sequence[Item], time_range: TimeRange, *, tz: tzinfo, limit: int) -> Pool:
    """The items in the range, nearest first; those of a collection the reference names
    ("the garden stuff due Monday") before the others: weak evidence, never a filter."""
    scored = items_in_range(items, time_range, tz=tz)
    named = set(tokens_of(match_key(text)))
    if named:
        scored.sort(key=lambda c: not (set(tokens_of(match_key(c.item.collection_id))) <= named))
    return Pool(candidates=tuple(scored[:limit]), matched=len(scored), by_date=True)

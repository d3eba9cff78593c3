"""English glosses of a German, French or Spanish title, from FreeDict's dictionaries.

The sentence encoder (resolver/domain/semantic.py) reads 16 languages, but
across them it prefers a title in the reference's own language that shares a
word: "hang the washing out to dry" finds "Pick up dry cleaning" before
"Wäsche aufhängen", "Reisepass verlängern" finds "Führerschein verlängern"
before "Renew passport". A title (or reference) written mostly in another
language is therefore also read as a word-for-word English gloss ("Wäsche
aufhängen" -> "clothes wash hang-up suspension"), and its vector blends both
readings (`semantic.MultilingualUSE`). This is dictionary-based query
translation, the oldest cross-language retrieval technique; measured in
bench/recall.py (docs/retrieval.md, "Glosses from bilingual dictionaries").

The dictionaries are FreeDict's (GPL-2+), installed from Debian's packages
`dict-freedict-deu-eng`, `-fra-eng`, `-spa-eng` and `-eng-deu` (the last only
for its English headwords: a word that is English is never glossed) into
/usr/share/dictd, where dictd reads them. They are read in place, never
copied or loaded whole: the `.index` file is sorted by headword, so a word is
found by binary search over the memory-mapped file, and the `.dict.dz` file is
dictzip (gzip with a table of independently deflated chunks, `man dictzip`),
so an entry costs the inflation of one or two 58 KB chunks. No Python
library reads dictzip at random (idzip's last release is from 2021 and does
not handle the index): the two formats are small and fixed, read here.

A host without these files gets no glossary (`find_freedict` returns None)
and the encoder reads titles as they are; the encoder's name says which.
"""
from __future__ import annotations

import functools
import logging
import mmap
import re
import struct
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

logger = logging.getLogger(__name__)

# The dictionaries a glossary reads: (language, dictd database name). German
# first: FreeDict's German-English dictionary (from Ding) has 380,000
# headwords, the French and Spanish ones 8,000 and 4,500.
SOURCES = (("german", "freedict-deu-eng"), ("french", "freedict-fra-eng"), ("spanish", "freedict-spa-eng"))
ENGLISH_HEADWORDS = "freedict-eng-deu"
DEFAULT_DIRECTORY = "/usr/share/dictd"

# Tuned on the tune split only (docs/retrieval.md): the first two glosses of a
# word per dictionary (more add senses nobody meant: "Rasen" is "speeding"
# before it is "lawn").
GLOSSES_PER_WORD = 2
# A text is glossed when at least half its content words have a gloss and are
# not English words ("Ops meeting" is glossed, "Update the e-mail signature" is not).
FOREIGN_SHARE = 0.5
# German compounds absent from the dictionary are split in two known words
# ("Heizkostenabrechnung" -> "Heizkosten" + "Abrechnung"), from this length,
# up to MAX_WORD (a longer "word" is not looked up at all: bounded work).
COMPOUND_FROM = 8
MAX_WORD = 40
# Words looked up per process, remembered (titles repeat across requests).
WORD_CACHE = 20_000
# Dictionary lookups (binary searches, about 10 to 20 µs each) one text may cost: a
# title of a few words needs 10 to 50, a German compound split up to 40 more. Beyond,
# the remaining words are read as they are: a calendar of long made-up words costs
# each title at most about 2 ms, never the 35 ms its 48 words of 40 letters would.
MAX_LOOKUPS = 128
# Inflated dictzip chunks kept per dictionary (58 KB each).
CHUNK_CACHE = 16

_WORD = re.compile(r"[\w'’-]+")
_ELISION = re.compile(r"^(?:l|d|qu|j|n|s|c|m|t)['’]")
# What a FreeDict entry wraps around its translations: parts of speech, notes, usage.
_MARKUP = re.compile(r"<[^>]*>|\[[^\]]*\]|\([^)]*\)|\bsth\.|\bsb\.|\bjdn\.|\betw\.")
_SENSE_NUMBER = re.compile(r"^\d+\.\s*")
_GLOSS = re.compile(r"[^\W\d_][\w' -]*")
_NOT_TRANSLATIONS = ("Note:", "Synonym", "see:", '"')
_B64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


def _number(text: bytes) -> int:
    value = 0
    for c in text.decode("ascii"):
        value = value * 64 + _B64[c]
    return value


class DictdDatabase:
    """One dictd database (`name.index` + `name.dict.dz`), read in place."""

    def __init__(self, index: Path, data: Path) -> None:
        self.name = index.name.removesuffix(".index")
        with open(index, "rb") as f:
            self._index = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._data_file = open(data, "rb")  # noqa: SIM115 - kept open with the database
        self._lock = threading.Lock()
        self._chunks: OrderedDict[int, bytes] = OrderedDict()
        self._chunk_length, self._chunk_offsets = self._read_dictzip_header()

    def headword_exists(self, word: str) -> bool:
        return self._first_line(word.encode()) is not None

    def entries(self, word: str) -> list[str]:
        """The entries of a headword (dictd keeps headwords lower-case), in the dictionary's order."""
        key = word.encode()
        start = self._first_line(key)
        found = []
        while start is not None and start < len(self._index):
            end = self._index.find(b"\n", start)
            end = len(self._index) if end < 0 else end
            fields = self._index[start:end].split(b"\t")
            if fields[0] != key or len(fields) < 3:
                break
            try:
                found.append(self._read(_number(fields[1]), _number(fields[2])).decode("utf-8", "replace"))
            except (KeyError, UnicodeDecodeError, IndexError, OSError, zlib.error):
                # A damaged file costs that entry, never the request: no gloss is no worse than none.
                logger.warning("glossary: %s has an unreadable entry for %r", self.name, word)
            start = end + 1
        return found

    def _first_line(self, key: bytes) -> int | None:
        """The offset of the first index line whose headword is `key`: a binary search over line starts."""
        index = self._index
        lo, hi = 0, len(index)
        while lo < hi:
            mid = (lo + hi) // 2
            newline = index.rfind(b"\n", lo, mid)
            start = lo if newline < 0 else newline + 1
            tab = index.find(b"\t", start)
            if index[start:tab] < key:
                end = index.find(b"\n", start)
                lo = len(index) if end < 0 else end + 1
            else:
                hi = start
        tab = index.find(b"\t", lo)
        return lo if lo < len(index) and tab >= 0 and index[lo:tab] == key else None

    def _read_dictzip_header(self) -> tuple[int, list[int] | None]:
        """The chunk length and each chunk's file offset, from dictzip's RA field (None: plain gzip)."""
        head = self._data_file.read(10)
        if head[:2] != b"\x1f\x8b" or not head[3] & 4:
            return 0, None
        flags = head[3]
        (extra_length,) = struct.unpack("<H", self._data_file.read(2))
        extra = self._data_file.read(extra_length)
        chunk_length, sizes = 0, None
        at = 0
        while at + 4 <= len(extra):
            sub_id, sub_length = extra[at:at + 2], struct.unpack("<H", extra[at + 2:at + 4])[0]
            if sub_id == b"RA":
                _version, chunk_length, count = struct.unpack("<HHH", extra[at + 4:at + 10])
                sizes = struct.unpack(f"<{count}H", extra[at + 10:at + 10 + 2 * count])
            at += 4 + sub_length
        for flag in (8, 16):  # the original file's name and a comment, zero-terminated
            if flags & flag:
                while self._data_file.read(1) not in (b"\x00", b""):
                    pass
        if flags & 2:
            self._data_file.read(2)
        if sizes is None:
            return 0, None
        offsets, position = [], self._data_file.tell()
        for size in sizes:
            offsets.append(position)
            position += size
        offsets.append(position)
        return chunk_length, offsets

    def _read(self, offset: int, length: int) -> bytes:
        if self._chunk_offsets is None:
            return self._whole[offset:offset + length]
        first, last = offset // self._chunk_length, (offset + length - 1) // self._chunk_length
        text = b"".join(self._chunk(k) for k in range(first, min(last, len(self._chunk_offsets) - 2) + 1))
        start = offset - first * self._chunk_length
        return text[start:start + length]

    def _chunk(self, number: int) -> bytes:
        with self._lock:
            if number in self._chunks:
                self._chunks.move_to_end(number)
                return self._chunks[number]
            self._data_file.seek(self._chunk_offsets[number])
            raw = self._data_file.read(self._chunk_offsets[number + 1] - self._chunk_offsets[number])
            # Each chunk was flushed in full by dictzip: it inflates on its own.
            text = zlib.decompressobj(-15).decompress(raw)
            self._chunks[number] = text
            if len(self._chunks) > CHUNK_CACHE:
                self._chunks.popitem(last=False)
            return text

    @functools.cached_property
    def _whole(self) -> bytes:  # a small dictionary compressed without dictzip's table
        import gzip

        with gzip.open(self._data_file.name) as f:
            return f.read()


def translations(entry: str) -> list[str]:
    """The translations of a FreeDict entry in dictd's plain text, in its order (`Glossary` keeps
    the first few, then only those that are plain words: "acc. ˈak/" is an abbreviation's spelling)."""
    found: list[str] = []
    for line in entry.split("\n")[1:]:  # the first line is the headword, pronunciation and part of speech
        line = line.strip()
        if not line or line.startswith(_NOT_TRANSLATIONS):
            continue
        line = _MARKUP.sub(" ", _SENSE_NUMBER.sub("", line))
        for part in line.split(","):
            gloss = " ".join(part.split()).strip(" ;/")
            if gloss and gloss not in found:
                found.append(gloss)
    return found


class _Budget:
    """Dictionary lookups one text may still cost."""

    def __init__(self, lookups: int) -> None:
        self.left = lookups

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


class Glossary:
    """Word-for-word English glosses of a text mostly in German, French or Spanish."""

    def __init__(self, sources: list[tuple[str, DictdDatabase]], english: DictdDatabase,
                 stopwords: frozenset[str]) -> None:
        self._sources = sources
        self._english = english
        self._stopwords = stopwords
        self.name = "FreeDict " + "+".join(database.name.removeprefix("freedict-") for _l, database in sources)
        # word -> its glosses, () for an English word or one without: bounded, least recently used first.
        self._words: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self._known: OrderedDict[str, bool] = OrderedDict()  # word -> a headword of some dictionary, bounded
        self._lock = threading.Lock()

    def gloss(self, text: str) -> str | None:
        """The text with each foreign word replaced by its glosses; None when it is not mostly foreign."""
        words, foreign, content = [], 0, 0
        budget = _Budget(MAX_LOOKUPS)
        for word in _WORD.findall(text):
            key = _ELISION.sub("", word.lower().strip("'’-"))
            if key.casefold() in self._stopwords or len(key) < 3:
                words.append(word)
                continue
            content += 1
            glosses = self._word(key, budget)
            if glosses:
                words.append(" ".join(glosses))
                foreign += 1
            else:
                words.append(word)
        return " ".join(words) if foreign and foreign >= content * FOREIGN_SHARE else None

    def glosses(self, word: str) -> tuple[str, ...]:
        """The English glosses of one word (lower case) of German, French or Spanish; () for an English word or
        one no dictionary glosses. The relevance model looks a foreign word up in the word taxonomy by them."""
        key = _ELISION.sub("", word.lower().strip("'’-"))
        if key.casefold() in self._stopwords or len(key) < 3:
            return ()
        return self._word(key, _Budget(MAX_LOOKUPS))

    def knows(self, word: str) -> bool:
        """The word (lower case) is a headword of a dictionary: English, or one a gloss reads. The relevance
        model reads a word no dictionary knows, left over where another such word is, as a name swapped
        for a name ("send Yann the photos" for "Send Élodie the photos")."""
        with self._lock:
            if word in self._known:
                self._known.move_to_end(word)
                return self._known[word]
        if len(word) > MAX_WORD:
            return False
        spellings = tuple(dict.fromkeys((word, word.replace("ss", "ß"))))
        found = any(database.headword_exists(spelling) for database in (self._english, *(d for _l, d in self._sources))
                    for spelling in spellings)
        with self._lock:
            self._known[word] = found
            if len(self._known) > WORD_CACHE:
                self._known.popitem(last=False)
        return found

    def _word(self, key: str, budget: _Budget) -> tuple[str, ...]:
        with self._lock:
            if key in self._words:
                self._words.move_to_end(key)
                return self._words[key]
        if len(key) > MAX_WORD or budget.left <= 0:
            return ()  # not remembered: a later text with lookups to spare reads it
        glosses = () if self._is_english(key, budget) else self._glosses_of(key, budget)
        if budget.left >= 0:  # read to the end: remembered
            with self._lock:
                self._words[key] = glosses
                if len(self._words) > WORD_CACHE:
                    self._words.popitem(last=False)
        return glosses

    def _is_english(self, key: str, budget: _Budget) -> bool:
        if budget.spend() and self._english.headword_exists(key):
            return True
        parts = [p for p in key.split("-") if p]
        return "-" in key and bool(parts) and all(
            budget.spend() and self._english.headword_exists(p) for p in parts)

    def _glosses_of(self, key: str, budget: _Budget) -> tuple[str, ...]:
        found: list[str] = []
        for language, database in self._sources:
            glosses = self._lookup(database, key, GLOSSES_PER_WORD, budget)
            if not glosses and "-" in key:
                glosses = [g for part in key.split("-") if part for g in self._lookup(database, part, 2, budget)]
            if not glosses and language == "german" and len(key) >= COMPOUND_FROM:
                glosses = self._compound(database, key, budget)
            found += glosses
        return tuple(dict.fromkeys(found))

    @staticmethod
    def _lookup(database: DictdDatabase, word: str, limit: int, budget: _Budget) -> list[str]:
        """The first `limit` translations of a word, those that are no plain words then dropped."""
        found: list[str] = []
        # dictd keeps headwords lower-case, not case-folded: "fußball", which Swiss and hurried
        # writers spell "fussball".
        for spelling in dict.fromkeys((word, word.replace("ss", "ß"))):
            if not budget.spend():
                break
            for entry in database.entries(spelling):
                found += [t for t in translations(entry) if t not in found]
            if found:
                break
        return [t for t in found[:limit] if _GLOSS.fullmatch(t)]

    def _compound(self, database: DictdDatabase, word: str, budget: _Budget) -> list[str]:
        """Two known words, the longest head first, with an optional linking s ("Heizkosten-abrechnung")."""
        for cut in range(len(word) - 4, 3, -1):
            head, tail = word[:cut], word[cut:]
            tail_glosses = self._lookup(database, tail, 2, budget)
            if not tail_glosses:
                continue
            for candidate in (head, head[:-1] if head.endswith("s") else ""):
                if len(candidate) >= 3 and (head_glosses := self._lookup(database, candidate, 2, budget)):
                    return head_glosses + tail_glosses
        return []


def _all_stopwords() -> frozenset[str]:
    folder = Path(__file__).resolve().parent.parent / "data" / "stopwords"
    words: set[str] = set()
    for path in sorted(folder.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                words.update(w.casefold() for w in line.split())
    return frozenset(words)


def find_freedict(directory: str | Path | None = DEFAULT_DIRECTORY) -> Glossary | None:
    """The glossary of the FreeDict dictionaries in `directory`; None when the English headwords
    or every foreign dictionary are missing (the encoder then reads titles as they are)."""
    if not directory:
        return None
    folder = Path(directory)

    def database(name: str) -> DictdDatabase | None:
        index, data = folder / f"{name}.index", folder / f"{name}.dict.dz"
        if not (index.is_file() and data.is_file()):
            return None
        try:
            return DictdDatabase(index, data)
        except (OSError, ValueError, struct.error) as error:  # empty, unreadable, a broken header
            logger.warning("glossary: %s is not a readable dictd database (%s); not used", index, error)
            return None

    english = database(ENGLISH_HEADWORDS)
    sources = [(language, db) for language, name in SOURCES if (db := database(name)) is not None]
    if english is None or not sources:
        return None
    return Glossary(sources, english, _all_stopwords())

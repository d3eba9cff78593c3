"""Which words are kin: another word for the same thing, or another thing of the same sort.

A reference that leaves a word over where the title has another is either
another way of saying it ("ring Tom" for "Call Tom", "the physician" for
"Doctor's appointment") or another thing of the same sort ("Zara's violin
recital" for "Zara's piano recital", "buy oat milk" for "Buy soy milk", "the
November timesheet" for "Submit the December timesheet"). The encoder rates
both near (violin and piano 0.53; synonyms 0.47 to 0.92), so the relevance
model could not tell a near miss from a paraphrase by the words' cosine. A
taxonomy can: violin and piano are hyponyms of one near hypernym (musical
instrument) and neither is the other; ring and call share a sense.

The table (`resolver/data/relevance/taxonomy.json.gz`, written by
`bench/taxonomy.py` from Princeton WordNet 3.0) holds, by English Snowball
stem, each noun's and verb's first sense and the senses SemCor tagged, and
each synset's hypernyms and depth. It is read once, on the first reference the
model weighs with a word left over where the title has another; a word of
another language is looked up by its dictionary glosses (`Glossary.glosses`)
when the deployment has the dictionaries.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TABLE = Path(__file__).resolve().parent.parent / "data" / "relevance" / "taxonomy.json.gz"

# Fixed before the labelled set was read, from what "another thing of the same sort" means in WordNet:
# kin share a hypernym at most KIN_STEPS above each (siblings and first cousins), and that hypernym is at
# least KIN_DEPTH below a root ("violin" and "piano" meet at "musical instrument", depth 6; everything
# meets at "entity", "object" or "artifact", which says nothing). A word a few hypernyms above another
# (LINK_STEPS) names it more generally ("the instrument", "the appointment"): the same thing.
KIN_STEPS = 2
KIN_DEPTH = 4
LINK_STEPS = 3
# Bounds of the work one reference can cause: words compared per candidate side, glosses per word.
MAX_WORDS = 8
MAX_GLOSS_WORDS = 6
MIN_LENGTH = 3
# Remembered per table: each word's senses and each synset's ancestors (bounded, cleared whole when full).
REMEMBERED = 50_000


class TaxonomyFileError(ValueError):
    """The table is missing, unreadable or not what the model was trained with."""


@dataclass(frozen=True)
class Kin:
    """How a candidate's uncovered title words meet the reference's left-over words."""

    cohyponym: bool = False  # some left-over word is another thing of a title word's sort, and names no title word
    linked: bool = False  # some left-over word is a title word's synonym, hypernym or hyponym


@dataclass
class Taxonomy:
    words: dict[str, tuple[int, ...]]  # stem -> its words' first senses (what they name)
    also: dict[str, tuple[int, ...]]  # stem -> its words' other senses SemCor tagged (what they can name)
    parents: list[tuple[int, ...]]
    depth: list[int]
    digest: str
    # synset -> (its hypernyms up to LINK_STEPS above it, with itself; those up to KIN_STEPS above it and
    # KIN_DEPTH deep at least, with itself when it is), remembered: a calendar's words repeat.
    _ancestors: dict[int, tuple[frozenset[int], frozenset[int]]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def load(cls, path: Path | str = DEFAULT_TABLE) -> Taxonomy:
        try:
            raw_bytes = Path(path).read_bytes()
            raw = json.loads(gzip.decompress(raw_bytes))
            words = {str(k): tuple(int(s) for s in v) for k, v in raw["words"].items()}
            also = {str(k): tuple(int(s) for s in v) for k, v in raw.get("also", {}).items()}
            parents = [tuple(int(p) for p in ps) for ps in raw["parents"]]
            depth = [int(d) for d in raw["depth"]]
        except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError, gzip.BadGzipFile) as err:
            raise TaxonomyFileError(f"cannot read the word taxonomy {path}: {err}") from err
        count = len(parents)
        if len(depth) != count or any(not 0 <= s < count for ss in (*words.values(), *also.values(), *parents)
                                      for s in ss):
            raise TaxonomyFileError(f"word taxonomy {path}: a synset number out of range")
        return cls(words=words, also=also, parents=parents, depth=depth, digest=hashlib.sha256(raw_bytes).hexdigest())

    def ancestors(self, synset: int) -> tuple[frozenset[int], frozenset[int]]:
        """The synset with its hypernyms up to LINK_STEPS above it; and those up to KIN_STEPS above it that are
        KIN_DEPTH deep at least (where kin may meet)."""
        with self._lock:
            known = self._ancestors.get(synset)
        if known is None:
            distance, frontier = {synset: 0}, [synset]
            for step in range(1, max(LINK_STEPS, KIN_STEPS) + 1):
                frontier = [p for s in frontier for p in self.parents[s] if p not in distance]
                for p in frontier:
                    distance.setdefault(p, step)
            known = (frozenset(s for s, d in distance.items() if d <= LINK_STEPS),
                     frozenset(s for s, d in distance.items() if d <= KIN_STEPS and self.depth[s] >= KIN_DEPTH))
            with self._lock:
                if len(self._ancestors) >= REMEMBERED:
                    self._ancestors.clear()
                self._ancestors[synset] = known
        return known

    def senses(self, stems: Iterable[str], *, every: bool = False) -> frozenset[int]:
        """The first senses of the words of these stems; `every`: their other tagged senses too."""
        stems = list(stems)
        found = frozenset(s for stem in stems for s in self.words.get(stem, ()))
        return found | frozenset(s for stem in stems for s in self.also.get(stem, ())) if every else found

    def linked(self, a: frozenset[int], b: frozenset[int]) -> bool:
        """A sense in common, or one a few hypernyms above a sense of the other."""
        if a & b:
            return True
        return any(not b.isdisjoint(self.ancestors(x)[0]) for x in a) or \
            any(not a.isdisjoint(self.ancestors(y)[0]) for y in b)

    def kin(self, a: frozenset[int], b: frozenset[int]) -> bool:
        """Some sense of each has a hypernym in common, KIN_STEPS above each at most, KIN_DEPTH deep at least."""
        above_b = frozenset().union(*(self.ancestors(y)[1] for y in b))
        return any(not above_b.isdisjoint(self.ancestors(x)[1]) for x in a)

    def compare(self, left_over: Sequence[str], uncovered: Sequence[str], *, stems: Callable[[list[str]], list[str]],
                glosses: Callable[[str], Sequence[str]] | None = None, skip: frozenset[str] = frozenset()) -> Kin:
        """How the reference's left-over words meet a title's uncovered words (folded words, as the matcher
        gives them). A word the table does not know, nor its glosses, says nothing.

        Linked by any sense a word can have (generous: another word for it is never taken for another thing);
        kin by the senses they name first (strict: "book" is kin to "magazine" by its first sense, which
        "reserve" does not name). Two words glossed by phrases are compared by what their glosses do not
        share: "Weihnachtsgeschenk" and "Geburtstagsgeschenk" are "Christmas" and "birthday" presents, not
        one present.
        """
        lefts = [self._stems_of(w, stems, glosses) for w in _significant(left_over, skip)]
        titles = [self._stems_of(w, stems, glosses) for w in _significant(uncovered, skip)]
        lefts, titles = [s for s in lefts if s], [s for s in titles if s]
        linked = cohyponym = False
        for left in lefts:
            pairs = [(tuple(s for s in left if s not in title), tuple(s for s in title if s not in left))
                     for title in titles]
            pairs = [(a, b) for a, b in pairs if a and b]
            if any(self.linked(self.senses(a, every=True), self.senses(b, every=True)) for a, b in pairs):
                linked = True
            elif len(lefts) == 1 and len(titles) == 1 and any(self.kin(self.senses(a), self.senses(b))
                                                              for a, b in pairs):
                cohyponym = True  # one word for one: the same sentence about another thing
        return Kin(cohyponym=cohyponym, linked=linked)

    def _stems_of(self, word: str, stems: Callable[[list[str]], list[str]],
                  glosses: Callable[[str], Sequence[str]] | None) -> tuple[str, ...]:
        """The stems to look the word up by: its own when the table knows it, else its glosses' words'."""
        own = tuple(s for s in stems([word]) if s in self.words or s in self.also)
        if own or glosses is None:
            return own
        english = [w for g in glosses(word) for w in g.lower().replace("-", " ").split()
                   if len(w) >= MIN_LENGTH and w.isalpha()][:MAX_GLOSS_WORDS]
        return tuple(s for s in stems(english) if s in self.words or s in self.also) if english else ()


def _significant(words: Sequence[str], skip: frozenset[str]) -> list[str]:
    return [w for w in dict.fromkeys(words) if len(w) >= MIN_LENGTH and w.isalpha() and w not in skip][:MAX_WORDS]

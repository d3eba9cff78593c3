"""The word taxonomy (resolver/domain/taxonomy.py): kin, links, glosses, bounds and its file."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import Stemmer

from resolver.domain.taxonomy import Kin, Taxonomy, TaxonomyFileError

_STEM = Stemmer.Stemmer("english")

# A small hierarchy, each synset's parents and depth as bench/taxonomy.py writes them.
#   0 entity
#   1 object > 2 artifact > 3 instrumentality > 4 device > 5 musical instrument
#       5 > 6 stringed instrument > 7 violin, 8 guitar;  5 > 9 keyboard instrument > 10 piano
#   2 artifact > 11 tool (depth 3) > 12 hammer, 13 saw: kin only under a hypernym too near the root
#   14 telephone call (call, ring: one synset)
#   0 > 15 abstraction > 16 measure > 17 time period > 18 day (depth 4) > 19 holiday > 20 Christmas; 18 > 21 birthday
#   0 > 22 gift ("present")
#   3 > 23 publication > 24 book, 25 magazine;  0 > 26 reservation ("reserve", and "book" as a verb)
PARENTS = [[], [0], [1], [2], [3], [4], [5], [6], [6], [5], [9], [2], [11], [11], [0], [0], [15], [16], [17],
           [18], [19], [18], [0], [3], [23], [23], [0]]
WORDS = {"violin": [7], "guitar": [8], "piano": [10], "hammer": [12], "saw": [13], "call": [14], "ring": [14],
         "christmas": [20], "birthday": [21], "present": [22], "book": [24], "magazine": [25], "reserve": [26]}
ALSO = {"book": [26]}


def depths(parents: list[list[int]]) -> list[int]:
    found: list[int] = []
    for ps in parents:
        found.append(1 + min((found[p] for p in ps), default=-1))
    return found


def write_table(path: Path, *, words=None, parents=None, also=None) -> Path:
    parents = PARENTS if parents is None else parents
    table = {"words": {_STEM.stemWord(w): s for w, s in (WORDS if words is None else words).items()},
             "also": {_STEM.stemWord(w): s for w, s in (ALSO if also is None else also).items()},
             "parents": parents, "depth": depths(parents)}
    path.write_bytes(gzip.compress(json.dumps(table).encode()))
    return path


@pytest.fixture
def taxonomy(tmp_path: Path) -> Taxonomy:
    return Taxonomy.load(write_table(tmp_path / "taxonomy.json.gz"))


def compare(taxonomy: Taxonomy, left, uncovered, **kw) -> Kin:
    return taxonomy.compare(left, uncovered, stems=_STEM.stemWords, **kw)


def test_kin__co_hyponyms_under_a_near_hypernym_are_kin(taxonomy):
    assert compare(taxonomy, ("violin",), ("piano",)) == Kin(cohyponym=True)  # cousins: two steps up each
    assert compare(taxonomy, ("violin",), ("guitar",)) == Kin(cohyponym=True)  # siblings
    assert compare(taxonomy, ("violins",), ("piano",)) == Kin(cohyponym=True)  # by the stem


def test_kin__a_hypernym_near_the_root_makes_no_kin(taxonomy):
    """hammer and saw meet at "tool", depth 3: too general to say they are things of one sort."""
    assert compare(taxonomy, ("hammer",), ("saw",)) == Kin()


def test_kin__one_synset_links(taxonomy):
    assert compare(taxonomy, ("ring",), ("call",)) == Kin(linked=True)


def test_kin__a_word_more_general_links(tmp_path):
    table = Taxonomy.load(write_table(tmp_path / "t.json.gz", words=dict(WORDS, instrument=[5])))
    assert compare(table, ("instrument",), ("violin",)) == Kin(linked=True)


def test_kin__linked_by_any_tagged_sense_kin_only_by_first_senses(taxonomy):
    """"book" first names a publication (kin to "magazine"); as a verb it shares "reserve"'s sense."""
    assert compare(taxonomy, ("reserve",), ("book",)) == Kin(linked=True)
    assert compare(taxonomy, ("magazine",), ("book",)) == Kin(cohyponym=True)


def test_kin__only_one_word_for_one_is_a_swap(taxonomy):
    """Two known words left over: a sentence about more, not the same sentence about another thing."""
    assert compare(taxonomy, ("violin", "hammer"), ("piano",)) == Kin()
    assert compare(taxonomy, ("violin",), ("piano", "saw")) == Kin()
    assert compare(taxonomy, ("violin", "zzyzx"), ("piano",)) == Kin(cohyponym=True)  # an unknown word says nothing


def test_kin__unknown_words_and_skipped_words_say_nothing(taxonomy):
    assert compare(taxonomy, ("xylophonist",), ("piano",)) == Kin()
    assert compare(taxonomy, ("violin",), ("piano",), skip=frozenset({"violin"})) == Kin()
    assert compare(taxonomy, (), ("piano",)) == Kin() and compare(taxonomy, ("violin",), ()) == Kin()


def test_kin__a_foreign_word_is_looked_up_by_its_glosses(taxonomy):
    glosses = {"violon": ("violin",), "piano": ()}.get
    assert compare(taxonomy, ("violon",), ("piano",), glosses=lambda w: glosses(w, ())) == Kin(cohyponym=True)
    assert compare(taxonomy, ("violon",), ("piano",)) == Kin()  # no dictionaries: nothing


def test_kin__compounds_glossed_by_phrases_compare_what_they_do_not_share(taxonomy):
    """"Weihnachtsgeschenk" and "Geburtstagsgeschenk" are Christmas and birthday presents: kin, not one present."""
    glosses = {"weihnachtsgeschenk": ("Christmas present",), "geburtstagsgeschenk": ("birthday present",)}
    found = compare(taxonomy, ("weihnachtsgeschenk",), ("geburtstagsgeschenk",),
                    glosses=lambda w: glosses.get(w, ()))
    assert found == Kin(cohyponym=True)


def test_kin__the_work_of_one_comparison_is_bounded(taxonomy, monkeypatch):
    """At most MAX_WORDS words a side, MAX_GLOSS_WORDS words of a word's glosses."""
    from resolver.domain import taxonomy as module

    asked: list[list[str]] = []

    def stems(words: list[str]) -> list[str]:
        asked.append(list(words))
        return _STEM.stemWords(words)

    many = tuple(f"word{chr(97 + n)}" for n in range(40))
    taxonomy.compare(many, ("piano",), stems=stems, glosses=lambda w: (" ".join(["violin"] * 50),))
    assert sum(1 for a in asked if len(a) == 1 and a[0].startswith("word")) == module.MAX_WORDS
    assert max(len(a) for a in asked) <= module.MAX_GLOSS_WORDS


def test_load__a_missing_or_broken_table_is_a_clear_error(tmp_path):
    with pytest.raises(TaxonomyFileError, match="cannot read"):
        Taxonomy.load(tmp_path / "absent.json.gz")
    (tmp_path / "plain.json.gz").write_text("{}", encoding="utf-8")
    with pytest.raises(TaxonomyFileError, match="cannot read"):
        Taxonomy.load(tmp_path / "plain.json.gz")
    with pytest.raises(TaxonomyFileError, match="out of range"):
        Taxonomy.load(write_table(tmp_path / "bad.json.gz", words={"violin": [99]}))
    with pytest.raises(TaxonomyFileError, match="out of range"):
        Taxonomy.load(write_table(tmp_path / "bad2.json.gz", parents=PARENTS[:-1] + [[-1]]))


def test_load__the_digest_is_the_files_sha256(tmp_path):
    import hashlib

    path = write_table(tmp_path / "t.json.gz")
    assert Taxonomy.load(path).digest == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("left, title, kin", [
    ("violin", "piano", Kin(cohyponym=True)),
    ("november", "december", Kin(cohyponym=True)),
    ("morning", "evening", Kin(cohyponym=True)),
    ("breakfast", "lunch", Kin(cohyponym=True)),
    ("ring", "call", Kin(linked=True)),
    ("physician", "doctor", Kin(linked=True)),
    ("reserve", "book", Kin(linked=True)),
])
def test_shipped__the_table_from_wordnet_knows_near_misses_from_other_words(left, title, kin):
    assert Taxonomy.load().compare((left,), (title,), stems=_STEM.stemWords) == kin

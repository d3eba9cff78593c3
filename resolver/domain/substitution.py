"""A near miss the relevance model is sure of: the same sentence about another thing.

"buy almond milk" when the calendar holds "Buy soy milk", "quarterly planning
with legal" for "Quarterly planning with finance", "Renouveler l'assurance
habitation" for "Résilier l'assurance habitation": the reference and the title
the model ranks first agree on every word they share, and each has a word the
other lacks in the same place. The model's probability does not tell that from
a paraphrase ("garbage pickup" for "Bin collection" reads the same to it), and
on the labelled set such resolutions were half of its confident errors. So the
model's top candidate is never resolved on confidence when it is one: the
person is asked, with it listed first (`pipeline._ranker_resolved`;
docs/retrieval.md, "Twelfth round").

What is not a swap:
- a reference in one language and a title in another ("Kuchen für Mia bestellen"
  for "Order a birthday cake for Mia"): their words are as likely translations as
  swaps. A text is in another language when the glossary reads it as mostly
  foreign (`Glossary.gloss`); without the dictionaries all are one language;
- a shortening, another form or a typo of the same word: "docs" for
  "Documentation", "cleaning" for "cleaner", "compré" for "Comprar", "dentsit"
  for "dentist", and the reference's last word cut short ("post ab");
- words in different places: "the incident report is due soon" leaves "due" and
  "soon" after the words it shares with "Write the incident report", which
  leaves "write" before them;
- function words and fillers of every language the time grammar reads ("thing",
  "meeting", "what"), and a reference whose every word is left over (only the
  encoder found that title: the model's cosine is all there is to weigh).
"""
from __future__ import annotations

from typing import Callable, Sequence

from rapidfuzz.distance import OSA

from resolver.domain.items import match_key, tokens_of

# Two words that begin with this many letters alike (or all of the shorter one) are forms of one word.
SAME_WORD_PREFIX = 5
# A typo: one edit (a letter wrong, missing, extra, or two swapped) per this many letters of the shorter word,
# which has at least TYPO_FROM letters (the matcher's `_word_cutoff`: one typo in four letters is another word).
TYPO_EVERY, TYPO_FROM = 4, 5
# A shortening is at least this long ("doc" for "documentation"; "ab" is a word being typed, not one).
SHORTEST = 3


def swapped_words(text: str, left_over: Sequence[str], uncovered: Sequence[str], title: str,
                  title_tokens: Sequence[str], *, skip: frozenset[str],
                  foreign: Callable[[str], bool] | None = None) -> tuple[str, str] | None:
    """The reference's word and the title's word that stand in the same place, each missing from the other side
    (the matcher's `left_over` and `uncovered`), when there are such; else None.

    `text`: the reference less its time expression; `title_tokens`: the title's words (`Item.title_tokens`);
    `skip`: the words that name nothing (function words, fillers); `foreign`: whether a text is mostly in a
    language other than English (the glossary's reading, `Glossary.gloss`), None without dictionaries.
    """
    reference = [w for w in dict.fromkeys(tokens_of(match_key(text))) if w not in skip and w.isalpha()]
    words = [t for t in dict.fromkeys(title_tokens) if t not in skip and t.isalpha()]
    free_reference = set(left_over) & set(reference)
    free_title = set(uncovered) & set(words)
    if not free_reference or not free_title or len(free_reference) == len(reference) \
            or len(free_title) == len(words):
        return None
    if foreign is not None and foreign(text) != foreign(title):
        return None  # one in English, the other in another language: a word each may be a translation
    places = _places(words, free_title)
    # A reference is often cut short in its last word ("post abo" for "post about Kranich").
    typing = reference[-1] if any(t.startswith(reference[-1]) for t in title_tokens) else None
    for word, place in _places(reference, free_reference).items():
        for other, other_place in places.items():
            if place == other_place and word != typing and not _same_word(word, other):
                return word, other
    return None


def _places(words: list[str], free: set[str]) -> dict[str, str]:
    """Where each free word stands among the words the other side shares: before them all, after them all,
    or between."""
    shared = [n for n, word in enumerate(words) if word not in free]
    return {word: "before" if n < shared[0] else "after" if n > shared[-1] else "between"
            for n, word in enumerate(words) if word in free}


def _same_word(one: str, other: str) -> bool:
    """Forms of one word: one begins as the other does ("docs", "documentation"; "cleaning", "cleaner"), or
    one is the other mistyped (a letter wrong, missing, extra or two swapped per TYPO_EVERY letters of a word of
    TYPO_FROM letters or more)."""
    short, long_ = sorted((one.removesuffix("s"), other.removesuffix("s")), key=len)
    if len(short) < SHORTEST:
        return False
    alike = min(SAME_WORD_PREFIX, len(short))
    if long_[:alike] == short[:alike]:
        return True
    # As the matcher reads typos: a short word one letter off is another word ("cat", "car").
    return len(short) >= TYPO_FROM and OSA.distance(one, other) <= len(short) // TYPO_EVERY

"""The fast scoring gives exactly what the original did: same candidates, scores and order."""
from __future__ import annotations

import random
import string

import pytest

from resolver.domain.items import Kind, make_item
from resolver.domain.matching import score_candidates
from tests.support import reference_matching

_VERBS = ("Review", "Draft", "Call", "Email", "Book", "Prepare", "Renew", "Pay", "Plan", "Fix")
_OBJECTS = ("budget", "slides", "portfolio outline", "passport", "dentist appointment", "kitchen tap",
            "Straße reparieren", "café crème", "über Ärger", "naïve résumé", "Q3 report", "v2.0 release",
            "日本 会議", "the report", "O'Brien call", "3pm sync", "ﬁle taxes", "Weekly sync – design")
_SYLLABLES = ("ka", "lo", "mi", "zu", "ra", "ve", "é", "ß", "ü")


def _calendar(seed: int, size: int) -> list:
    rng = random.Random(seed)
    items = []
    for i in range(size):
        title = f"{rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
        if rng.random() < 0.5:
            title += " " + "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.05:
            title = rng.choice(("", "   ", "The", "a an the", "x"))
        items.append(make_item(collection_path=f"/u/{rng.choice('wp')}/", uid=f"u{i % (size - 3)}",
                               title=title, etag='"1"', kind=Kind.TASK))
    return items


def _references(seed: int, items: list, count: int) -> list[str]:
    rng = random.Random(seed)
    refs = ["portf", "strasse", "cafe", "café", "über", "ueber", "q3", "v2", "日本", "rev", "revi", "revie",
            "xylophone", "a an the", "budgte", "kitchn tap", "1:1", "3pm", "file", "O'BRIEN"]
    for _ in range(count):
        words = rng.choice(items).title_key.split() or ["empty"]
        picked = rng.sample(words, rng.randint(1, min(3, len(words))))
        out = []
        for word in picked:
            roll = rng.random()
            if roll < 0.3 and len(word) > 2:
                word = word[: rng.randint(2, len(word))]  # a prefix
            elif roll < 0.6 and len(word) > 3:
                at = rng.randrange(len(word))
                word = word[:at] + rng.choice(string.ascii_lowercase) + word[at + 1:]  # a typo
            elif roll < 0.7:
                word = word.upper()
            out.append(word)
        refs.append(" ".join(out))
    return refs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_score__identical_to_the_reference_implementation(seed: int):
    items = _calendar(seed, 600)
    for text in _references(seed, items, 150):
        for pool in (items, items[:40], items[::-1]):
            expected = [(c.item.item_id, c.score) for c in reference_matching.score_candidates(text, pool)]
            assert [(c.item.item_id, c.score) for c in score_candidates(text, pool)] == expected, text

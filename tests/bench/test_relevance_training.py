"""The training script's offering rules (bench/relevance.py), on small pools whose order is known."""
from __future__ import annotations

import numpy as np

from bench.relevance import CAP_SHARE, Example, choose_cap
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

"""The relevance model (resolver/domain/relevance.py): its file, its arithmetic, its floor and its fingerprint."""
from __future__ import annotations

import json
import math
from datetime import timezone
from pathlib import Path

import pytest

from resolver.domain import relevance
from resolver.domain.items import Kind, make_item
from resolver.domain.matching import ScoredCandidate
from resolver.domain.relevance import Context, Gathered, ModelFileError, RelevanceModel

WORDS_FEATURES = ["lex_score", "lexical"]


def item(uid: str, title: str):
    return make_item(collection_path="/u/work/", uid=uid, title=title, etag='"1"', kind=Kind.TASK,
                     href=f"/u/work/{uid}.ics")


def write_model(path: Path, *, weights=(2.0, 1.0), none=-1.0, temperature=1.0, floor=0.0, name="fixture-1",
                signal: dict | None = None, none_cut: float = 1.0, offer_at_most: int | None = None) -> Path:
    """P(none) = logistic(`none`), a constant here; the candidates share the rest by a softmax."""
    variants = {"words": {"features": WORDS_FEATURES, "weights": list(weights), "temperature": temperature,
                          "floor": floor, "none_cut": none_cut,
                          "none": {"features": [], "weights": [], "bias": none}}}
    if offer_at_most is not None:
        variants["words"]["offer_at_most"] = offer_at_most
    if signal is not None:
        variants["signal"] = signal
    path.write_text(json.dumps({"name": name, "variants": variants}), encoding="utf-8")
    return path


def gathered(*scores: float, extra=()) -> Gathered:
    lexical = tuple(ScoredCandidate(item=item(f"t{n}", f"Title {n}"), score=s) for n, s in enumerate(scores))
    return Gathered(lexical=lexical, extra=tuple(extra), context=Context(text="title", time_range=None,
                                                                         tz=timezone.utc), matched=len(scores))


def softmax(utilities: list[float], temperature: float = 1.0) -> list[float]:
    exp = [math.exp(u / temperature) for u in utilities]
    return [e / sum(exp) for e in exp]


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_relevance__known_features_give_known_probabilities(tmp_path):
    """u = 2 x score + 1 x lexical: softmax(3, 2) shares 1 - P(none), P(none) = logistic(-1) = 0.269."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json"))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    none = logistic(-1.0)
    expected = [(1 - none) * p for p in softmax([2.0 * 1.0 + 1.0, 2.0 * 0.5 + 1.0])]
    assert [c.item.uid for c in scored.candidates] == ["t0", "t1"]
    assert scored.probabilities == pytest.approx(expected, abs=1e-6)
    assert scored.none == pytest.approx(none, abs=1e-6)
    assert sum(scored.probabilities) + scored.none == pytest.approx(1.0, abs=1e-5)


def test_relevance__the_temperature_divides_every_utility(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json", temperature=2.0))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    expected = [(1 - logistic(-1.0)) * p for p in softmax([3.0, 2.0], 2.0)]
    assert scored.probabilities == pytest.approx(expected, abs=1e-6)


def test_relevance__p_none_reads_the_pool_features(tmp_path):
    """P(none) = logistic(2 - 4 x best_lex): a weak best match leaves more to none."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"name": "p", "variants": {"words": {
        "features": WORDS_FEATURES, "weights": [2.0, 1.0], "temperature": 1.0, "floor": 0.0,
        "none": {"features": ["best_lex"], "weights": [-4.0], "bias": 2.0}}}}), encoding="utf-8")
    model = RelevanceModel.load(path)
    assert model.rank(gathered(1.0, 0.5), limit=19).none == pytest.approx(logistic(2.0 - 4.0), abs=1e-6)
    assert model.rank(gathered(0.25), limit=19).none == pytest.approx(logistic(2.0 - 1.0), abs=1e-6)


def test_relevance__at_the_none_cut_nothing_is_offered(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=0.0, none_cut=0.5))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    assert scored.none == pytest.approx(0.5) and scored.candidates == () and scored.above_floor == 0


def test_relevance__the_model_orders_not_the_matcher(tmp_path):
    """A negative weight on the score puts the matcher's second first."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json", weights=(-2.0, 0.0)))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t1", "t0"]


def test_relevance__below_the_floor_is_not_offered(tmp_path):
    """Probabilities 0.53 and 0.20 (0.731 shared 0.73 : 0.27 by a softmax of 3 and 2): a floor of 0.3 keeps one."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json", floor=0.3))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t0"]
    assert scored.above_floor == 1 and scored.considered == 2


def test_relevance__nothing_reaches_the_floor_offers_nothing(tmp_path):
    """A likely none: every candidate below the floor, none listed."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=6.0, floor=0.1))
    scored = model.rank(gathered(1.0, 0.5), limit=19)
    assert scored.candidates == () and scored.none > 0.9


def test_relevance__the_limit_cuts_after_the_floor(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=-10.0))
    scored = model.rank(gathered(1.0, 0.9, 0.8, 0.7), limit=2)
    assert len(scored.candidates) == 2 and scored.above_floor == 4


def test_relevance__at_most_the_models_count_is_offered_the_most_probable(tmp_path):
    """Four reach the floor; a model that offers at most two lists the two most probable, and says four
    reached it (the pipeline discloses the narrowing)."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=-10.0, offer_at_most=2))
    scored = model.rank(gathered(0.7, 1.0, 0.8, 0.9), limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t1", "t3"] and scored.above_floor == 4
    assert len(model.rank(gathered(1.0, 0.9, 0.8), limit=1).candidates) == 1  # the caller's limit still holds


def test_relevance__the_cap_never_splits_a_tie(tmp_path):
    """Three equals straddle a cap of two: all three are listed (which of equals is offered is never an
    accident of order); a less probable one after them is not; and the caller's limit still holds."""
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=-10.0, offer_at_most=2))
    scored = model.rank(gathered(0.9, 0.9, 0.9, 0.5), limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t0", "t1", "t2"] and scored.above_floor == 4
    assert [c.item.uid for c in model.rank(gathered(1.0, 0.9, 0.9, 0.9), limit=19).candidates] == ["t0", "t1",
                                                                                                "t2", "t3"]
    assert len(model.rank(gathered(0.9, 0.9, 0.9, 0.9), limit=3).candidates) == 3
    assert [c.item.uid for c in model.rank(gathered(1.0, 0.9, 0.8, 0.8), limit=19).candidates] == ["t0", "t1"]


@pytest.mark.parametrize("count", [0, -3, "many"])
def test_relevance__a_model_offering_fewer_than_one_is_refused(tmp_path, count):
    path = write_model(tmp_path / "m.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["variants"]["words"]["offer_at_most"] = count
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ModelFileError):
        RelevanceModel.load(path)


def test_relevance__equal_candidates_keep_the_matchers_order(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json"))
    scored = model.rank(gathered(0.7, 0.7), limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t0", "t1"]
    assert scored.probabilities[0] == scored.probabilities[1]


def test_relevance__words_variant_without_the_signal(tmp_path):
    """Without cosines (signal off or the deadline) the words variant reads; with them the signal one."""
    signal = {"features": ["cosine"], "weights": [10.0], "temperature": 1.0, "floor": 0.0,
              "none": {"features": [], "weights": [], "bias": 0.0}}
    model = RelevanceModel.load(write_model(tmp_path / "m.json", signal=signal))
    pool = gathered(1.0, 0.5)
    assert model.variant(pool.context.with_signal).features == tuple(WORDS_FEATURES)
    pool.context.with_signal = True
    pool.context.cosines = {pool.lexical[1].item.item_id: 0.9, pool.lexical[0].item.item_id: 0.1}
    scored = model.rank(pool, limit=19)
    assert [c.item.uid for c in scored.candidates] == ["t1", "t0"]


def test_relevance__items_only_the_encoder_found_join_the_pool(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json", none=-5.0))
    scored = model.rank(gathered(1.0, extra=(item("s1", "Nearest title"),)), limit=19)
    assert {c.item.uid for c in scored.candidates} == {"t0", "s1"}
    assert scored.candidates[0].item.uid == "t0"  # words found it; the other has no word matched


def test_relevance__fingerprint_changes_with_the_model_and_the_encoder(tmp_path):
    first = RelevanceModel.load(write_model(tmp_path / "a.json"))
    same = RelevanceModel.load(write_model(tmp_path / "b.json"))
    other = RelevanceModel.load(write_model(tmp_path / "c.json", weights=(2.0, 1.5)))
    assert first.fingerprint(None) == same.fingerprint(None)
    assert first.fingerprint(None) != other.fingerprint(None)
    assert first.fingerprint("encoder-a") != first.fingerprint("encoder-b") != first.fingerprint(None)
    assert first.scorer_name("encoder-a") != first.scorer_name(None)


NONE = {"features": [], "weights": [], "bias": 0}


@pytest.mark.parametrize("broken", [
    "not json",
    json.dumps({"name": "x", "variants": {}}),  # no words variant
    json.dumps({"name": "x", "variants": {"words": {"features": ["lex_score"], "weights": [1, 2], "none": NONE,
                                                    "temperature": 1, "floor": 0}}}),  # weights do not fit
    json.dumps({"name": "x", "variants": {"words": {"features": ["shoe_size"], "weights": [1], "none": NONE,
                                                    "temperature": 1, "floor": 0}}}),  # unknown feature
    json.dumps({"name": "x", "variants": {"words": {"features": ["lex_score"], "weights": [1], "none": NONE,
                                                    "temperature": 0, "floor": 0}}}),  # no temperature
    json.dumps({"name": "x", "variants": {"words": {"features": ["lex_score"], "weights": [1], "none": 0,
                                                    "temperature": 1, "floor": 0}}}),  # none is no model
    json.dumps({"name": "x", "variants": {"words": {"features": ["lex_score"], "weights": [1], "temperature": 1,
                                                    "floor": 0, "none": {"features": ["shoe_size"],
                                                                         "weights": [1], "bias": 0}}}}),
])
def test_relevance__a_broken_file_is_a_clear_error(tmp_path, broken):
    path = tmp_path / "m.json"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ModelFileError):
        RelevanceModel.load(path)


def test_relevance__the_shipped_model_loads_and_names_its_features():
    model = RelevanceModel.load()
    assert set(model.variants) == {relevance.SIGNAL, relevance.WORDS, relevance.WORDS_FIRST}
    assert all(set(v.features) <= set(relevance.FEATURES) for v in model.variants.values())
    assert 0.0 < model.variant(True).floor < 1.0
    # The words first variant reads what the words alone variant reads, and answers only when sure.
    first, words = model.variants[relevance.WORDS_FIRST], model.variants[relevance.WORDS]
    assert first.features == words.features and first.weights == words.weights
    assert 0.5 <= model.words_first <= 1.0


def test_relevance__equal_items_share_their_ranks_so_they_tie(tmp_path):
    """Two titles alike (a duplicate) at ranks 1 and 2 by words: the rank features count only better ones,
    so a model that weighs ranks still gives them one probability (a tie, never resolved on confidence)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"name": "ranks", "variants": {"words": {
        "features": ["lex_rank", "lex_first", "lex_score"], "weights": [-3.0, 2.0, 1.0], "temperature": 1.0,
        "floor": 0.0, "none": {"features": [], "weights": [], "bias": -3.0}}}}), encoding="utf-8")
    model = RelevanceModel.load(path)
    scored = model.rank(gathered(0.9, 0.9, 0.5), limit=19)
    by_uid = dict(zip((c.item.uid for c in scored.candidates), scored.probabilities))
    assert by_uid["t0"] == by_uid["t1"] > by_uid["t2"]


class WordVectors:
    """An encoder of known unit vectors: each text's vector is looked up, so every cosine is known."""

    name = "fixture-words"

    def __init__(self, vectors: dict[str, tuple[float, float, float]]) -> None:
        self.vectors = vectors
        self.texts: list[str] = []
        self.calls: list[int] = []

    def encode(self, texts):
        import numpy

        self.texts.extend(texts)
        self.calls.append(len(texts))
        rows = numpy.array([self.vectors[t] for t in texts], dtype=numpy.float32)
        return rows / numpy.linalg.norm(rows, axis=1, keepdims=True)


def test_relevance__left_cosine_compares_what_each_side_leaves_over():
    """The worst explained left-over word's best cosine with an uncovered title word; 1 when nothing is left
    over, 0 when the title has nothing uncovered; every word of both when only the encoder found the title."""
    from resolver.domain.matching import MatchingMemo

    encoder = WordVectors({"violin": (1, 0, 0), "piano": (0.6, 0.8, 0), "ring": (0, 1, 0), "call": (0, 1, 0),
                           "sink": (0, 0, 1), "zara": (0, 0, 1), "recital": (1, 1, 0)})
    recital, plumber, other = item("r", "Zara's piano recital"), item("p", "Call the plumber"), item("o", "Zara")
    lexical = (ScoredCandidate(item=recital, score=0.7, left_over=("violin",), uncovered=("piano",)),
               ScoredCandidate(item=plumber, score=0.5, left_over=("ring", "sink"), uncovered=("call",)),
               ScoredCandidate(item=other, score=0.4, left_over=(), uncovered=()))
    extra = (item("x", "the recital"),)
    found = relevance.left_cosines(["violin", "ring"], lexical, extra, frozenset({"the"}), MatchingMemo(), encoder)
    assert found[recital.item_id] == pytest.approx(0.6)
    assert found[plumber.item_id] == pytest.approx(0.0)  # "sink" is explained by nothing the title leaves
    assert found[other.item_id] == 1.0  # nothing left over
    # Only the encoder found it: "violin" and "ring" against "recital" (0.707 each), the worst of them.
    assert found[extra[0].item_id] == pytest.approx(math.sqrt(0.5), abs=1e-4)
    assert sorted(set(encoder.texts)) == ["call", "piano", "recital", "ring", "sink", "violin"]

    again = WordVectors(encoder.vectors)
    memo = MatchingMemo()
    relevance.left_cosines(["violin"], lexical[:1], (), frozenset(), memo, again)
    relevance.left_cosines(["violin"], lexical[:1], (), frozenset(), memo, again)
    assert again.texts == ["violin", "piano"]  # words are remembered as titles are


def test_relevance__swap_is_a_substitution_left_unexplained(tmp_path):
    model = RelevanceModel.load(write_model(tmp_path / "m.json"))
    candidate = ScoredCandidate(item=item("t0", "Title"), score=0.7, unmatched=0.5, coverage=0.5)
    context = Context(text="title", time_range=None, tz=timezone.utc, left_cosines={candidate.item.item_id: 0.4})
    _, matrix = relevance.feature_matrix((candidate,), (), context)
    row = dict(zip(relevance.FEATURES, matrix[0]))
    assert row["left_cosine"] == pytest.approx(0.4)
    assert row["swap"] == pytest.approx(0.5 * 0.5 * 0.6)
    assert not model.reads_words


def test_relevance__only_a_model_that_reads_the_words_has_them_encoded(tmp_path):
    """Encoding the left-over words costs an encoder call: gathered only for a model whose features need them."""
    from resolver.domain.matching import MatchingMemo, build_pool

    signal = {"features": ["cosine", "left_cosine"], "weights": [1.0, 1.0], "temperature": 1.0, "floor": 0.0,
              "none": {"features": [], "weights": [], "bias": 0.0}}
    reading = RelevanceModel.load(write_model(tmp_path / "m.json", signal=signal))
    assert reading.reads_words
    items = [item("r", "Zara piano recital"), item("p", "Call the plumber")]
    vectors = {"Zara piano recital": (1, 0, 0), "Call the plumber": (0, 1, 0), "zara violin recital": (1, 0.2, 0),
               "violin": (1, 0, 0), "piano": (0.6, 0.8, 0), "call": (0, 1, 0), "plumber": (0, 0, 1),
               "zara": (0, 0, 1), "recital": (1, 1, 0)}
    # The plumber joins by the encoder (cosine 0.2): "violin" is explained by none of its words.
    for words, expected in ((False, {}), (True, {"r": 0.6, "p": 0.0})):
        encoder, memo = WordVectors(vectors), MatchingMemo()
        pool = build_pool("zara violin recital", items, limit=30, memo=memo)
        found = relevance.gather("zara violin recital", items, lexical=pool.candidates, matched=pool.matched,
                                 time_range=None, tz=timezone.utc, memo=memo, encoder=encoder, language="english",
                                 words=words)
        assert ("violin" in encoder.texts) == words
        by_uid = {item.item_id: item.uid for item in items}
        assert {by_uid[i]: round(v, 4) for i, v in found.context.left_cosines.items()} == expected


def test_relevance__every_candidate_has_its_cosine_and_hubness_a_closed_one_encoded_then():
    """A title words found outside the encoder's nearest, and a closed item's (not among the live titles the
    matrix holds), have their cosine with the reference and with the centroid as the nearest titles do."""
    import numpy

    from resolver.domain.matching import MatchingMemo, ScoredCandidate as Scored, build_pool

    items = [item("r", "Zara piano recital"), item("p", "Call the plumber")]
    done = item("c", "Zara cello recital")
    # The plumber is near by the encoder alone (no word in common); the others are found by words.
    vectors = {"Zara piano recital": (1, 0, 0), "Call the plumber": (0, 0.6, 0.8), "Zara cello recital": (0.6, 0.8, 0),
               "zara recital": (0.8, 0, 0.6)}
    encoder, memo = WordVectors(vectors), MatchingMemo()
    pool = build_pool("zara recital", items, limit=30, memo=memo)
    lexical = pool.candidates + (Scored(item=done, score=0.5),)
    centroid = numpy.array([0.0, 1.0, 0.0], dtype=numpy.float32)
    found = relevance.gather("zara recital", items, lexical=lexical, matched=pool.matched, time_range=None,
                             tz=timezone.utc, memo=memo, encoder=encoder, language="english", centroid=centroid)
    by_uid = {i.item_id: i.uid for i in items + [done]}
    assert {by_uid[i]: v for i, v in found.context.cosines.items()} == {"r": 0.8, "p": 0.48, "c": 0.48}
    assert {by_uid[i]: v for i, v in found.context.hubness.items()} == {"r": 0.0, "p": 0.6, "c": 0.8}
    assert [by_uid[i.item_id] for i in found.extra] == ["p"]
    assert "Zara cello recital" in encoder.texts  # the closed title, encoded for this request


def test_relevance__a_name_left_over_where_the_title_has_another_is_a_name_swap():
    """"send Yann the photos" for "Send Élodie the photos": a word no dictionary knows on each side."""
    dictionary = {"send", "photos", "tennis", "grandpa", "grandma", "card"}
    swapped = ScoredCandidate(item=item("e", "Send Élodie the photos"), score=0.7, left_over=("yann",),
                              uncovered=("elodie",))
    relative = ScoredCandidate(item=item("g", "Send a card to grandma"), score=0.7, left_over=("grandpa",),
                               uncovered=("grandma",))
    added = ScoredCandidate(item=item("t", "Tennis"), score=0.5, left_over=("yann",), uncovered=())
    short = ScoredCandidate(item=item("s", "Tennis with Al"), score=0.5, left_over=("jo",), uncovered=("al",))
    found = relevance.name_swaps((swapped, relative, added, short), dictionary.__contains__)
    assert found == {swapped.item.item_id}
    context = Context(text="send yann the photos", time_range=None, tz=timezone.utc, name_swaps=found)
    _, matrix = relevance.feature_matrix((swapped, relative), (), context)
    assert list(matrix[:, relevance.FEATURES.index("name_swap")]) == [1.0, 0.0]


@pytest.mark.parametrize("text, negated", [
    ("Hugo's dentist, not Léa's", ("lea",)),
    ("not the team lunch, the one at the Thai place", ("team", "lunch")),  # to the end of its clause
    ("renew the gym, don't cancel it", ("cancel",)),
    ("Zahnarzt für Hugo, nicht für Léa", ("lea",)),
    ("el dentista de Hugo, no el de Léa", ("lea",)),
    ("the design review, not the design retro", ("retro",)),  # said outside the negation: not negated
    ("no-show fee", ()),  # a hyphen joins
    ("the dentist", ()),
])
def test_relevance__the_words_a_reference_negates(text, negated):
    assert relevance.negated_words(text) == negated


def test_relevance__a_title_that_matches_a_negated_word_is_marked():
    hugo = ScoredCandidate(item=item("h", "Hugo's dentist"), score=0.8, left_over=("lea",))
    lea = ScoredCandidate(item=item("l", "Léa's dentist"), score=0.8, left_over=("hugo",))
    context = Context(text="Hugo's dentist, not Léa's", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix((hugo, lea), (item("x", "Dentist"),), context)
    assert list(matrix[:, relevance.FEATURES.index("negated")]) == [0.0, 1.0, 0.0]


def test_relevance__siblings_count_titles_of_one_pattern_that_leave_the_same_words_over():
    """"buy rice" against "Buy apples", "Buy bread", "Buy flour": each leaves "rice" over where another word
    fills the slot, so each has 2 siblings; a title that leaves nothing over has none."""
    def bought(uid: str, what: str, left=("rice",)):
        return ScoredCandidate(item=item(uid, f"Buy {what}"), score=0.6, left_over=left, uncovered=(what,))

    lexical = (bought("a", "apples"), bought("b", "bread"), bought("f", "flour"),
               bought("r", "rice", left=()), ScoredCandidate(item=item("s", "Rice salad"), score=0.5,
                                                             left_over=("buy",), uncovered=("salad",)))
    context = Context(text="buy rice", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix(lexical, (item("x", "Groceries"),), context)
    assert list(matrix[:, relevance.FEATURES.index("siblings")]) == pytest.approx(
        [math.log(3), math.log(3), math.log(3), 0.0, 0.0, 0.0])


def test_relevance__a_title_found_by_function_words_alone_is_marked():
    """"carrera de galgos": "Clase de pilates" matches only "de", a function word of a language the time grammar
    reads; "Carrera popular" matches a word that names a thing; one only the encoder found is not lexical."""
    by_de = ScoredCandidate(item=item("c", "Clase de pilates"), score=0.2, left_over=("carrera", "galgos"))
    by_name = ScoredCandidate(item=item("r", "Carrera popular"), score=0.5, left_over=("de", "galgos"))
    context = Context(text="carrera de galgos", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix((by_de, by_name), (item("x", "Dog show"),), context)
    assert list(matrix[:, relevance.FEATURES.index("function_only")]) == [1.0, 0.0, 0.0]
    # English stopwords are never counted as matched ("the"), so an English title matched by a content word is
    # not marked, and one matched by nothing but "the" has nothing matched at all.
    english = Context(text="feed the goldfish", time_range=None, tz=timezone.utc)
    feed = ScoredCandidate(item=item("f", "Review customer feedback"), score=0.3, left_over=("goldfish",))
    _, matrix = relevance.feature_matrix((feed,), (), english)
    assert list(matrix[:, relevance.FEATURES.index("function_only")]) == [0.0]


def test_relevance__function_words_are_every_grammar_languages_stopwords():
    words = relevance.function_words()
    assert {"de", "el", "la", "les", "avec", "der", "im", "am", "the", "of"} <= words
    assert not {"carrera", "swimming", "feed", "lassen"} & words


@pytest.mark.parametrize("text, named", [
    ("client visit in Lisbon", {"lisbon"}),
    ("Client visit in Paris", {"paris"}),  # a title's or a sentence's first word says nothing
    ("paint Hugo's bedroom", {"hugo"}),
    ("submit the November timesheet", {"november"}),
    ("buy almond milk", set()),
    # A first word that says whose it is names someone ("Mia's piano recital" for "Zara's piano recital").
    ("Mia's piano recital", {"mia"}),
    ("Zara’s piano recital", {"zara"}),
    ("Mum's birthday with Tom", {"mum", "tom"}),
    ("Its case is broken", set()),
])
def test_relevance__the_words_written_with_a_capital(text, named):
    assert relevance.capitalised_words(text) == named


def test_relevance__a_name_left_over_where_the_title_has_another_is_a_proper_swap():
    """"client visit in Lisbon": "Client visit in Paris" leaves "lisbon" over where it has "Paris"; "Client visit
    in lisbon planning" covers it; a title whose uncovered word is not written with a capital is no swap."""
    paris = ScoredCandidate(item=item("p", "Client visit in Paris"), score=0.7, left_over=("lisbon",),
                            uncovered=("paris",))
    lisbon = ScoredCandidate(item=item("l", "Plan the client visit in Lisbon"), score=0.9, left_over=(),
                             uncovered=("plan",))
    lunch = ScoredCandidate(item=item("u", "Client lunch"), score=0.4, left_over=("visit", "lisbon"),
                            uncovered=("lunch",))
    context = Context(text="client visit in Lisbon", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix((paris, lisbon, lunch), (item("x", "Trip to Porto"),), context)
    assert list(matrix[:, relevance.FEATURES.index("proper_swap")]) == [1.0, 0.0, 0.0, 0.0]
    # Written without a capital, the reference names nothing: no swap.
    lower = Context(text="client visit in lisbon", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix((paris,), (), lower)
    assert list(matrix[:, relevance.FEATURES.index("proper_swap")]) == [0.0]
    # P(none) reads the most probable candidate's.
    import numpy

    rows = numpy.array([[{"proper_swap": 1.0, "lexical": 1.0}.get(name, 0.0) for name in relevance.FEATURES],
                        [{"lexical": 1.0}.get(name, 0.0) for name in relevance.FEATURES]])
    assert relevance.pool_features(rows, numpy.array([0.9, 0.1]))["top_proper_swap"] == 1.0
    assert relevance.pool_features(rows, numpy.array([0.1, 0.9]))["top_proper_swap"] == 0.0


def test_relevance__no_content_found_when_only_function_words_matched():
    """The pool's regime: no title matches a word that names a thing, and the best cosine in it."""
    import numpy

    columns = {name: 0.0 for name in relevance.FEATURES}

    def row(**values):
        return [values.get(name, columns[name]) for name in relevance.FEATURES]

    by_de = row(lexical=1.0, function_only=1.0, cosine=0.3, lex_score=0.2)
    encoder_only = row(cosine=0.45)
    found = relevance.pool_features(numpy.array([by_de, encoder_only]), numpy.array([0.1, 0.4]))
    assert (found["no_content_found"], found["cosine_if_no_content"]) == (1.0, 0.45)
    assert found["words_found_none"] == 0.0  # words found a title, by "de"
    by_name = row(lexical=1.0, cosine=0.6, lex_score=0.5)
    found = relevance.pool_features(numpy.array([by_de, by_name]), numpy.array([0.1, 0.9]))
    assert (found["no_content_found"], found["cosine_if_no_content"]) == (0.0, 0.0)


def test_relevance__words_the_deadline_leaves_unencoded_mean_words_alone(tmp_path, monkeypatch):
    """The left-over words are encoded within the encoder's share of the deadline, as titles are: when it is
    spent, the model reads words alone (no cosines, no encoder-only titles), and the request goes on."""
    from resolver.domain import semantic
    from resolver.domain.matching import MatchingMemo, build_pool

    items = [item("r", "Zara piano recital"), item("p", "Call the plumber")]
    vectors = {"Zara piano recital": (1, 0, 0), "Call the plumber": (0, 1, 0), "zara violin recital": (1, 0.2, 0),
               "violin": (1, 0, 0), "piano": (0.6, 0.8, 0), "call": (0, 1, 0), "plumber": (0, 0, 1),
               "zara": (0, 0, 1), "recital": (1, 1, 0)}
    encoder, memo = WordVectors(vectors), MatchingMemo()
    pool = build_pool("zara violin recital", items, limit=30, memo=memo)
    memo.vectors.matrix(relevance_index(items, memo), encoder)  # the titles were encoded by an earlier request
    monkeypatch.setattr(semantic, "encoding_expired", lambda: (lambda: True))
    found = relevance.gather("zara violin recital", items, lexical=pool.candidates, matched=pool.matched,
                             time_range=None, tz=timezone.utc, memo=memo, encoder=encoder, language="english",
                             words=True)
    assert not found.context.with_signal and found.extra == () and found.context.left_cosines == {}
    assert "piano" not in encoder.texts


def relevance_index(items, memo):
    from resolver.domain.matching import title_index

    return title_index(items, language="english", memo=memo)


def test_relevance__a_long_reference_sends_at_most_32_words_with_itself():
    """The reference's own encoder call is not cut by the deadline: it carries the reference and at most
    WITH_REFERENCE_WORDS of its words; the rest are encoded within the encoder's share, as title words are."""
    from resolver.domain.matching import MatchingMemo, build_pool

    words = [f"w{n}x" for n in range(40)]
    text = " ".join(["zara"] + words)
    items = [item("r", "Zara piano recital")]
    vectors = {t: (1.0, float(n % 3), 0.5) for n, t in enumerate(["Zara piano recital", text, "zara", "piano",
                                                                   "recital"] + words)}
    encoder, memo = WordVectors(vectors), MatchingMemo()
    pool = build_pool(text, items, limit=30, memo=memo)
    found = relevance.gather(text, items, lexical=pool.candidates, matched=pool.matched, time_range=None,
                             tz=timezone.utc, memo=memo, encoder=encoder, language="english", words=True)
    assert found.context.with_signal
    assert encoder.calls[1] == 1 + relevance.WITH_REFERENCE_WORDS  # [titles], then the reference and its words
    assert set(words) <= set(encoder.texts)  # the rest, encoded for left_cosine within the share


# The word taxonomy (seventh round) --------------------------------------------------------------------------


def test_relevance__kin_compares_left_over_words_and_words_matched_only_by_their_shape():
    """"Zara's violin recital" leaves "violin" over where "Zara's piano recital" has "piano"; "grandpa" matched
    "grandma" as a typo would, and the shipped taxonomy knows them for kin; a title the reference covers
    has nothing to compare; "ring Tom" for "Call Tom" is another word for it."""
    from resolver.domain.taxonomy import Kin, Taxonomy

    table = Taxonomy.load()
    piano = ScoredCandidate(item=item("p", "Zara's piano recital"), score=0.7, left_over=("violin",),
                            uncovered=("piano",))
    covered = ScoredCandidate(item=item("z", "Zara's violin recital"), score=0.9)
    found = relevance.kin_of("Zara's violin recital", (piano, covered), table)
    assert found == {piano.item.item_id: Kin(cohyponym=True)}
    card = ScoredCandidate(item=item("c", "Send birthday card to grandma"), score=0.9)  # matched by shape
    assert relevance.kin_of("send birthday card to grandpa", (card,), table) == {card.item.item_id:
                                                                                 Kin(cohyponym=True)}
    call = ScoredCandidate(item=item("t", "Call Tom"), score=0.5, left_over=("ring",), uncovered=("call",))
    assert relevance.kin_of("ring Tom", (call,), table) == {call.item.item_id: Kin(linked=True)}


class FixedKin:
    """A KinSource whose answers are given, counting what it is asked."""

    def __init__(self, answers):
        self.answers, self.asked = answers, []

    def of(self, candidate):
        from resolver.domain.taxonomy import Kin

        self.asked.append(candidate.item.uid)
        return self.answers.get(candidate.item.uid, Kin())


def test_relevance__kin_features_and_p_none_reads_the_top_candidates():
    from resolver.domain.taxonomy import Kin

    piano = ScoredCandidate(item=item("p", "Zara's piano recital"), score=0.7)
    call = ScoredCandidate(item=item("t", "Call Tom"), score=0.5)
    other = ScoredCandidate(item=item("o", "Tennis"), score=0.2)
    context = Context(text="x", time_range=None, tz=timezone.utc,
                      kin=FixedKin({"p": Kin(cohyponym=True), "t": Kin(linked=True)}))
    _, matrix = relevance.feature_matrix((piano, call, other), (), context)
    assert list(matrix[:, relevance.FEATURES.index("cohyponym")]) == [1.0, 0.0, 0.0]
    assert list(matrix[:, relevance.FEATURES.index("related_word")]) == [0.0, 1.0, 0.0]
    import numpy

    found = relevance.pool_features(matrix, numpy.array([0.9, 0.5, 0.1]))
    assert (found["top_cohyponym"], found["top_related_word"]) == (1.0, 0.0)
    found = relevance.pool_features(matrix, numpy.array([0.1, 0.9, 0.5]))
    assert (found["top_cohyponym"], found["top_related_word"]) == (0.0, 1.0)


def test_relevance__gather_compares_words_only_for_a_model_that_reads_them():
    from resolver.domain.taxonomy import Taxonomy

    piano = ScoredCandidate(item=item("p", "Zara's piano recital"), score=0.7, left_over=("violin",),
                            uncovered=("piano",))
    common = dict(items=[piano.item], lexical=(piano,), matched=1, time_range=None, tz=timezone.utc, memo=None,
                  encoder=None, language="english")
    kin = relevance.gather("Zara's violin recital", taxonomy=Taxonomy.load(), **common).context.kin
    assert kin is not None and kin.of(piano).cohyponym
    assert relevance.gather("Zara's violin recital", **common).context.kin is None


def test_relevance__rank_compares_words_for_the_most_probable_candidate_only(tmp_path):
    """Utilities that do not read the taxonomy: only the top candidate's words are compared, and the
    probabilities are those of comparing every candidate's."""
    from resolver.domain.taxonomy import Kin

    path = write_model(tmp_path / "m.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["variants"]["words"]["none"] = {"features": ["top_cohyponym"], "weights": [3.0], "bias": -1.0}
    path.write_text(json.dumps(raw), encoding="utf-8")
    model = RelevanceModel.load(path)
    pool = gathered(1.0, 0.5, 0.2)
    source = FixedKin({"t0": Kin(cohyponym=True), "t1": Kin(linked=True)})
    scored = model.rank(Gathered(lexical=pool.lexical, extra=(), matched=3,
                                 context=Context(text="title", time_range=None, tz=timezone.utc, kin=source)),
                        limit=19)
    assert source.asked == ["t0"]
    assert scored.none == pytest.approx(logistic(-1.0 + 3.0), abs=1e-6)
    every = FixedKin(source.answers)
    context = Context(text="title", time_range=None, tz=timezone.utc, kin=every)
    candidates, matrix = relevance.feature_matrix(pool.lexical, (), context)
    probs, none = RelevanceModel.probabilities(matrix, model.variant(False))
    assert every.asked == ["t0", "t1", "t2"]
    assert scored.probabilities == pytest.approx([round(float(p), 6) for p in probs]) and scored.none == \
        pytest.approx(none, abs=1e-6)


def _with_taxonomy(path: Path, table: Path, sha: str | None = None) -> Path:
    import hashlib

    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["variants"]["words"]["none"] = {"features": ["top_cohyponym"], "weights": [2.0], "bias": -1.0}
    raw["taxonomy"] = {"file": table.name, "sha256": sha or hashlib.sha256(table.read_bytes()).hexdigest()}
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_relevance__the_model_names_its_taxonomy_and_reads_it_on_first_use(tmp_path):
    import shutil

    from resolver.domain.taxonomy import DEFAULT_TABLE, Taxonomy

    table = Path(shutil.copy(DEFAULT_TABLE, tmp_path / "taxonomy.json.gz"))
    model = RelevanceModel.load(_with_taxonomy(write_model(tmp_path / "m.json"), table))
    assert isinstance(model.taxonomy, Taxonomy) and model.taxonomy is model.taxonomy
    assert RelevanceModel.load(write_model(tmp_path / "plain.json")).taxonomy is None  # names none
    assert isinstance(RelevanceModel.load().taxonomy, Taxonomy)  # the shipped model reads the shipped table


def test_relevance__a_taxonomy_not_the_one_trained_with_is_refused(tmp_path):
    import shutil

    from resolver.domain.taxonomy import DEFAULT_TABLE

    table = Path(shutil.copy(DEFAULT_TABLE, tmp_path / "taxonomy.json.gz"))
    with pytest.raises(ModelFileError, match="not the one it was trained with"):
        RelevanceModel.load(_with_taxonomy(write_model(tmp_path / "m.json"), table, sha="0" * 64))
    table.unlink()
    with pytest.raises(ModelFileError, match="cannot read its word taxonomy"):
        RelevanceModel.load(_with_taxonomy(write_model(tmp_path / "n.json"), DEFAULT_TABLE))


def test_relevance__the_fingerprint_changes_with_the_taxonomy(tmp_path):
    import gzip
    import shutil

    from resolver.domain.taxonomy import DEFAULT_TABLE

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = Path(shutil.copy(DEFAULT_TABLE, tmp_path / "a" / "taxonomy.json.gz"))
    raw = json.loads(gzip.decompress(first.read_bytes()))
    raw["words"].pop("violin")
    second = tmp_path / "b" / "taxonomy.json.gz"
    second.write_bytes(gzip.compress(json.dumps(raw).encode()))
    one = RelevanceModel.load(_with_taxonomy(write_model(tmp_path / "a" / "m.json"), first))
    other = RelevanceModel.load(_with_taxonomy(write_model(tmp_path / "b" / "m.json"), second))
    assert one.fingerprint(None) != other.fingerprint(None)


def test_relevance__fuzzy_reads_two_words_as_the_title_that_joins_them():
    """"kick-off" beside "Offsite kick-off dinner" and "Quarterly all-company kickoff": token_set_ratio reads
    the reference as written (100 for the dinner) and as the kickoff writes it ("kickoff": 100 for it too), so
    the spelling alone does not make one of the two certain. A reference with no such pair reads as written."""
    dinner = ScoredCandidate(item=item("d", "Offsite kick-off dinner"), score=1.2)
    kickoff = ScoredCandidate(item=item("k", "Quarterly all-company kickoff"), score=1.1)
    context = Context(text="kick-off", time_range=None, tz=timezone.utc)
    _, matrix = relevance.feature_matrix((dinner, kickoff), (item("x", "Team lunch"),), context)
    fuzzy = matrix[:, relevance.FEATURES.index("fuzzy")]
    assert list(fuzzy[:2]) == [1.0, 1.0] and fuzzy[2] < 0.5
    assert relevance._joined_queries(("kick", "off"), (dinner, kickoff)) == ["kickoff"]
    assert relevance._joined_queries(("kick", "off"), (dinner,)) == []
    alone = Context(text="kick off", time_range=None, tz=timezone.utc)
    _, plain = relevance.feature_matrix((kickoff,), (), alone)
    assert plain[0, relevance.FEATURES.index("fuzzy")] == 1.0  # its own title holds the joined word
    _, without = relevance.feature_matrix((dinner,), (item("k2", "Quarterly all-company kickoff"),), alone)
    assert without[1, relevance.FEATURES.index("fuzzy")] == 1.0  # a title only the encoder found joins them too

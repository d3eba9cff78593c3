"""The relevance model: P(this candidate is the item meant) and P(none of them is).

One model orders the candidates, cuts the pool and gives the probability a
certified threshold is measured on (resolver/evaluation/, docs/retrieval.md).
It reads signals the matcher and the encoder already compute for every
candidate of a wide pool (the lexical best `PREPOOL` and the encoder's
nearest `PREPOOL`): word coverage both ways weighted by IDF, the matcher's
score, how it matched (initials), rapidfuzz's `token_set_ratio`, the
encoder's cosine and its gap to the nearest title, both ranks, whether the
item falls in the reference's time range, and what each side leaves over
(how near the reference's left-over words are to the title's uncovered ones,
a name for a name, a word the reference negates). Each candidate's utility is a
weighted sum of those features, and a softmax over them (divided by a
temperature fitted on a split the weights were not trained on) says which
candidate is meant if one is. Whether one is at all is a second, logistic
model over the pool as a whole (its best utility, how many compete, the best
cosine and word coverage...): P(none of them). A candidate's probability is
(1 - P(none)) times its share of the softmax.

Trained offline (bench/relevance.py: a conditional logit in numpy, L2
regularised), calibrated on the calibration split, and shipped as a data file
(`resolver/data/relevance/model.json`) with its fingerprint: the file's
SHA-256 and the encoder it was trained with. At run time this is plain numpy
over a few dozen rows: no new dependency, well under a millisecond.

A candidate below the model's floor is not offered, nor a title only the
encoder found that is less near than the model's encoder-only cosine, nor
more than the model's `offer_at_most` most probable (a tie is listed whole), and nothing is when
P(none of them) reaches the model's cut (each derived from the labelled set:
docs/retrieval.md): a reference to nothing then answers `no_candidates`. The model never
resolves on its own: only a threshold certified for its name and fingerprint
and approved by staff lets its top candidate be the answer (invariant 4).
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from resolver.domain.items import NEGATIONS, STOPWORDS, Item, match_key, tokens_of
from resolver.domain.taxonomy import Kin, Taxonomy, TaxonomyFileError
from resolver.domain.times import TimeRange, in_range

if TYPE_CHECKING:
    import numpy as np

    from resolver.domain.matching import MatchingMemo, ScoredCandidate, TitleIndex
    from resolver.domain.title_vectors import Encoder

# How many candidates each signal brings to the model before it orders and cuts them.
PREPOOL = 30
# The encoder's nearest titles below this cosine are not brought at all (the model's floor decides the rest).
PREPOOL_COSINE = 0.15
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "data" / "relevance" / "model.json"
# The variants the file holds: with the encoder's features, and words alone (RESOLVER["SEMANTIC"] off, or the
# deadline stopped encoding); every model has the second.
SIGNAL, WORDS = "signal", "words"
# The words alone variant's weights, recalibrated for references a live title holds every word of: asked first
# when the encoder is on; its answer stands when its top candidate is at least its `words_first` probability.
WORDS_FIRST = "words_first"

FEATURES = (
    "lex_score",      # the matcher's score: IDF-weighted share of the reference matched + 0.3 x title coverage
    "lex_relative",   # that score over the best lexical score in the pool
    "unmatched",      # share of the reference's word weight no word of the title matches
    "coverage",       # share of the title's distinct words the reference covers
    "initialism",     # a reference word matched the title's initials
    "lex_first",      # the lexical best
    "lex_rank",       # log(1 + lexical rank), the lexical pool's length when absent
    "lexical",        # words found it at all
    "fuzzy",          # rapidfuzz token_set_ratio of the folded words / 100
    "time_in_range",  # a time was named and the item is due or occurs in it
    "time_outside",   # a time was named and the item is not in it
    "cosine",         # the encoder's cosine similarity (0 without the signal)
    "cosine_gap",     # the nearest title's cosine minus this one's
    "cosine_rank",    # log(1 + rank among the nearest), PREPOOL + 1 when absent
    "nearest_first",  # the encoder's nearest title
    "cosine_x_lex",   # cosine x lex_score: both agree
    "unknown_words",  # share of the reference's word weight no title of the calendar matches (the same for all)
    "substitution",   # unmatched x (1 - coverage): a reference word left over where a title word is ("bathroom"
                      # for "kitchen"): the same sentence about another thing
    "hubness",        # the title's cosine with the centroid of references: a title near everything ("Call the
                      # plumber") is near an unrelated reference too, and says less by being near
    "left_cosine",    # how well the title's uncovered words explain the reference's left-over ones: for the worst
                      # explained left-over word, its best cosine with an uncovered title word (1 when nothing is
                      # left over, 0 when the title has nothing uncovered). "ring" for "call" is near, "violin"
                      # for "piano" less so: another word for it, or another thing
    "swap",           # substitution x (1 - left_cosine): a word left over where a title word is, and unlike it
    "name_swap",      # a word no dictionary knows left over where the title has another ("send Yann the photos" for
                      # "Send Élodie the photos"): a name for a name, another person (0 without dictionaries)
    "negated",        # the title matches a word the reference negates ("Hugo's dentist, not Léa's")
    "siblings",       # log(1 + how many other candidates leave the same reference words over, each with other
                      # title words): one pattern with a slot ("Buy apples", "Buy bread", "Buy flour"), and the
                      # reference fills the slot with what none holds ("buy rice")
    "function_only",  # every reference word the title matches is a function word of some language the time
                      # grammar reads ("de" in "carrera de galgos" for "Clase de pilates"): words found it by
                      # an article or a preposition, which says nothing of what is meant
    "proper_swap",    # a word the reference writes with a capital is left over where the title has another
                      # ("client visit in Lisbon" for "Client visit in Paris", "the November timesheet" for
                      # "Submit the December timesheet"): another place, person or month, not another word for it
    "cohyponym",      # a left-over word is another thing of an uncovered title word's sort, and names none of the
                      # title's words more generally or otherwise ("violin" for "piano", "oat" for "soy": kin under
                      # one near hypernym in the word taxonomy, domain/taxonomy.py): a near miss, not a paraphrase
    "related_word",   # a left-over word is an uncovered title word's synonym, hypernym or hyponym ("ring" for
                      # "call", "the instrument" for "piano"): another word for what the title names
)
_SIGNAL_ONLY = frozenset({"cosine", "cosine_gap", "cosine_rank", "nearest_first", "cosine_x_lex", "left_cosine",
                          "swap", "name_swap"})
# Features only some models read, which cost an encoder call (the words): computed when the model asks.
WORD_FEATURES = frozenset({"left_cosine", "swap", "name_swap"})
# Features read from the word taxonomy (domain/taxonomy.py): computed when the model names one.
TAXONOMY_FEATURES = frozenset({"cohyponym", "related_word"})
# The reference's words encoded in the reference's own encoder call, at most (that call is not cut by the
# deadline; a longer reference's further words are encoded within the encoder's share, as title words are).
WITH_REFERENCE_WORDS = 32
# A word this short is never read as a name (initials, "ok", "mtg" are shorter or dictionary words).
NAME_MIN_LENGTH = 3

# What P(none of them) reads: the pool as a whole, and its most probable candidate ("top").
POOL_FEATURES = (
    "top_utility",     # the best candidate's utility
    "spread",          # log-sum-exp of the utilities minus the best: how many compete with it
    "best_cosine", "second_cosine",
    "best_lex", "best_matched",  # the best matcher's score; the largest share of the reference a title matches
    "best_coverage", "best_fuzzy",
    "lexical_count",   # log(1 + how many candidates words found)
    "top_unmatched", "top_cosine", "top_lex", "top_fuzzy", "top_coverage",
    "any_in_range",    # a time was named and some candidate is in it
    "pool_size",       # log(1 + candidates)
    "unknown_words",   # share of the reference's word weight the calendar does not know
    "top_substitution",
    "words_found_none",    # 1 when no word of the reference matched any title: only the encoder speaks
    "cosine_if_no_words",  # the best cosine when no word matched (its own slope in that regime), else 0
    "top_hubness",
    "top_left_cosine", "top_swap", "top_name_swap",
    "best_left_cosine",  # the best left_cosine of the lexical candidates
    "top_siblings",
    "top_proper_swap",
    "no_content_found",      # 1 when no title matches a reference word other than a function word (FEATURES'
                             # function_only): words found nothing that names a thing, only the encoder speaks
    "cosine_if_no_content",  # the best cosine in that regime, else 0
    "top_cohyponym", "top_related_word",
)


class ModelFileError(ValueError):
    """The relevance model's file is missing or not a model this code can read."""


@dataclass(frozen=True)
class NoneModel:
    """P(none of them) = the logistic of bias + weights . pool features (calibrated on its own split)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float


@dataclass(frozen=True)
class Variant:
    features: tuple[str, ...]
    weights: tuple[float, ...]
    temperature: float  # the candidates' softmax divides the utilities by it
    none: NoneModel
    floor: float  # candidates below this probability are not offered
    none_cut: float = 1.0  # at or above this P(none of them), nothing is offered
    # A title only the encoder found (no word matched) is offered only this near the reference (cosine).
    encoder_only_cosine: float = 0.0
    # At most this many are offered, the most probable (None: as many as the caller's limit). Past the first
    # few, a candidate is rarely the item meant and mostly fills the lists of references to nothing.
    offer_at_most: int | None = None
    # The WORDS_FIRST variant's only: when a live title holds every word of the reference and this variant
    # gives its most probable candidate at least this, its answer is the model's, and the encoder is not called.
    # Chosen on the calibration split (bench/relevance.py choose_words_first).
    words_first: float | None = None


@dataclass(frozen=True)
class Scored:
    """Candidates in the model's order with their probabilities, and P(none of them)."""

    candidates: tuple[Any, ...]  # ScoredCandidate, best first, only those at or above the floor
    probabilities: tuple[float, ...]
    none: float
    considered: int  # how many the model scored
    above_floor: int  # how many reached the floor (before the limit)
    lexical_tail_kept: bool = False  # the weakest lexical candidate weighed reached the floor
    # A closed item (never offered) more probable than every live candidate, and probable enough to have been
    # offered first were it live: the reference names it, and nothing live is offered.
    closed_top: Any = None
    # The WORDS_FIRST variant's answer for a crowded pool it is not sure of (`first_answer`): no certificate
    # covers it, so nothing resolves on its probability; its order is the clarification's.
    crowded: bool = False


@dataclass(frozen=True)
class PoolScore:
    """What the model said of a pool: the scorer's name and fingerprint, the listed candidates'
    probabilities (the pool's order) and P(none of them)."""

    scorer: str
    fingerprint: str
    retrieval: str  # what the judge's fingerprint names (RelevanceModel.retrieval)
    probabilities: tuple[float, ...]
    none: float
    crowded: bool = False  # Scored.crowded: the model's order, never its answer
    # The reference's word and the first candidate's that stand in one place, each missing from the other side
    # ("almond" for "soy"): the same sentence about another thing, never resolved on (domain/substitution.py).
    swapped: tuple[str, str] | None = None


@dataclass(frozen=True, eq=False)
class RelevanceModel:
    """The shipped model: its name, its fingerprint and its variants. Immutable, shared by threads."""

    name: str
    digest: str  # SHA-256 of the model file's bytes
    variants: dict[str, Variant] = field(compare=False)
    trained: dict[str, Any] = field(default_factory=dict, compare=False)
    # The unit mean of the train split's reference vectors: the hubness feature's anchor (None: no hubness).
    centroid_values: tuple[float, ...] | None = field(default=None, compare=False, repr=False)
    # The word taxonomy the model was trained with (domain/taxonomy.py), checked against its SHA-256 when the
    # model loads and read on first use; None when the model names none.
    taxonomy_path: Path | None = field(default=None, compare=False, repr=False)

    def __hash__(self) -> int:
        return hash((self.name, self.digest))

    @classmethod
    def load(cls, path: Path | str = DEFAULT_MODEL) -> RelevanceModel:
        try:
            raw_bytes = Path(path).read_bytes()
            raw = json.loads(raw_bytes)
            variants = {key: _variant(spec) for key, spec in raw["variants"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise ModelFileError(f"cannot read the relevance model {path}: {err}") from err
        for key, variant in variants.items():
            fits = (set(variant.features) <= set(FEATURES) and len(variant.weights) == len(variant.features)
                    and set(variant.none.features) <= set(POOL_FEATURES)
                    and len(variant.none.weights) == len(variant.none.features) and variant.temperature > 0
                    and (variant.offer_at_most is None or variant.offer_at_most >= 1)
                    and (variant.words_first is None or 0.0 < variant.words_first <= 1.0))
            if not fits:
                raise ModelFileError(f"relevance model {path}, variant {key!r}: features or weights do not fit")
        if WORDS not in variants:
            raise ModelFileError(f"relevance model {path} has no {WORDS!r} variant")
        centroid = raw.get("centroid")
        if centroid is not None:
            # Checked in plain Python: loading the model (a system check, a command's start) imports no numpy.
            if not isinstance(centroid, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                         for v in centroid):
                raise ModelFileError(f"relevance model {path}: the centroid is not a vector")
            centroid = tuple(float(v) for v in centroid)
        taxonomy = raw.get("taxonomy")
        taxonomy_path = None
        if taxonomy is not None:
            # Beside the model file; its digest is in the model's bytes, so the fingerprint changes with it.
            try:
                taxonomy_path = Path(path).parent / Path(str(taxonomy["file"])).name
                found = hashlib.sha256(taxonomy_path.read_bytes()).hexdigest()
            except (OSError, KeyError, TypeError) as err:
                raise ModelFileError(f"relevance model {path}: cannot read its word taxonomy: {err}") from err
            if found != taxonomy.get("sha256"):
                raise ModelFileError(f"relevance model {path}: the word taxonomy {taxonomy_path.name} is not the "
                                     f"one it was trained with (SHA-256 {found[:16]})")
        return cls(name=str(raw["name"]), digest=hashlib.sha256(raw_bytes).hexdigest(), variants=variants,
                   trained=dict(raw.get("trained", {})), centroid_values=centroid, taxonomy_path=taxonomy_path)

    @functools.cached_property
    def centroid(self) -> Any:
        """The centroid as a float32 vector (numpy, made on first use), or None."""
        if self.centroid_values is None:
            return None
        import numpy

        return numpy.asarray(self.centroid_values, dtype=numpy.float32)

    def scorer_name(self, encoder_name: str | None) -> str:
        """The name thresholds and provenance know this scorer by: the model and the encoder it reads."""
        return f"{self.name} ({encoder_name})" if encoder_name else f"{self.name} (words alone)"

    def fingerprint(self, encoder_name: str | None) -> str:
        """Changes with the model file and with the encoder whose cosines it reads."""
        return hashlib.sha256(f"{self.digest}\n{encoder_name or ''}".encode()).hexdigest()

    def retrieval(self, encoder_name: str | None) -> str:
        """What the judge's fingerprint names as having chosen its candidates: this scorer."""
        return f"{self.scorer_name(encoder_name)} {self.fingerprint(encoder_name)[:16]}"

    @functools.cached_property
    def taxonomy(self) -> Taxonomy | None:
        """The word taxonomy, read on first use; None when no variant reads TAXONOMY_FEATURES."""
        if self.taxonomy_path is None or not any(
                TAXONOMY_FEATURES & (set(v.features) | {f.removeprefix("top_") for f in v.none.features})
                for v in self.variants.values()):
            return None
        try:
            return Taxonomy.load(self.taxonomy_path)
        except TaxonomyFileError as err:
            raise ModelFileError(str(err)) from err

    @functools.cached_property
    def reads_words(self) -> bool:
        """Some variant reads WORD_FEATURES: gathering must encode the candidates' left-over words."""
        return any(WORD_FEATURES & (set(v.features) | {f.removeprefix("top_").removeprefix("best_")
                                                      for f in v.none.features if v.none.weights})
                   for v in self.variants.values())

    @property
    def words_first(self) -> float | None:
        """The probability at which the WORDS_FIRST variant answers for the model without the encoder, or None
        (no such variant: the encoder is always asked)."""
        first = self.variants.get(WORDS_FIRST)
        return None if first is None else first.words_first

    def variant(self, with_signal: bool) -> Variant:
        return self.variants[SIGNAL] if with_signal and SIGNAL in self.variants else self.variants[WORDS]

    def first_answer(self, gathered: Gathered, *, limit: int, closed: frozenset[str] = frozenset()) -> Scored | None:
        """The WORDS_FIRST variant's answer for a pool gathered without the encoder, when its most probable
        candidate reaches `words_first`, or when the pool is `crowded` (marked so: never resolved on); None
        otherwise (no such variant, or not that sure): the encoder is to be asked.

        A crowded pool (of a reference that names no time) holds more titles with every word of the reference
        than the pool has room for: the words already cut what the encoder would weigh, and the encoder's call
        is most of a warm request's cost (the fusion rule skipped it for a full pool of strong word matches).
        No labelled reference reaches it (the most titles holding every word where the variant is unsure: 5),
        so no certificate covers its answer, which is a clarification in the variant's order."""
        if self.words_first is None:
            return None
        scored = self.rank(gathered, limit=limit, closed=closed, words_first=True)
        if scored.probabilities and scored.probabilities[0] >= self.words_first:
            return scored
        # A reference that names a time is not crowded: the time tells such titles apart, and the encoder's
        # variant, which a certificate covers, may resolve the one in it.
        if gathered.context.time_range is None and crowded(gathered.lexical, closed):
            return replace(scored, crowded=True)
        return None

    def rank(self, gathered: Gathered, *, limit: int, closed: frozenset[str] = frozenset(),
             words_first: bool = False) -> Scored:
        """The candidates at or above the floor, most probable first (ties: the matcher's order), at most `limit`.

        `closed`: the item IDs among the candidates that are completed or cancelled. They compete for the
        probability as any candidate does and are never offered; when one is more probable than every live
        candidate and would have been offered first, nothing is offered (`Scored.closed_top`).
        `words_first`: weigh with the WORDS_FIRST variant (a pool gathered without the encoder).
        """
        import numpy

        variant = self.variants[WORDS_FIRST] if words_first else self.variant(gathered.context.with_signal)
        context = gathered.context
        # P(none) reads the most probable candidate's taxonomy features. Utilities that do not read them (the
        # shipped model's) say which candidate that is before any words are compared: only its are.
        top_only = context.kin is not None and TAXONOMY_FEATURES.isdisjoint(variant.features)
        candidates, matrix = feature_matrix(gathered.lexical, gathered.extra, context,
                                            kin_rows=() if top_only else None)
        if top_only and candidates:
            top = int(numpy.argmax(utilities_of(matrix, variant)))
            if top < len(gathered.lexical):
                found = context.kin.of(candidates[top])
                matrix[top, _COLUMN["cohyponym"]] = float(found.cohyponym)
                matrix[top, _COLUMN["related_word"]] = float(found.linked)
        if not candidates:
            return Scored(candidates=(), probabilities=(), none=1.0, considered=0, above_floor=0)
        probs, none = self.probabilities(matrix, variant)
        order = sorted(range(len(candidates)), key=lambda k: (-float(probs[k]), k))
        lexical_n = len(gathered.lexical)
        cosine = matrix[:, _COLUMN["cosine"]]
        shut = {k for k, c in enumerate(candidates) if c.item.item_id in closed} if closed else set()
        if shut and none < variant.none_cut:
            top = order[0]
            best_live = max((float(probs[k]) for k in range(len(candidates)) if k not in shut), default=-1.0)
            # Strictly more probable: a live item with the same title and the same features (this month's
            # "Pay the rent" beside last month's, done) is still offered.
            if top in shut and float(probs[top]) >= variant.floor and float(probs[top]) > best_live:
                return Scored(candidates=(), probabilities=(), none=round(none, 6), considered=len(candidates),
                              above_floor=0, closed_top=candidates[top])
        kept = [] if none >= variant.none_cut else [
            k for k in order if probs[k] >= variant.floor and k not in shut
            and (k < lexical_n or cosine[k] >= variant.encoder_only_cosine)]
        listed = kept[:_offered(kept, probs, limit, variant.offer_at_most)]
        return Scored(candidates=tuple(candidates[k] for k in listed),
                      probabilities=tuple(round(float(probs[k]), 6) for k in listed),
                      none=round(none, 6), considered=len(candidates), above_floor=len(kept),
                      lexical_tail_kept=bool(lexical_n and probs[lexical_n - 1] >= variant.floor
                                             and (lexical_n - 1) not in shut))

    @staticmethod
    def probabilities(matrix: np.ndarray, variant: Variant) -> tuple[np.ndarray, float]:
        """Each row's probability and P(none): (1 - P(none)) times a softmax over the candidates' utilities.

        `matrix` has every one of FEATURES (feature_matrix); the variant reads its own columns.
        """
        import numpy

        utilities = utilities_of(matrix, variant)
        scaled = utilities / variant.temperature
        exp = numpy.exp(scaled - scaled.max())
        pool = pool_features(matrix, utilities)
        logit = variant.none.bias + sum(w * pool[name] for name, w in zip(variant.none.features, variant.none.weights))
        none = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, logit))))
        return (1.0 - none) * exp / exp.sum(), none


def _variant(spec: dict[str, Any]) -> Variant:
    none = spec["none"]
    return Variant(features=tuple(spec["features"]), weights=tuple(float(w) for w in spec["weights"]),
                   temperature=float(spec["temperature"]), floor=float(spec["floor"]),
                   none_cut=float(spec.get("none_cut", 1.0)),
                   encoder_only_cosine=float(spec.get("encoder_only_cosine", 0.0)),
                   offer_at_most=None if spec.get("offer_at_most") is None else int(spec["offer_at_most"]),
                   words_first=None if spec.get("words_first") is None else float(spec["words_first"]),
                   none=NoneModel(features=tuple(none["features"]), weights=tuple(float(w) for w in none["weights"]),
                                  bias=float(none["bias"])))


_COLUMN = {name: n for n, name in enumerate(FEATURES)}


def utilities_of(matrix: np.ndarray, variant: Variant) -> np.ndarray:
    """The candidates' utilities: the variant's weights over its columns of the full feature matrix."""
    import numpy

    columns = [_COLUMN[name] for name in variant.features]
    return matrix[:, columns] @ numpy.asarray(variant.weights, dtype=numpy.float64)


def pool_features(matrix: np.ndarray, utilities: np.ndarray) -> dict[str, float]:
    """POOL_FEATURES of a non-empty pool (rows: FEATURES; `utilities`: the variant's, unscaled)."""
    import numpy

    top = int(numpy.argmax(utilities))
    best = float(utilities[top])
    column = {name: matrix[:, n] for name, n in _COLUMN.items()}
    lexical = column["lexical"] > 0
    content = lexical & (column["function_only"] == 0)
    cosines = numpy.sort(column["cosine"])[::-1]
    return {
        "top_utility": best,
        "spread": float(numpy.log(numpy.exp(utilities - best).sum())),
        "best_cosine": float(cosines[0]),
        "second_cosine": float(cosines[1]) if len(cosines) > 1 else 0.0,
        "best_lex": float(column["lex_score"].max()),
        "best_matched": float((1.0 - column["unmatched"][lexical]).max()) if lexical.any() else 0.0,
        "best_coverage": float(column["coverage"].max()),
        "best_fuzzy": float(column["fuzzy"].max()),
        "lexical_count": math.log1p(int(lexical.sum())),
        "top_unmatched": float(column["unmatched"][top]),
        "top_cosine": float(column["cosine"][top]),
        "top_lex": float(column["lex_score"][top]),
        "top_fuzzy": float(column["fuzzy"][top]),
        "top_coverage": float(column["coverage"][top]),
        "any_in_range": float(column["time_in_range"].max()),
        "pool_size": math.log1p(len(utilities)),
        "unknown_words": float(column["unknown_words"].max()),
        "top_substitution": float(column["substitution"][top]),
        "words_found_none": 0.0 if lexical.any() else 1.0,
        "cosine_if_no_words": 0.0 if lexical.any() else float(cosines[0]),
        "top_hubness": float(column["hubness"][top]),
        "top_left_cosine": float(column["left_cosine"][top]),
        "top_swap": float(column["swap"][top]),
        "top_name_swap": float(column["name_swap"][top]),
        "best_left_cosine": float(column["left_cosine"][lexical].max()) if lexical.any() else 0.0,
        "top_siblings": float(column["siblings"][top]),
        "top_proper_swap": float(column["proper_swap"][top]),
        "no_content_found": 0.0 if content.any() else 1.0,
        "cosine_if_no_content": 0.0 if content.any() else float(cosines[0]),
        "top_cohyponym": float(column["cohyponym"][top]),
        "top_related_word": float(column["related_word"][top]),
    }


@dataclass
class Context:
    """What the features of one request need besides the candidates."""

    text: str
    time_range: TimeRange | None
    tz: tzinfo
    # The encoder's cosine by item ID, for every candidate (empty without the signal).
    cosines: dict[str, float] = field(default_factory=dict)
    nearest: tuple[str, ...] = ()  # item IDs, nearest first
    with_signal: bool = False
    # The share of the reference's word weight no title matches at all (matching.Pool.unknown).
    unknown: float = 0.0
    # Each candidate title's cosine with the model's centroid of references (empty without the signal).
    hubness: dict[str, float] = field(default_factory=dict)
    # Each candidate's left_cosine by item ID (empty: the model reads no word features, or no signal).
    left_cosines: dict[str, float] = field(default_factory=dict)
    # The item IDs of the candidates whose left-over and uncovered words are both names (name_swap).
    name_swaps: frozenset[str] = frozenset()
    # How a lexical candidate's uncovered words meet the reference's left-over ones in the word taxonomy
    # (None: the model reads no taxonomy feature). Asked per candidate: RelevanceModel.rank asks only for the
    # most probable one when the utilities do not read them (P(none) reads that one's).
    kin: KinSource | None = None


def _offered(kept: list[int], probs: Any, limit: int, at_most: int | None) -> int:
    """How many of `kept` (most probable first) are listed: at most `at_most`, never more than `limit`.

    The cap never splits a tie: candidates exactly as probable as the last one it lists (eight "Labour Day"
    items of one holiday calendar, told apart only by their dates) are listed with it, up to `limit`, so
    which of equals is offered is never an accident of order.
    """
    count = min(len(kept), limit if at_most is None else min(limit, at_most))
    while 0 < count < min(len(kept), limit) and math.isclose(
            float(probs[kept[count]]), float(probs[kept[count - 1]]), rel_tol=1e-9, abs_tol=0.0):
        count += 1
    return count


def feature_matrix(lexical: Sequence[ScoredCandidate], extra: Sequence[Item], context: Context,
                   features: Sequence[str] = FEATURES,
                   kin_rows: Sequence[int] | None = None) -> tuple[list[Any], np.ndarray]:
    """The candidates (lexical ones, then those only the encoder brought) and their feature rows.

    `kin_rows`: the rows whose TAXONOMY_FEATURES are computed (None: every lexical row; the others are 0).
    """
    import numpy
    from rapidfuzz import fuzz, process

    from resolver.domain.matching import ScoredCandidate

    candidates: list[ScoredCandidate] = list(lexical) + [ScoredCandidate(item=item, score=0.0) for item in extra]
    n = len(candidates)
    columns: dict[str, np.ndarray] = {}
    lex_n = len(lexical)
    best = max((c.score for c in lexical), default=0.0)
    scores = numpy.array([c.score for c in candidates], dtype=numpy.float64)
    columns["lex_score"] = scores
    columns["lex_relative"] = scores / best if best > 0 else numpy.zeros(n)
    columns["unmatched"] = numpy.array([c.unmatched if k < lex_n else 1.0 for k, c in enumerate(candidates)])
    columns["coverage"] = numpy.array([c.coverage for c in candidates], dtype=numpy.float64)
    columns["initialism"] = numpy.array([float(c.initialism) for c in candidates])
    # Ranks count the candidates strictly better: two items alike (a duplicate title) share every feature,
    # so they are equally probable, a tie that is never resolved on confidence.
    is_lexical = numpy.arange(n) < lex_n
    columns["lex_first"] = (is_lexical & (scores >= best)).astype(numpy.float64)
    columns["lex_rank"] = numpy.log1p(numpy.where(is_lexical, _strictly_above(scores[:lex_n], scores), PREPOOL))
    columns["lexical"] = numpy.array([1.0 if k < lex_n else 0.0 for k in range(n)])
    tokens = tokens_of(match_key(context.text))
    titles = [" ".join(c.item.title_tokens) for c in candidates]  # folded once per item (items.make_item)
    # The reference as written and, when two of its words are one word of a candidate title ("kick off" for
    # "Quarterly all-company kickoff"), as that title writes them: the better of the two for each title, so
    # a title that joins the words is not told apart from one that writes them apart by the spelling alone.
    queries = [" ".join(tokens)] + _joined_queries(tokens, candidates)
    columns["fuzzy"] = (process.cdist(queries, titles, scorer=fuzz.token_set_ratio, dtype=numpy.float32)
                        .max(axis=0).astype(numpy.float64) / 100.0) if n else numpy.zeros(0)
    if context.time_range is not None:
        inside = numpy.array([float(c.in_range if k < lex_n else in_range(c.item, context.time_range, context.tz))
                              for k, c in enumerate(candidates)])
        columns["time_in_range"], columns["time_outside"] = inside, 1.0 - inside
    else:
        columns["time_in_range"] = columns["time_outside"] = numpy.zeros(n)
    cos = numpy.array([context.cosines.get(c.item.item_id, 0.0) for c in candidates], dtype=numpy.float64)
    near = set(context.nearest)
    near_cos = numpy.array([context.cosines.get(i, 0.0) for i in context.nearest], dtype=numpy.float64)
    columns["cosine"] = cos
    columns["cosine_gap"] = (max(context.cosines.values(), default=0.0) - cos) if context.with_signal \
        else numpy.zeros(n)
    is_near = numpy.array([c.item.item_id in near for c in candidates], dtype=bool)
    columns["cosine_rank"] = (numpy.log1p(numpy.where(is_near, _strictly_above(near_cos, cos), PREPOOL + 1))
                              if context.with_signal else numpy.zeros(n))
    columns["nearest_first"] = ((is_near & (cos >= near_cos.max())).astype(numpy.float64) if len(near_cos)
                                else numpy.zeros(n))
    columns["cosine_x_lex"] = cos * scores
    columns["unknown_words"] = numpy.full(n, context.unknown)
    columns["substitution"] = columns["unmatched"] * (1.0 - columns["coverage"])
    columns["hubness"] = numpy.array([context.hubness.get(c.item.item_id, 0.0) for c in candidates],
                                     dtype=numpy.float64)
    columns["left_cosine"] = numpy.array([context.left_cosines.get(c.item.item_id, 0.0) for c in candidates],
                                         dtype=numpy.float64)
    columns["swap"] = columns["substitution"] * (1.0 - columns["left_cosine"])
    # Both are rare: a Python pass over the candidates only when the reference has them.
    columns["name_swap"] = numpy.array([float(c.item.item_id in context.name_swaps) for c in candidates]) \
        if context.name_swaps else numpy.zeros(n)
    columns["siblings"] = numpy.log1p(_siblings(candidates[:lex_n], n))
    columns["cohyponym"], columns["related_word"] = numpy.zeros(n), numpy.zeros(n)
    if context.kin is not None:
        for k in range(lex_n) if kin_rows is None else [k for k in kin_rows if k < lex_n]:
            found = context.kin.of(candidates[k])
            columns["cohyponym"][k], columns["related_word"][k] = float(found.cohyponym), float(found.linked)
    columns["function_only"] = _function_only(context.text, candidates[:lex_n], n)
    columns["proper_swap"] = _proper_swaps(context.text, candidates[:lex_n], n)
    negated = negated_words(context.text) if _NEGATION.search(context.text.casefold()) else ()
    columns["negated"] = numpy.array([float(k < lex_n and any(w not in c.left_over for w in negated))
                                      for k, c in enumerate(candidates)]) if negated else numpy.zeros(n)
    matrix = numpy.column_stack([columns[name] for name in features]) if n else numpy.zeros((0, len(features)))
    return candidates, matrix


def _joined_queries(tokens: Sequence[str], candidates: Sequence[ScoredCandidate]) -> list[str]:
    """The reference's words with each pair of adjacent words that is one word of a candidate's title joined
    (matching finds those titles by it too: "check out" for "Checkout"); [] when no pair is."""
    from resolver.domain.matching import joined_pairs

    if len(tokens) < 2:
        return []
    words = {t for c in candidates for t in c.item.title_tokens}
    return [" ".join([*tokens[:k], tokens[k] + tokens[k + 1], *tokens[k + 2:]]) for k in joined_pairs(tokens, words)]


# What says the words after it, to the end of its clause, are not meant ("the design review, not the agency
# one"; "n't": "don't cancel it"), in the languages the time grammar reads. A hyphen joins, never negates
# ("no-show").
_NEGATION = re.compile(r"(?<![\w-])(?:" + "|".join(sorted(NEGATIONS | {"keinen", "ni"})) + r")(?![\w-])"
                       r"|n['’]t(?![\w-])")
_CLAUSE = re.compile(r"[,;.!?()]")


def negated_words(text: str) -> tuple[str, ...]:
    """The significant words of the first negated clause after its negation, less those the reference also says
    outside it (matching's folded form)."""
    clauses = _CLAUSE.split(text.casefold())
    for n, clause in enumerate(clauses):
        cue = _NEGATION.search(clause)
        if cue is None:
            continue
        said = set(tokens_of(match_key(" ".join(clauses[:n] + [clause[:cue.start()]] + clauses[n + 1:]))))
        return tuple(dict.fromkeys(t for t in tokens_of(match_key(clause[cue.end():]))
                                   if t not in STOPWORDS and t not in said))
    return ()


def _siblings(lexical: Sequence[ScoredCandidate], n: int) -> np.ndarray:
    """For each of `n` candidates (the lexical ones first), how many other lexical candidates leave the same
    reference words over while their own uncovered words differ (0 when it leaves nothing over)."""
    import numpy
    from collections import Counter

    over = Counter(c.left_over for c in lexical if c.left_over)
    alike = Counter((c.left_over, c.uncovered) for c in lexical if c.left_over)
    counts = numpy.zeros(n)
    for k, c in enumerate(lexical):
        if c.left_over:
            counts[k] = over[c.left_over] - alike[(c.left_over, c.uncovered)]
    return counts


@functools.cache
def function_words() -> frozenset[str]:
    """The stopwords of every language the time grammar reads (resolver/data/stopwords/): articles,
    prepositions and possessives, whatever the request's own language."""
    from resolver.domain.timeexpr import languages
    from resolver.domain.wordforms import word_forms

    return frozenset().union(*(word_forms(language).stopwords for language in languages()))


@functools.cache
def filler_words() -> frozenset[str]:
    """The fillers of every language the time grammar reads (resolver/data/fillers/): question words, verbs of
    asking and doing, nouns for "an item" ("thing", "meeting", "task")."""
    from resolver.domain.timeexpr import languages
    from resolver.domain.wordforms import word_forms

    return frozenset().union(*(word_forms(language).fillers for language in languages()))


def _function_only(text: str, lexical: Sequence[ScoredCandidate], n: int) -> np.ndarray:
    """1 for a lexical candidate whose matched reference words are all function words (FEATURES)."""
    import numpy

    out = numpy.zeros(n)
    function = function_words()
    # English stopwords never count as matched ("the"): only the other languages' function words can mark one.
    words = [w for w in dict.fromkeys(tokens_of(match_key(text))) if w not in STOPWORDS]
    if not any(w in function for w in words):
        return out  # most references: no function word of another language, nothing to look at
    content = [w for w in words if w not in function]
    foreign = [w for w in words if w in function]
    marked: dict[tuple[str, ...], float] = {}  # candidates that leave the same words over are alike
    for k, candidate in enumerate(lexical):
        left = candidate.left_over
        if left not in marked:
            marked[left] = float(all(w in left for w in content) and any(w not in left for w in foreign))
        out[k] = marked[left]
    return out


_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def capitalised_words(text: str) -> frozenset[str]:
    """The folded tokens of the words `text` writes with a capital letter, its first word left out (a sentence's
    or a title's first word has one whatever it is) unless it is a possessive ("Mia's piano recital": whose it
    is names someone): names of people and places, months, brands."""
    found: set[str] = set()
    for n, word in enumerate(_WORD.finditer(text)):
        if (n or word.group(0).endswith(("'s", "’s"))) and word.group(0)[0].isupper():
            found.update(tokens_of(match_key(word.group(0))))
    return frozenset(found)


def _proper_swaps(text: str, lexical: Sequence[ScoredCandidate], n: int) -> np.ndarray:
    """1 for a lexical candidate that leaves over a word the reference capitalises and leaves uncovered a word
    its title capitalises (FEATURES' proper_swap)."""
    import numpy

    out = numpy.zeros(n)
    named = capitalised_words(text)
    if not named:
        return out  # most references name nothing with a capital past their first word
    for k, candidate in enumerate(lexical):
        if named.intersection(candidate.left_over) and candidate.uncovered \
                and capitalised_words(candidate.item.title).intersection(candidate.uncovered):
            out[k] = 1.0
    return out


def _strictly_above(pool: np.ndarray, values: np.ndarray) -> np.ndarray:
    """For each value, how many of `pool` are strictly greater (a rank that equal values share)."""
    import numpy

    ordered = numpy.sort(pool)
    return (len(ordered) - numpy.searchsorted(ordered, values, side="right")).astype(numpy.float64)


def signal_cosines(text: str, items: Sequence[Item], index: TitleIndex, memo: MatchingMemo, encoder: Encoder,
                   lexical: Sequence[ScoredCandidate], centroid: Any = None, words: Sequence[str] = (),
                   ) -> tuple[tuple[Item, ...], dict[str, float], tuple[str, ...], dict[str, float]] | None:
    """The encoder's nearest titles (items only it brings), every candidate's cosine, the nearest IDs in
    order, and every candidate's hubness (its cosine with `centroid`; empty without one).

    None when the deadline stopped encoding: the model then reads words alone.
    """
    from resolver.domain.semantic import encoding_expired, nearest

    found = nearest(text, index, memo, encoder, limit=PREPOOL, floor=PREPOOL_COSINE, words=words)
    if found is None or found.reference is None:
        return None
    # The live titles' matrix holds every live candidate; a closed one (FetchResult.closed) words found is
    # encoded here, within the encoder's share of the deadline, and remembered as titles are. One lookup and
    # one product for every candidate: a row and a product per candidate cost more than the rest of it.
    near_items = [items[p] for p in found.positions]
    compared = [c.item for c in lexical] + (near_items if centroid is not None else [])
    rows = memo.vectors.rows([item.title for item in compared], encoder, expired=encoding_expired())
    if rows is None:
        return None
    # Positions index `items`, this request's: the memo's index may be another sequence with the same titles
    # in the same order (another collection of the account), whose Items are not this request's.
    cosines = {item.item_id: s for item, s in zip(near_items, found.similarities)}
    nearest_ids = tuple(item.item_id for item in near_items)
    if lexical:
        for candidate, similarity in zip(lexical, (rows[:len(lexical)] @ found.reference).tolist()):
            cosines.setdefault(candidate.item.item_id, round(similarity, 4))
    lexical_ids = {c.item.item_id for c in lexical}
    extra = tuple(item for item in near_items if item.item_id not in lexical_ids)
    hubness = {}
    if centroid is not None and compared:
        hubness = {item.item_id: round(h, 4) for item, h in zip(compared, (rows @ centroid).tolist())}
    return extra, cosines, nearest_ids, hubness


def left_cosines(words: Sequence[str], lexical: Sequence[ScoredCandidate], extra: Sequence[Item],
                 stopwords: frozenset[str], memo: MatchingMemo, encoder: Encoder) -> dict[str, float] | None:
    """Each candidate's left_cosine (FEATURES), by item ID; None when the deadline stopped encoding.

    A candidate words found compares what the matcher left over on both sides; one only the encoder
    brought compares all the reference's significant words with all the title's.
    """
    import numpy

    from resolver.domain.semantic import encoding_expired

    pairs: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for candidate in lexical:
        pairs[candidate.item.item_id] = (candidate.left_over, candidate.uncovered)
    for item in extra:
        pairs[item.item_id] = (tuple(words), tuple(dict.fromkeys(t for t in item.title_tokens if t not in stopwords)))
    compared = [(left, title) for left, title in pairs.values() if left and title]
    lefts = list(dict.fromkeys(w for left, _ in compared for w in left))
    titles = list(dict.fromkeys(w for _, title in compared for w in title))
    found: dict[str, float] = {}
    # A calendar's words are encoded once and remembered; the first request over a hostile calendar (titles of
    # many distinct words) spends the encoder's share of the deadline at most, as titles do.
    rows = memo.vectors.rows(lefts + titles, encoder, expired=encoding_expired()) if compared \
        else numpy.zeros((0, 0), dtype=numpy.float32)
    if rows is None:
        return None
    # One product for every pair, then plain Python over a few numbers per candidate: a small product per
    # candidate cost more than the rest of the model together.
    similarity = (rows[:len(lefts)] @ rows[len(lefts):].T).tolist() if compared else []
    at_left = {w: n for n, w in enumerate(lefts)}
    at_title = {w: n for n, w in enumerate(titles)}
    known: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}
    for item_id, key in pairs.items():
        value = known.get(key)
        if value is None:
            left, title = key
            if not left:
                value = 1.0
            elif not title:
                value = 0.0
            else:
                columns = [at_title[w] for w in title]
                value = round(min(max(map(similarity[at_left[w]].__getitem__, columns)) for w in left), 4)
            known[key] = value
        found[item_id] = value
    return found


def name_swaps(lexical: Sequence[ScoredCandidate], knows: Callable[[str], bool]) -> frozenset[str]:
    """The item IDs of the candidates words found whose left-over words and uncovered title words both
    hold a word no dictionary knows (`knows`: Glossary.knows), NAME_MIN_LENGTH letters or more."""

    both = [c for c in lexical if c.left_over and c.uncovered]
    # Each distinct word asked once: titles of one calendar share their words.
    unknown = {w for w in {w for c in both for w in c.left_over + c.uncovered}
               if len(w) >= NAME_MIN_LENGTH and w.isalpha() and not knows(w)}
    return frozenset(c.item.item_id for c in both
                     if not unknown.isdisjoint(c.left_over) and not unknown.isdisjoint(c.uncovered))


@dataclass(frozen=True)
class Gathered:
    """The wide pool of one reference, ready for the model: what the pipeline and the training script share."""

    lexical: tuple[Any, ...]  # ScoredCandidate, the matcher's order, at most PREPOOL
    extra: tuple[Item, ...]  # the encoder's nearest titles words did not find
    context: Context
    matched: int  # how many items words matched (before the PREPOOL cut)


def gather(text: str, items: Sequence[Item], *, lexical: Sequence[ScoredCandidate], matched: int,
           time_range: TimeRange | None, tz: tzinfo, memo: MatchingMemo | None, encoder: Encoder | None,
           language: str, unknown: float = 0.0, centroid: Any = None, words: bool = False,
           taxonomy: Taxonomy | None = None) -> Gathered:
    """The lexical pool (already ranked by the matcher) joined by the encoder's nearest titles and their cosines;
    with `words`, also each candidate's left_cosine (a model that reads WORD_FEATURES); with a `taxonomy`, how
    each candidate's left-over words meet its title's (TAXONOMY_FEATURES)."""
    from resolver.domain.matching import title_index
    from resolver.domain.wordforms import word_forms

    context = Context(text=text, time_range=time_range, tz=tz, unknown=unknown)
    extra: tuple[Item, ...] = ()
    # A reader that keeps no memo would have every title encoded on every request:
    # the signal needs the reader's (a shared one would hold other people's titles).
    if encoder is not None and memo is not None and items and text.strip():
        stopwords = word_forms(language).stopwords
        significant = list(dict.fromkeys(w for w in tokens_of(match_key(text)) if w not in stopwords)) \
            if words else []
        found = signal_cosines(text, items, title_index(items, language=language, memo=memo), memo, encoder,
                               lexical, centroid, significant[:WITH_REFERENCE_WORDS])
        if found is not None:
            extra, context.cosines, context.nearest, context.hubness = found
            context.with_signal = True
        if found is not None and words:
            explained = left_cosines(significant, lexical, extra, stopwords, memo, encoder)
            if explained is None:
                # The deadline stopped encoding the words: the model reads words alone, as without the signal.
                extra, context = (), Context(text=text, time_range=time_range, tz=tz, unknown=unknown)
            else:
                context.left_cosines = explained
                glossary = getattr(encoder, "glossary", None)
                if glossary is not None:
                    context.name_swaps = name_swaps(lexical, glossary.knows)
    if taxonomy is not None:
        glossary = getattr(encoder, "glossary", None)
        context.kin = KinSource(text, taxonomy, glosses=None if glossary is None else glossary.glosses)
    return Gathered(lexical=tuple(lexical), extra=extra, context=context, matched=matched)


class KinSource:
    """A lexical candidate's Kin (TAXONOMY_FEATURES) for one reference, asked candidate by candidate.

    The words compared: what the matcher left over on each side, and the words it matched only by their
    shape (a typo, a prefix: no word of the other side has the same stem), which are a typo's or another
    word's ("grandpa" for "grandma" is one letter apart). Candidates with the same words to compare are
    compared once. Function words and fillers of the time grammar's languages ("de", "al"; "thing",
    "stuff", "meeting", "done") name no thing of a sort.
    """

    def __init__(self, text: str, taxonomy: Taxonomy, glosses: Callable[[str], Sequence[str]] | None = None) -> None:
        from resolver.domain.wordforms import word_forms

        self.taxonomy, self.glosses = taxonomy, glosses
        self.stems = word_forms("english").stems  # the table's keys are English stems
        self.skip = function_words() | filler_words()
        self.words = [w for w in dict.fromkeys(tokens_of(match_key(text))) if w not in self.skip and w.isalpha()]
        self.word_stems = self.stems(self.words)
        self._known: dict[tuple[tuple[str, ...], tuple[str, ...]], Kin] = {}

    def of(self, candidate: ScoredCandidate) -> Kin:
        title = [t for t in candidate.item.title_tokens if t not in self.skip and t.isalpha()]
        title_stems = self.stems(title)
        shaped = tuple(w for w, s in zip(self.words, self.word_stems)
                       if s not in title_stems and w not in candidate.left_over)
        shaped_title = tuple(t for t, s in zip(title, title_stems)
                             if s not in self.word_stems and t not in candidate.uncovered)
        left, uncovered = candidate.left_over + shaped, candidate.uncovered + shaped_title
        if not (left and uncovered):
            return Kin()
        key = (left, uncovered)
        if key not in self._known:
            self._known[key] = self.taxonomy.compare(left, uncovered, stems=self.stems, glosses=self.glosses,
                                                     skip=self.skip)
        return self._known[key]


def holds_every_word(lexical: Sequence[ScoredCandidate], closed: frozenset[str] = frozenset()) -> bool:
    """A live title (not one of the `closed` item IDs) holds every word of the reference: only then is the
    WORDS_FIRST variant asked (`RelevanceModel.first_answer`)."""
    return any(c.unmatched == 0 for c in lexical if c.item.item_id not in closed)


def crowded(lexical: Sequence[ScoredCandidate], closed: frozenset[str] = frozenset()) -> bool:
    """The pool is full (PREPOOL candidates) and every live title in it holds every word of the reference: more
    such titles may be left out than the pool holds (`RelevanceModel.first_answer`)."""
    live = [c for c in lexical if c.item.item_id not in closed]
    return len(lexical) >= PREPOOL and bool(live) and all(c.unmatched == 0 for c in live)


def kin_of(text: str, lexical: Sequence[ScoredCandidate], taxonomy: Taxonomy,
           glosses: Callable[[str], Sequence[str]] | None = None) -> dict[str, Kin]:
    """Every lexical candidate's Kin that says something, by item ID (KinSource, asked for each)."""
    source = KinSource(text, taxonomy, glosses)
    found = {c.item.item_id: source.of(c) for c in lexical}
    return {item_id: kin for item_id, kin in found.items() if kin != Kin()}

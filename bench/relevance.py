"""Train, calibrate and write the relevance model (resolver/domain/relevance.py) from the labelled set.

    .venv/bin/python bench/relevance.py                 # train on `train`, calibrate on `calibrate`, write the model
    .venv/bin/python bench/relevance.py --dry-run       # the same figures, the model file untouched

Every reference of the labelled set (bench/data/retrieval/) goes through the
real pipeline (`resolver.domain.pipeline.resolve`, memory calendar, the set's
clock) with a recording ranker: what the model would weigh for that reference
(the wide pool and its features) is recorded exactly as the pipeline gathers
it. References the pipeline answers before any ranking (an exact title, ID or
UID; a title plus a time; a question by date alone) are left out: the model
never sees them. A reference's target is the expected item when it is in the
pool, else "none of them": the right answer when the item meant is not listed.

The model is a conditional logit: each candidate's utility is w . x, the
option "none" has a utility b, and a softmax over them is the distribution.
It is fitted on the train split by gradient descent (Adam, L2 penalty
`--l2`), in numpy alone; P(none)'s logistic regression takes the penalty
that cross-validation on the train split prefers (`choose_l2`). The
calibration split then sets the rest, each by one rule: the temperature (the
softmax's divisor minimising the split's negative log-likelihood), P(none)'s
Platt slope and intercept, and what is offered (`choose_cuts`, `choose_cap`):
the floor below which a candidate is not offered, the P(none) at which
nothing is, and how many at most, together losing the item meant for no more
than the `--loss` budget (and a quarter of it for the count). Two variants are
trained: with the semantic signal's features ("signal") and words alone
("words", RESOLVER["SEMANTIC"] off). The test split is never read here.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench import retrieval  # noqa: E402

MODEL_NAME = "relevance-cl-1"
# Features the candidates' utilities do not read: P(none) reads them of the most probable candidate
# ("top_cohyponym"). As utilities they moved items meant below the floor on the calibration half (seventh round).
POOL_ONLY = frozenset({"cohyponym", "related_word"})


@dataclass
class Example:
    ref_id: str
    category: str
    split: str
    matrix: np.ndarray  # candidates x features, all of relevance.FEATURES
    targets: tuple[int, ...]  # rows of the expected items present in the pool; () = none of them
    absent: bool  # the reference names nothing
    present: bool  # an expected item is in the pool
    # Rows that are closed items (FetchResult.closed): they compete, are never offered, and when one is the
    # most probable nothing is (RelevanceModel.rank). None: no closed row.
    closed: np.ndarray | None = None


class Recorder:
    """A ranker that records what the model would weigh and keeps the matcher's order."""

    name = "recorder"
    reads_words = True  # record every feature, the word features too
    words_first = None  # every reference is weighed with the encoder (the pipeline's _words_first is not asked)

    def __init__(self, centroid: Any = None) -> None:
        self.last: Any = None
        self.closed: frozenset[str] = frozenset()
        self.centroid = centroid

    def rank(self, gathered: Any, *, limit: int, closed: frozenset[str] = frozenset()) -> Any:
        from resolver.domain.relevance import Scored

        self.last, self.closed = gathered, closed
        listed = (tuple(gathered.lexical) + tuple(_wrap(i) for i in gathered.extra))[:limit]
        return Scored(candidates=listed, probabilities=tuple(0.0 for _ in listed), none=0.0,
                      considered=len(listed), above_floor=len(listed))

    def scorer_name(self, encoder_name: str | None) -> str:
        return "recorder"

    def fingerprint(self, encoder_name: str | None) -> str:
        return "0" * 64

    def retrieval(self, encoder_name: str | None) -> str:
        return "recorder"

    @property
    def taxonomy(self) -> Any:
        return taxonomy()


TAXONOMY: Path | None = None  # --taxonomy; None: the shipped table


@functools.cache
def taxonomy() -> Any:
    """The word taxonomy bench/taxonomy.py wrote (resolver/data/relevance/, or --taxonomy), read once."""
    from resolver.domain.taxonomy import DEFAULT_TABLE, Taxonomy

    return Taxonomy.load(TAXONOMY or DEFAULT_TABLE)


def _wrap(item: Any) -> Any:
    from resolver.domain.matching import ScoredCandidate

    return ScoredCandidate(item=item, score=0.0)


def calendars() -> dict[str, tuple[Any, Any]]:
    """Each calendar of the set: (meta, memory calendar). One memo per calendar, as one reader keeps."""
    from resolver.calendars.memory import MemoryCalendar

    found = {}
    for name, root in retrieval.CALENDARS.items():
        meta = retrieval.load_meta(root)
        raw = retrieval.load_items(root)
        found[name] = (meta, MemoryCalendar(items=list(retrieval.memory_items(raw, meta)),
                                            closed=list(retrieval.memory_closed(raw, meta))))
    return found


def references() -> list[dict[str, Any]]:
    """Every labelled reference of every calendar, its split for fitting (`fitting_split`)."""
    refs = retrieval.load_references()
    for ref in refs:
        ref["split"] = fitting_split(ref)
    return refs


def fitting_split(ref: dict[str, Any]) -> str:
    """test stays test; every other reference is train or calibrate by the parity of its ID's SHA-256.

    The writers' own train and calibrate labels put a tenth of the new references in train, and the
    first set's tune split had 6 references to nothing: too few to learn "none of them" from.
    """
    if ref["split"] == "test":
        return "test"
    return "train" if int(hashlib.sha256(ref["id"].encode()).hexdigest(), 16) % 2 == 0 else "calibrate"


def reference_centroid(refs: list[dict[str, Any]], encoder: Any) -> np.ndarray:
    """The unit mean of the train split's reference vectors (the hubness feature's anchor)."""
    texts = [r["text"] for r in refs if r["split"] == "train"]
    vectors = encoder.encode(texts)
    mean = vectors.mean(axis=0)
    return (mean / np.linalg.norm(mean)).astype(np.float32)


def collect(refs: list[dict[str, Any]], cals: dict[str, tuple[Any, Any]], encoder: Any,
            centroid: Any = None) -> list[Example]:
    """The examples the model would see, through the real pipeline."""
    from resolver.domain.items import Kind
    from resolver.domain.pipeline import resolve
    from resolver.domain.ports import NoThresholds
    from resolver.domain.requests import ResolveRequest
    from resolver.domain.relevance import FEATURES, feature_matrix
    from resolver.judges.disabled import DisabledJudge

    examples = []
    for ref in refs:
        meta, calendar = cals[ref["calendar"]]
        recorder = Recorder(centroid)
        request = ResolveRequest(text=ref["text"], kind=Kind(ref["kind"]), time_zone=meta.zone)
        resolve(request=request, calendar=calendar, judge=DisabledJudge(), policy=NoThresholds(),
                request_id=f"train-{ref['id']}", now=meta.now, semantic=encoder, ranker=recorder)
        gathered = recorder.last
        if gathered is None:
            continue  # answered before ranking: exact, title and time, or by date alone
        candidates, matrix = feature_matrix(gathered.lexical, gathered.extra, gathered.context, FEATURES)
        expected = set(ref["expected"])
        targets = tuple(k for k, c in enumerate(candidates) if c.item.uid in expected)
        shut = np.array([c.item.item_id in recorder.closed for c in candidates], dtype=bool)
        examples.append(Example(ref_id=ref["id"], category=ref["category"], split=ref["split"], matrix=matrix,
                                targets=targets, absent=not expected, present=bool(targets),
                                closed=shut if shut.any() else None))
    return examples


# The model -------------------------------------------------------------------------------------------


def _stack(examples: list[Example], columns: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rows = [e.matrix[:, columns] for e in examples]
    x = np.vstack(rows) if rows else np.zeros((0, len(columns)))
    sizes = np.array([len(r) for r in rows])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else np.zeros(0, dtype=int)
    target = np.zeros(len(x), dtype=bool)
    for e, start in zip(examples, starts):
        for k in e.targets:
            target[start + k] = True
    return x, sizes, starts, target


def _softmax(x: np.ndarray, sizes: np.ndarray, w: np.ndarray, t: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Per example, the candidates' softmax (flat), and each row's example."""
    u = x @ w / t
    segment = np.repeat(np.arange(len(sizes)), sizes)
    top = np.full(len(sizes), -np.inf)
    np.maximum.at(top, segment, u)
    exp = np.exp(u - top[segment])
    return exp / np.bincount(segment, weights=exp, minlength=len(sizes))[segment], segment


def softmax_nll(x, sizes, target, w, t=1.0) -> float:
    p, segment = _softmax(x, sizes, w, t)
    hit = np.bincount(segment, weights=p * target, minlength=len(sizes))
    return float(-np.log(np.maximum(hit, 1e-12)).mean())


def _adam(gradient, size: int, *, steps: int, rate: float) -> np.ndarray:
    theta, m, v = np.zeros(size), np.zeros(size), np.zeros(size)
    for step in range(1, steps + 1):
        g = gradient(theta)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g ** 2
        theta = theta - rate * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
    return theta


def fit_softmax(x, sizes, target, *, l2: float) -> np.ndarray:
    """Which candidate is meant, among pools that hold it: a conditional logit (maximum likelihood, L2).
    Its gradient is (model probability - target posterior) times the features."""
    n = len(sizes)

    def gradient(w: np.ndarray) -> np.ndarray:
        p, segment = _softmax(x, sizes, w)
        hit = np.bincount(segment, weights=p * target, minlength=n)
        posterior = np.where(target, p / np.maximum(hit[segment], 1e-300), 0.0)
        return ((p - posterior)[:, None] * x).sum(axis=0) / n + 2 * l2 * w

    return _adam(gradient, x.shape[1], steps=3000, rate=0.05)


def fit_logistic(z: np.ndarray, y: np.ndarray, *, l2: float) -> tuple[np.ndarray, float]:
    """P(y) = logistic(bias + a . z), maximum likelihood with an L2 penalty (on standardised features)."""
    mean, scale = z.mean(axis=0), np.maximum(z.std(axis=0), 1e-6)
    zs = np.column_stack([(z - mean) / scale, np.ones(len(z))])

    def gradient(theta: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-np.clip(zs @ theta, -60, 60)))
        penalty = 2 * l2 * np.append(theta[:-1], 0.0)
        return zs.T @ (p - y) / len(y) + penalty

    theta = _adam(gradient, zs.shape[1], steps=4000, rate=0.03)
    a = theta[:-1] / scale
    return a, float(theta[-1] - (mean * a).sum())


def temperature(x, sizes, target, w) -> float:
    grid = np.exp(np.linspace(np.log(0.25), np.log(4.0), 81))
    return float(grid[int(np.argmin([softmax_nll(x, sizes, target, w, t) for t in grid]))])


def pool_rows(examples: list[Example], columns: list[int], w: np.ndarray,
              names: tuple[str, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each example's POOL_FEATURES, or those `names`, (as the runtime computes them) and whether none of its
    candidates is meant."""
    from resolver.domain.relevance import POOL_FEATURES, pool_features

    names = POOL_FEATURES if names is None else names
    rows, labels = [], []
    for e in examples:
        if len(e.matrix) == 0:
            continue  # an empty pool is none without a model
        found = pool_features(e.matrix, e.matrix[:, columns] @ w)
        rows.append([found[name] for name in names])
        labels.append(0.0 if e.present else 1.0)
    return np.array(rows), np.array(labels)


def _offerable(e: Example, variant: Any) -> np.ndarray:
    """Which rows the runtime may offer at all (RelevanceModel.rank: the encoder-only rows near enough, never
    a closed item's)."""
    from resolver.domain.relevance import FEATURES

    near = (e.matrix[:, FEATURES.index("lexical")] > 0) | (e.matrix[:, FEATURES.index("cosine")]
                                                           >= variant.encoder_only_cosine)
    return near if e.closed is None else near & ~e.closed


def _probabilities(e: Example, variant: Any) -> tuple[np.ndarray, float]:
    """Each row's probability as offered (0 for a row never offered), and P(none); all 0 when a closed item is
    more probable than every live one and reaches the floor (RelevanceModel.rank: nothing is offered)."""
    from resolver.domain.relevance import RelevanceModel

    probs, none = RelevanceModel.probabilities(e.matrix, variant)
    if e.closed is not None and none < variant.none_cut:
        top = int(np.argmax(probs))
        live = probs[~e.closed]
        if e.closed[top] and probs[top] >= variant.floor and probs[top] > (live.max() if len(live) else -1.0):
            return np.zeros(len(probs)), none
    return np.where(_offerable(e, variant), probs, 0.0), none


# A title only the encoder found is offered when it is at least as near as this share of such titles that
# were meant (train split): below it, a title near everything ("Call the plumber", cosine 0.25 with
# "xylophone" and with "renew my fishing licence") is offered for references to nothing.
ENCODER_ONLY_QUANTILE = 0.05


def encoder_only_cosine(examples: list[Example], loss: float) -> float:
    """The least cosine a title only the encoder found must have to be offered: the ENCODER_ONLY_QUANTILE
    quantile of the cosines of such titles that were meant, on the train split (0 without the signal)."""
    from resolver.domain.relevance import FEATURES

    cosine, lexical = FEATURES.index("cosine"), FEATURES.index("lexical")
    meant = [e.matrix[k, cosine] for e in examples for k in e.targets if e.matrix[k, lexical] == 0]
    if not meant or max(meant) == 0.0:
        return 0.0
    return round(float(np.quantile(meant, ENCODER_ONLY_QUANTILE)), 4)


def choose_cuts(examples: list[Example], spec: dict[str, Any], loss: float) -> tuple[float, float, dict[str, Any]]:
    """The floor and the none cut on the calibration split, each spending half of `loss`: the highest floor
    that keeps the items meant offered for all but loss/2 of the references whose pool holds them (it
    shortens every list), then the lowest cut that keeps all but `loss` with that floor (it empties the
    lists of references to nothing)."""
    from resolver.domain.relevance import RelevanceModel, _variant

    variant = _variant(spec)
    meant, absent = [], []
    for e in examples:
        if len(e.matrix) == 0:
            if e.absent:
                absent.append((0.0, 1.0))
            continue
        probs, none = _probabilities(e, variant)
        offerable = _offerable(e, variant)
        if e.present and any(offerable[k] for k in e.targets):
            # (an item meant that the encoder-only rule leaves out is that rule's cost, measured on its own)
            meant.append((max(probs[k] for k in e.targets), none))
        elif e.absent:
            absent.append((float(probs.max()), none))

    def figures(floor: float, cut: float) -> tuple[float, float]:
        kept = float(np.mean([p >= floor and none < cut for p, none in meant])) if meant else 1.0
        nothing = float(np.mean([top < floor or none >= cut for top, none in absent])) if absent else 1.0
        return kept, nothing

    floors = [0.0] + list(np.round(np.exp(np.linspace(np.log(0.001), np.log(0.6), 60)), 4))
    cuts = list(np.round(np.arange(0.3, 1.0001, 0.025), 3)) + [1.01]
    floor = max(f for f in floors if figures(f, 1.01)[0] >= 1.0 - loss / 2 - 1e-12)
    cut = min(c for c in cuts if figures(floor, c)[0] >= 1.0 - loss - 1e-12)
    kept, nothing = figures(floor, cut)
    curve = [{"floor": float(f), "cut": float(c), "meant_offered": round(figures(f, c)[0], 4),
              "absent_nothing": round(figures(f, c)[1], 4)}
             for f, c in [(f, 1.01) for f in floors[::10]] + [(floor, c) for c in cuts[::3]]]
    return float(floor), float(cut), {"at_cuts": {"floor": float(floor), "cut": float(cut),
                                                  "meant_offered": round(kept, 4),
                                                  "absent_nothing": round(nothing, 4)}, "curve": curve}


# The share of the loss budget the cap on how many are offered may spend (after the floor and the cut).
CAP_SHARE = 0.25
# The cap is looked for up to the pipeline's own limit (invariant 2: 19 candidates at most).
MOST_OFFERED = 19


def choose_cap(examples: list[Example], spec: dict[str, Any], loss: float) -> tuple[int | None, dict[str, Any]]:
    """How many candidates are offered at most, on the calibration split with the floor and the cut set: the
    smallest count that keeps the item meant for all but CAP_SHARE x `loss` of the references whose item the
    floor and the cut offer (None: no count below MOST_OFFERED does). Past it a candidate is rarely meant,
    and the lists of references to nothing are mostly made of it."""
    from resolver.domain.relevance import RelevanceModel, _variant

    variant = _variant({**spec, "offer_at_most": None})
    ranks, absent = [], []
    for e in examples:
        if len(e.matrix) == 0:
            continue
        probs, none = _probabilities(e, variant)
        probs = np.where(probs >= variant.floor, probs, 0.0)
        if none >= variant.none_cut:
            continue
        order = [k for k in np.argsort(-probs, kind="stable") if probs[k] > 0.0]
        if e.absent:
            absent.append(len(order))
        elif e.present:
            ranks.append(next((n for n, k in enumerate(order, start=1) if k in e.targets), None))
    offered = [r for r in ranks if r is not None]
    cap = next((k for k in range(1, MOST_OFFERED) if sum(r > k for r in offered) <= CAP_SHARE * loss * len(ranks)),
               None)
    kept = sum(r <= (cap or MOST_OFFERED) for r in offered)
    return cap, {"offer_at_most": cap, "meant_offered_before": round(len(offered) / max(len(ranks), 1), 4),
                 "meant_offered_after": round(kept / max(len(ranks), 1), 4),
                 "absent_offered_most_before": max(absent, default=0),
                 "absent_offered_most_after": min(max(absent, default=0), cap or MOST_OFFERED)}


# The words alone variant's top probabilities tried for the signal variant's `words_first`, lowest first: fixed
# before the labels were read.
WORDS_FIRST_GRID = tuple(round(0.5 + 0.05 * k, 2) for k in range(10))


def holds_every_word(words: Example) -> bool:
    """A live title holds every word of the reference: the pipeline's `_words_first` asks the WORDS_FIRST
    variant only then (`words`: the reference's example gathered without the encoder)."""
    from resolver.domain.relevance import FEATURES

    if len(words.matrix) == 0:
        return False
    lexical = words.matrix[:, FEATURES.index("lexical")] > 0
    live = lexical if words.closed is None else lexical & ~words.closed
    return bool((live & (words.matrix[:, FEATURES.index("unmatched")] == 0)).any())


def fit_words_first(words: list[Example], words_spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The WORDS_FIRST variant: the words alone variant's weights and cuts, with its temperature and P(none)'s
    Platt slope and intercept fitted again on the train split's references a live title holds every word of.
    Fitted on all references, the words alone variant is unsure there: its top candidate is the item meant
    for 99% of them, at a median probability of 0.94. The calibration split then chooses where it answers
    (`choose_words_first`) and certifies it, without having fitted it."""
    from resolver.domain.relevance import FEATURES

    regime = [e for e in words if e.split == "train" and holds_every_word(e)]
    columns = [FEATURES.index(f) for f in words_spec["features"]]
    w = np.array(words_spec["weights"], dtype=np.float64)
    x, sizes, _, target = _stack([e for e in regime if e.present], columns)
    t = temperature(x, sizes, target, w)
    names = tuple(words_spec["none"]["features"])
    a, bias = np.array(words_spec["none"]["weights"], dtype=np.float64), float(words_spec["none"]["bias"])
    z, y = pool_rows(regime, columns, w, names)
    slope, intercept = fit_logistic((z @ a + bias)[:, None], y, l2=0.0)
    spec = {**words_spec, "temperature": round(t, 4),
            "none": {"features": list(names), "weights": [round(float(v * slope[0]), 6) for v in a],
                     "bias": round(bias * slope[0] + intercept, 6)}}
    return spec, {"train_references": len(regime), "none_of_them": int(y.sum()), "temperature": round(t, 4),
                  "none_slope": round(float(slope[0]), 4), "none_intercept": round(intercept, 4)}


def _words_first_case(signal: Example, words: Example, vs: Any, vf: Any) -> tuple[float, bool, bool] | None:
    """For a reference a live title holds every word of: the WORDS_FIRST variant's top probability as offered
    (0 when it offers nothing), whether its first is worse than the signal variant's (that one the item meant,
    this one not), and whether it offers a reference to nothing something the signal variant answers with
    nothing. None for any other reference."""
    if not holds_every_word(words):
        return None

    def first(e: Example, variant: Any) -> int | None:
        probs, none = _probabilities(e, variant)
        if len(probs) == 0 or none >= variant.none_cut or probs.max() < variant.floor:
            return None
        return int(np.argmax(probs))

    kw, ks = first(words, vf), first(signal, vs) if len(signal.matrix) else None
    if kw is None:
        return 0.0, False, False
    top = float(_probabilities(words, vf)[0][kw])
    worse = ks is not None and ks in signal.targets and kw not in words.targets
    return top, worse, signal.absent and ks is None


def choose_words_first(signal: list[Example], words: list[Example], signal_spec: dict[str, Any],
                       first_spec: dict[str, Any]) -> tuple[float | None, dict[str, Any]]:
    """The WORDS_FIRST variant's `words_first`: the lowest of WORDS_FIRST_GRID at which, on the calibration
    split, no reference it would answer (a live title holds every word of it, its top probability at least
    that) gets a worse first than with the encoder, and no reference to nothing is offered what the encoder's
    variant answers with nothing. None when none is. The train split's count, a check."""
    from resolver.domain.relevance import _variant

    vs, vf = _variant(signal_spec), _variant(first_spec)
    by_id = {e.ref_id: e for e in words}
    cases: dict[str, list[tuple[float, bool, bool]]] = {"train": [], "calibrate": []}
    for e in signal:
        w = by_id.get(e.ref_id)
        found = None if w is None else _words_first_case(e, w, vs, vf)
        if found is not None and e.split in cases:
            cases[e.split].append(found)

    def at(split: str, tau: float) -> dict[str, int]:
        taken = [c for c in cases[split] if c[0] >= tau]
        return {"answered": len(taken), "worse": sum(c[1] for c in taken), "absent_offered": sum(c[2] for c in taken)}

    chosen = next((tau for tau in WORDS_FIRST_GRID if not at("calibrate", tau)["worse"]
                   and not at("calibrate", tau)["absent_offered"]), None)
    return chosen, {"words_first": chosen, "holds_every_word": {k: len(v) for k, v in cases.items()},
                    "curve_calibrate": {str(tau): at("calibrate", tau) for tau in (0.0,) + WORDS_FIRST_GRID},
                    "train_at_chosen": at("train", chosen) if chosen is not None else None}


# The penalties P(none)'s cross-validation chooses among (on the train split alone).
L2_GRID = (0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)
FOLDS = 5


def choose_l2(z: np.ndarray, y: np.ndarray) -> tuple[float, dict[float, float]]:
    """The L2 penalty of P(none) with the least mean held-out log-loss over FOLDS folds of the train split
    (folds by position, fixed: the examples' order is the references')."""
    folds = np.arange(len(y)) % FOLDS
    losses = {}
    for l2 in L2_GRID:
        total = 0.0
        for fold in range(FOLDS):
            fit, held = folds != fold, folds == fold
            a, bias = fit_logistic(z[fit], y[fit], l2=l2)
            p = np.clip(1 / (1 + np.exp(-(z[held] @ a + bias))), 1e-9, 1 - 1e-9)
            total += float(-(y[held] * np.log(p) + (1 - y[held]) * np.log(1 - p)).sum())
        losses[l2] = round(total / len(y), 4)
    return min(losses, key=losses.__getitem__), losses


def train_variant(examples: list[Example], features: list[str], l2: float, loss: float,
                  l2_none: float | str | None = None, drop: frozenset[str] = frozenset()) -> tuple[dict, dict]:
    """`drop`: features and pool features left out (POOL_ONLY, and an ablation's: `--drop`)."""
    from resolver.domain.relevance import FEATURES, POOL_FEATURES

    features = [f for f in features if f not in drop]
    pool_names = tuple(f for f in POOL_FEATURES if f not in drop)
    columns = [FEATURES.index(f) for f in features]
    train = [e for e in examples if e.split == "train"]
    calibrate = [e for e in examples if e.split == "calibrate"]
    # Which one: on the references whose item is in the pool.
    xt, st, _, tt = _stack([e for e in train if e.present], columns)
    w = fit_softmax(xt, st, tt, l2=l2)
    xc, sc, _, tc = _stack([e for e in calibrate if e.present], columns)
    t = temperature(xc, sc, tc, w)
    # Whether any: every reference with a pool, its pool's features under those weights.
    zt, yt = pool_rows(train, columns, w, pool_names)
    l2_none = l2 if l2_none is None else l2_none
    if l2_none == "cv":
        l2_none, _losses = choose_l2(zt, yt)
    a, bias = fit_logistic(zt, yt, l2=l2_none)
    # Calibrated on the other split (Platt: a slope and an intercept over the logit).
    zc, yc = pool_rows(calibrate, columns, w, pool_names)
    slope, intercept = fit_logistic((zc @ a + bias)[:, None], yc, l2=0.0)
    a, bias = a * slope[0], bias * slope[0] + intercept
    spec = {"features": features, "weights": [round(float(v), 6) for v in w], "temperature": round(t, 4),
            "none": {"features": list(pool_names), "weights": [round(float(v), 6) for v in a],
                     "bias": round(bias, 6)}, "floor": 0.0, "none_cut": 1.01}
    spec["encoder_only_cosine"] = encoder_only_cosine(train, loss)
    spec["floor"], spec["none_cut"], at_floor = choose_cuts(calibrate, spec, loss)
    spec["offer_at_most"], at_floor["cap"] = choose_cap(calibrate, spec, loss)
    p_none = 1 / (1 + np.exp(-(zc @ a + bias)))
    figures = {"train_examples": len(train), "calibrate_examples": len(calibrate),
               "train_absent": sum(e.absent for e in train), "calibrate_absent": sum(e.absent for e in calibrate),
               "which_nll_calibrate": round(softmax_nll(xc, sc, tc, w, t), 4),
               "none_nll_calibrate": round(float(-np.mean(yc * np.log(p_none + 1e-12)
                                                          + (1 - yc) * np.log(1 - p_none + 1e-12))), 4),
               "none_auc_calibrate": round(_auc(zc @ a, yc), 4), "floor": at_floor, "l2_none": l2_none}
    return spec, figures


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positive = labels == 1
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / max(n_pos * n_neg, 1))


# What a shipped reference keeps (resolver/evaluation/cases.py reads these).
SHIPPED_FIELDS = ("id", "text", "kind", "category", "expected", "expected_occurrence_start", "split", "note")


def write_cases() -> int:
    """The calibration split (fitting_split) of every calendar, with its whole calendar, as the package's set."""
    from resolver.evaluation.cases import RANKER_CASES_PATH, load_case_set

    refs = references()
    for name, root in retrieval.CALENDARS.items():
        out = RANKER_CASES_PATH / name
        out.mkdir(parents=True, exist_ok=True)
        meta = json.loads((root / "meta.json").read_text(encoding="utf-8"))
        (out / "meta.json").write_text(json.dumps({key: meta[key] for key in ("now", "time_zone", "horizon_days")},
                                                  indent=1) + "\n", encoding="utf-8")
        (out / "items.jsonl").write_bytes((root / "items.jsonl").read_bytes())
        chosen = [{key: ref[key] for key in SHIPPED_FIELDS if key in ref}
                  for ref in refs if ref["calendar"] == name and ref["split"] == "calibrate"]
        (out / "references.jsonl").write_text("".join(json.dumps(ref, ensure_ascii=False) + "\n" for ref in chosen),
                                             encoding="utf-8")
        print(f"{out}: {len(chosen)} references")
    shipped = load_case_set(RANKER_CASES_PATH)
    print(f"{len(shipped.cases)} cases, digest {shipped.digest}")
    return 0


def cost(candidates: int = 500, runs: int = 200) -> int:
    """The model alone over `candidates` rows (features included): what the pipeline adds per request."""
    import statistics
    from datetime import timezone

    from resolver.domain.items import Kind, make_item
    from resolver.domain.matching import ScoredCandidate
    from resolver.domain.relevance import Context, Gathered, KinSource, RelevanceModel

    model = RelevanceModel.load()
    taxonomy = model.taxonomy  # read once, as a process does on its first weighed reference
    rng = np.random.default_rng(1)
    lexical = tuple(ScoredCandidate(item=make_item(collection_path="/u/w/", uid=str(n), title=f"Task number {n} of many",
                                                   etag='"1"', kind=Kind.TASK), score=float(s), unmatched=0.2)
                    for n, s in enumerate(sorted(rng.random(candidates), reverse=True)))
    cosines = {c.item.item_id: float(rng.random()) for c in lexical}
    # The second reference holds a function word of another language ("de"): the model then examines every
    # candidate's matched words (relevance.FEATURES' function_only), its costliest path.
    for text in ("task of many", "task de many"):
        context = Context(text=text, time_range=None, tz=timezone.utc, with_signal=True, cosines=cosines,
                          nearest=tuple(c.item.item_id for c in lexical[:30]))
        gathered = Gathered(lexical=lexical, extra=(), context=context, matched=candidates)
        model.rank(gathered, limit=19)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            if taxonomy is not None:
                context.kin = KinSource(text, taxonomy)  # one per request, as `gather` makes it
            model.rank(gathered, limit=19)
            times.append(time.perf_counter() - started)
        print(json.dumps({"candidates": candidates, "reference": text,
                          "median ms": round(statistics.median(times) * 1000, 3),
                          "min ms": round(min(times) * 1000, 3)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the figures, leave the model file")
    parser.add_argument("--l2", type=float, default=0.001, help="the L2 penalty on the weights")
    parser.add_argument("--l2-none", default="cv",
                        help="the L2 penalty of P(none): a number, or 'cv' (the default: chosen among L2_GRID by "
                             "cross-validation on the train split)")
    parser.add_argument("--loss", type=float, default=0.02,
                        help="the floor and the none cut keep all but this share of the items meant offered "
                             "(calibration split)")
    parser.add_argument("--drop", default="", help="features and pool features to leave out, comma-separated "
                                                    "(an ablation)")
    parser.add_argument("--taxonomy", type=Path, default=None,
                        help="the word taxonomy to read (default the shipped one); a model written with another "
                             "names that file, to be put beside it")
    parser.add_argument("--out", type=Path, default=None, help="where to write the model (default: the shipped one)")
    parser.add_argument("--write-cases", action="store_true",
                        help="only write the calibration split, with its calendars, as the case set the package "
                             "ships for the ranker's certificate (resolver/evaluation/data/reference_match/)")
    parser.add_argument("--cost", action="store_true",
                        help="only time the shipped model scoring 500 candidates (median and minimum of 200 runs)")
    args = parser.parse_args(argv)
    if args.cost:
        return cost()
    global TAXONOMY
    TAXONOMY = args.taxonomy
    if args.write_cases:
        return write_cases()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    from resolver.conf import resolver_settings
    from resolver.domain.glossary import find_freedict
    from resolver.domain.relevance import DEFAULT_MODEL, FEATURES, SIGNAL, WORDS, WORDS_FIRST, _SIGNAL_ONLY
    from resolver.domain.semantic import MultilingualUSE

    refs = [r for r in references() if r["split"] in ("train", "calibrate")]  # never the test split
    cals = calendars()
    encoder = MultilingualUSE(glossary=find_freedict(resolver_settings.GLOSSARY_DIR))
    encoder.encode(["warm up"])
    started = time.perf_counter()
    centroid = reference_centroid(refs, encoder)
    with_signal = collect(refs, cals, encoder, centroid)
    words_alone = collect(refs, cals, None)
    print(f"collected {len(with_signal)} + {len(words_alone)} examples in {time.perf_counter() - started:.0f} s "
          f"({len(refs)} references, train and calibrate)")
    variants, figures = {}, {}
    l2_none = args.l2_none if args.l2_none in (None, "cv") else float(args.l2_none)
    drop = POOL_ONLY | frozenset(f for f in args.drop.split(",") if f)
    variants[SIGNAL], figures[SIGNAL] = train_variant(with_signal, list(FEATURES), args.l2, args.loss, l2_none, drop)
    variants[WORDS], figures[WORDS] = train_variant(words_alone, [f for f in FEATURES if f not in _SIGNAL_ONLY],
                                                    args.l2, args.loss, l2_none, drop)
    first, fitted = fit_words_first(words_alone, variants[WORDS])
    first["words_first"], figures[WORDS_FIRST] = choose_words_first(with_signal, words_alone, variants[SIGNAL], first)
    figures[WORDS_FIRST]["fitted"] = fitted
    if first["words_first"] is not None:
        variants[WORDS_FIRST] = first
    digest = hashlib.sha256("\n".join(sorted(r["id"] + "\t" + r["split"] + "\t" + r["text"] for r in refs))
                            .encode()).hexdigest()
    from resolver.domain.taxonomy import DEFAULT_TABLE

    model = {"name": MODEL_NAME, "variants": variants, "centroid": [round(float(v), 6) for v in centroid],
             "taxonomy": {"file": (TAXONOMY or DEFAULT_TABLE).name, "sha256": taxonomy().digest},
             "trained": {"encoder": encoder.name, "references_digest": digest, "l2": args.l2,
                         "l2_none": args.l2_none, "loss": args.loss,
                         "figures": figures}}
    print(json.dumps(figures, indent=1))
    if not args.dry_run:
        out = args.out or DEFAULT_MODEL
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

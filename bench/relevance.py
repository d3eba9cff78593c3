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
`--l2`), in numpy alone. The calibration split then sets two numbers, each by
one rule: the temperature (the softmax's divisor minimising the split's
negative log-likelihood), and the floor below which a candidate is not
offered (the floor maximising Youden's J on that split: the share of
references to an item whose item is still offered, plus the share of
references to nothing that are offered nothing, minus one). Two variants are
trained: with the semantic signal's features ("signal") and words alone
("words", RESOLVER["SEMANTIC"] off). The test split is never read here.
"""
from __future__ import annotations

import argparse
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
# Older copies of the set name the splits tune and heldout.
SPLIT_ALIASES = {"tune": "train", "heldout": "calibrate"}


@dataclass
class Example:
    ref_id: str
    category: str
    split: str
    matrix: np.ndarray  # candidates x features, all of relevance.FEATURES
    targets: tuple[int, ...]  # rows of the expected items present in the pool; () = none of them
    absent: bool  # the reference names nothing
    present: bool  # an expected item is in the pool


class Recorder:
    """A ranker that records what the model would weigh and keeps the matcher's order."""

    name = "recorder"

    def __init__(self) -> None:
        self.last: Any = None

    def rank(self, gathered: Any, *, limit: int) -> Any:
        from resolver.domain.relevance import Scored

        self.last = gathered
        listed = (tuple(gathered.lexical) + tuple(_wrap(i) for i in gathered.extra))[:limit]
        return Scored(candidates=listed, probabilities=tuple(0.0 for _ in listed), none=0.0,
                      considered=len(listed), above_floor=len(listed))

    def scorer_name(self, encoder_name: str | None) -> str:
        return "recorder"

    def fingerprint(self, encoder_name: str | None) -> str:
        return "0" * 64


def _wrap(item: Any) -> Any:
    from resolver.domain.matching import ScoredCandidate

    return ScoredCandidate(item=item, score=0.0)


def calendars() -> dict[str, tuple[Any, Any]]:
    """Each calendar of the set: (meta, memory calendar). One memo per calendar, as one reader keeps."""
    from resolver.calendars.memory import MemoryCalendar

    found = {}
    loader = getattr(retrieval, "load_calendars", None)
    if loader is not None:
        for name, (meta, raw_items) in loader().items():
            found[name] = (meta, MemoryCalendar(items=list(retrieval.memory_items(raw_items, meta))))
        return found
    meta = retrieval.load_meta()
    found["a"] = (meta, MemoryCalendar(items=list(retrieval.memory_items(retrieval.load_items(), meta))))
    return found


def references() -> list[dict[str, Any]]:
    refs = retrieval.load_references()
    for ref in refs:
        ref["split"] = SPLIT_ALIASES.get(ref["split"], ref["split"])
        ref.setdefault("calendar", "a")
    return refs


def collect(refs: list[dict[str, Any]], cals: dict[str, tuple[Any, Any]], encoder: Any) -> list[Example]:
    """The examples the model would see, through the real pipeline."""
    from resolver.domain.items import Kind
    from resolver.domain.pipeline import NoThresholds, ResolveRequest, resolve
    from resolver.domain.relevance import FEATURES, feature_matrix
    from resolver.judges.disabled import DisabledJudge

    examples = []
    for ref in refs:
        meta, calendar = cals[ref["calendar"]]
        recorder = Recorder()
        request = ResolveRequest(text=ref["text"], kind=Kind(ref["kind"]), time_zone=meta.zone)
        resolve(request=request, calendar=calendar, judge=DisabledJudge(), policy=NoThresholds(),
                request_id=f"train-{ref['id']}", now=meta.now, semantic=encoder, ranker=recorder)
        gathered = recorder.last
        if gathered is None:
            continue  # answered before ranking: exact, title and time, or by date alone
        candidates, matrix = feature_matrix(gathered.lexical, gathered.extra, gathered.context, FEATURES)
        expected = set(ref["expected"])
        targets = tuple(k for k, c in enumerate(candidates) if c.item.uid in expected)
        examples.append(Example(ref_id=ref["id"], category=ref["category"], split=ref["split"], matrix=matrix,
                                targets=targets, absent=not expected, present=bool(targets)))
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


def _distribution(x: np.ndarray, sizes: np.ndarray, w: np.ndarray, b: float, t: float = 1.0):
    """Per example: candidate probabilities (flat) and P(none)."""
    u = x @ w / t
    segment = np.repeat(np.arange(len(sizes)), sizes)
    top = np.full(len(sizes), b / t)
    np.maximum.at(top, segment, u)
    exp = np.exp(u - top[segment])
    none = np.exp(b / t - top)
    total = np.bincount(segment, weights=exp, minlength=len(sizes)) + none
    return exp / total[segment], none / total, segment


def nll(x, sizes, target, w, b, t=1.0) -> float:
    p, none, segment = _distribution(x, sizes, w, b, t)
    hit = np.bincount(segment, weights=p * target, minlength=len(sizes))
    has = np.bincount(segment, weights=target.astype(float), minlength=len(sizes)) > 0
    chosen = np.where(has, hit, none)
    return float(-np.log(np.maximum(chosen, 1e-12)).mean())


def fit(x, sizes, target, *, l2: float, steps: int = 3000, rate: float = 0.05) -> tuple[np.ndarray, float]:
    """Maximum likelihood with an L2 penalty, by Adam: the gradient of a conditional logit is
    (model probability - target posterior) times the features."""
    w, b = np.zeros(x.shape[1]), 0.0
    m, v = np.zeros(x.shape[1] + 1), np.zeros(x.shape[1] + 1)
    n = len(sizes)
    has = np.bincount(np.repeat(np.arange(n), sizes), weights=target.astype(float), minlength=n) > 0
    for step in range(1, steps + 1):
        p, none, segment = _distribution(x, sizes, w, b)
        hit = np.bincount(segment, weights=p * target, minlength=n)
        posterior = np.where(target, p / np.maximum(hit[segment], 1e-300), 0.0)
        grad_w = ((p - posterior)[:, None] * x).sum(axis=0) / n + 2 * l2 * w
        grad_b = float((none - (~has)).sum()) / n
        grad = np.append(grad_w, grad_b)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad ** 2
        delta = rate * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        w, b = w - delta[:-1], b - float(delta[-1])
    return w, b


def temperature(x, sizes, target, w, b) -> float:
    grid = np.exp(np.linspace(np.log(0.25), np.log(4.0), 81))
    losses = [nll(x, sizes, target, w, b, t) for t in grid]
    return float(grid[int(np.argmin(losses))])


def offered(examples: list[Example], x, sizes, starts, w, b, t, floor: float, limit: int = 19):
    """Per example: whether an expected item is offered, and how many candidates are."""
    p, _none, _segment = _distribution(x, sizes, w, b, t)
    found, counts = [], []
    for e, start, size in zip(examples, starts, sizes):
        probs = p[start:start + size]
        order = np.argsort(-probs, kind="stable")
        kept = [k for k in order if probs[k] >= floor][:limit]
        found.append(any(k in e.targets for k in kept))
        counts.append(len(kept))
    return np.array(found), np.array(counts)


def choose_floor(examples, x, sizes, starts, w, b, t) -> tuple[float, dict[str, float]]:
    """Youden's J on the calibration split: references to an item still offered it, plus
    references to nothing offered nothing, minus one; the highest floor among equals."""
    absent = np.array([e.absent for e in examples])
    meant = ~absent
    best = (-2.0, 0.0, {})
    for floor in np.round(np.exp(np.linspace(np.log(0.002), np.log(0.6), 120)), 4):
        found, counts = offered(examples, x, sizes, starts, w, b, t, float(floor))
        recall = float(found[meant].mean()) if meant.any() else 1.0
        nothing = float((counts[absent] == 0).mean()) if absent.any() else 1.0
        j = recall + nothing - 1.0
        if j >= best[0] - 1e-12:
            best = (j, float(floor), {"recall_offered": round(recall, 4), "absent_nothing": round(nothing, 4),
                                      "median_offered": float(np.median(counts[meant])) if meant.any() else 0.0})
    return best[1], best[2]


def train_variant(examples: list[Example], features: list[str], l2: float) -> tuple[dict[str, Any], dict[str, Any]]:
    from resolver.domain.relevance import FEATURES

    columns = [FEATURES.index(f) for f in features]
    train = [e for e in examples if e.split == "train"]
    calibrate = [e for e in examples if e.split == "calibrate"]
    xt, st, _, tt = _stack(train, columns)
    w, b = fit(xt, st, tt, l2=l2)
    xc, sc, startc, tc = _stack(calibrate, columns)
    t = temperature(xc, sc, tc, w, b)
    floor, at_floor = choose_floor(calibrate, xc, sc, startc, w, b, t)
    spec = {"features": features, "weights": [round(float(v), 6) for v in w], "none": round(b, 6),
            "temperature": round(t, 4), "floor": floor}
    figures = {"train_examples": len(train), "calibrate_examples": len(calibrate),
               "train_nll": round(nll(xt, st, tt, w, b), 4), "calibrate_nll_t1": round(nll(xc, sc, tc, w, b), 4),
               "calibrate_nll": round(nll(xc, sc, tc, w, b, t), 4), "floor": at_floor}
    return spec, figures


def cost(candidates: int = 500, runs: int = 200) -> int:
    """The model alone over `candidates` rows (features included): what the pipeline adds per request."""
    import statistics
    from datetime import timezone

    from resolver.domain.items import Kind, make_item
    from resolver.domain.matching import ScoredCandidate
    from resolver.domain.relevance import Context, Gathered, RelevanceModel

    model = RelevanceModel.load()
    rng = np.random.default_rng(1)
    lexical = tuple(ScoredCandidate(item=make_item(collection_path="/u/w/", uid=str(n), title=f"Task number {n} of many",
                                                   etag='"1"', kind=Kind.TASK), score=float(s), unmatched=0.2)
                    for n, s in enumerate(sorted(rng.random(candidates), reverse=True)))
    context = Context(text="task of many", time_range=None, tz=timezone.utc, with_signal=True,
                      cosines={c.item.item_id: float(rng.random()) for c in lexical},
                      nearest=tuple(c.item.item_id for c in lexical[:30]))
    gathered = Gathered(lexical=lexical, extra=(), context=context, matched=candidates)
    model.rank(gathered, limit=19)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        model.rank(gathered, limit=19)
        times.append(time.perf_counter() - started)
    print(json.dumps({"candidates": candidates, "median ms": round(statistics.median(times) * 1000, 3),
                      "min ms": round(min(times) * 1000, 3)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the figures, leave the model file")
    parser.add_argument("--l2", type=float, default=0.001, help="the L2 penalty on the weights")
    parser.add_argument("--out", type=Path, default=None, help="where to write the model (default: the shipped one)")
    parser.add_argument("--cost", action="store_true",
                        help="only time the shipped model scoring 500 candidates (median and minimum of 200 runs)")
    args = parser.parse_args(argv)
    if args.cost:
        return cost()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    from resolver.conf import resolver_settings
    from resolver.domain.glossary import find_freedict
    from resolver.domain.relevance import DEFAULT_MODEL, FEATURES, SIGNAL, WORDS, _SIGNAL_ONLY
    from resolver.domain.semantic import MultilingualUSE

    refs = [r for r in references() if r["split"] in ("train", "calibrate")]  # never the test split
    cals = calendars()
    encoder = MultilingualUSE(glossary=find_freedict(resolver_settings.GLOSSARY_DIR))
    encoder.encode(["warm up"])
    started = time.perf_counter()
    with_signal = collect(refs, cals, encoder)
    words_alone = collect(refs, cals, None)
    print(f"collected {len(with_signal)} + {len(words_alone)} examples in {time.perf_counter() - started:.0f} s "
          f"({len(refs)} references, train and calibrate)")
    variants, figures = {}, {}
    variants[SIGNAL], figures[SIGNAL] = train_variant(with_signal, list(FEATURES), args.l2)
    variants[WORDS], figures[WORDS] = train_variant(words_alone, [f for f in FEATURES if f not in _SIGNAL_ONLY],
                                                    args.l2)
    digest = hashlib.sha256("\n".join(sorted(r["id"] + "\t" + r["split"] + "\t" + r["text"] for r in refs))
                            .encode()).hexdigest()
    model = {"name": MODEL_NAME, "variants": variants,
             "trained": {"encoder": encoder.name, "references_digest": digest, "l2": args.l2, "figures": figures}}
    print(json.dumps(figures, indent=1))
    if not args.dry_run:
        out = args.out or DEFAULT_MODEL
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Warm scoring, the minimum of many runs per reference: robust on a loaded machine.

    .venv/bin/python bench/scoring_warm.py [--runs 15] [--semantic]

`build_pool` over the scoring bench's distinct titles (bench/resolve.py's
`scoring_titles(True)`) at 5,000 and 20,000 items, each reference run once
to warm the title index and then `--runs` times; the minimum is printed as
JSON, and the worst references' medians (`worst median ...`) after them. Run it from two checkouts (before and after a change) alternately in
one session: the minimum of many runs is what the code costs when the
machine lets it run, whatever the other processes do.

`--paired` (with `--semantic`) measures the relevance model's pool against the
fusion rule's reference by reference, the two run alternately in one loop
(`--runs` pairs at 5,000 titles): each reference's two medians and their
difference, the fairest comparison on a shared machine. The fusion rule
skips the encoder when a full pool of strong word matches leaves no room;
the model skips it when its words first variant is sure, or the pool is
crowded with titles holding every word ("dentist"; docs/retrieval.md,
"Tenth round"), and otherwise encodes.

`--semantic` measures the same with the semantic signal on (issue 29), in
wall time and in this process's CPU time (`cpu ...`): the
lexical pool widened by the multilingual encoder (`semantic.widen`), title
vectors memoised by the first run, the reference encoded in every run, each
run given the titles as a new tuple of new Items (an unchanged collection
read again). The lexical-only figure is printed beside it, from the same
runs' interleaving, and the cold cost of encoding the titles once.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.resolve import SCORING_REFERENCES, scoring_titles  # noqa: E402
from resolver.domain.items import Kind, make_item  # noqa: E402
from resolver.domain.matching import MatchingMemo, build_pool  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="measured runs per reference (default 15)")
    parser.add_argument("--semantic", action="store_true", help="also with the semantic signal on")
    parser.add_argument("--ranker", action="store_true",
                        help="with --semantic: also the relevance model's pool (resolver/domain/relevance.py) "
                             "in the same runs, against the fusion rule's")
    parser.add_argument("--paired", action="store_true",
                        help="with --semantic: only the model against the fusion rule, per reference, run "
                             "alternately at 5,000 titles")
    parser.add_argument("--no-glosses", action="store_true",
                        help="the encoder without FreeDict's glosses (as on a host without the dictionaries)")
    args = parser.parse_args(argv)
    out: dict[str, float] = {}
    medians: dict[str, float] = {}
    titles = scoring_titles(True)
    encoder = None
    if args.semantic:
        from resolver.domain.glossary import find_freedict
        from resolver.domain.semantic import MultilingualUSE

        # As the default encoder: FreeDict's glosses where Debian's dictionaries are installed.
        encoder = MultilingualUSE(glossary=None if args.no_glosses else find_freedict())
        print(f"encoder: {encoder.name}")
        started = time.perf_counter()
        encoder.encode(["load"])
        out["model load ms"] = round((time.perf_counter() - started) * 1000, 1)
    if args.paired and encoder is not None:
        print(json.dumps(_paired(titles, encoder, args.runs), indent=1))
        return 0
    for size in (5_000, 20_000):
        items = tuple(make_item(collection_path="/u/work/", uid=str(n), title=title, etag='"1"', kind=Kind.TASK)
                      for n, title in enumerate(titles[:size]))
        memo = MatchingMemo()
        if encoder is not None:
            out[f"{size} cold title vectors ms"] = round(_cold_vectors(items, memo, encoder) * 1000, 1)
        for text in SCORING_REFERENCES:
            out[f"{size} {text}"], medians[f"{size} {text}"] = _best(text, items, memo, None, args.runs)
            if encoder is not None:
                out[f"{size} {text} +semantic"], medians[f"{size} {text} +semantic"] = _best(
                    text, items, memo, encoder, args.runs)
                # CPU time of this process (one BLAS thread while encoding): what the work
                # costs whatever the machine's load, which wall time on 2 shared cores is not.
                out[f"cpu {size} {text} +semantic"], medians[f"cpu {size} {text} +semantic"] = _best(
                    text, items, memo, encoder, args.runs, clock=time.process_time)
                if args.ranker:
                    out[f"{size} {text} +ranker"], medians[f"{size} {text} +ranker"] = _best(
                        text, items, memo, encoder, args.runs, ranker=RANKER)
    for prefix, suffix in (("", ""), ("", " +semantic"), ("cpu ", " +semantic"), ("", " +ranker")):
        for size in (5_000, 20_000):
            for label, figures in (("worst", out), ("worst median", medians)):
                chosen = [v for k, v in figures.items() if k.startswith(f"{prefix}{size} ") and "ms" not in k
                          and (k.endswith(suffix) if suffix else not k.endswith(("+semantic", "+ranker")))]
                if chosen:
                    out[f"{label} {prefix}{size}{suffix}"] = max(chosen)
    for size in (5_000, 20_000):
        # The signal's cost against the lexical ranking of the same run (wall, medians of the worst references).
        if f"worst median {size} +semantic" in out and out[f"worst median {size}"]:
            out[f"ratio worst median {size} +semantic / lexical"] = round(
                out[f"worst median {size} +semantic"] / out[f"worst median {size}"], 2)
        if f"worst median {size} +ranker" in out:
            out[f"difference worst median {size} +ranker - +semantic ms"] = round(
                out[f"worst median {size} +ranker"] - out[f"worst median {size} +semantic"], 2)
    print(json.dumps(out, indent=1))
    return 0


RANKER = "ranker"


def _pool(text, items, memo, encoder, ranker=None):
    from resolver.domain.semantic import widen

    if ranker is not None:
        # As the pipeline: the wide lexical pool, the encoder's nearest, the model's order and floor.
        from datetime import timezone

        from resolver.domain import relevance

        pool = build_pool(text, items, limit=relevance.PREPOOL, memo=memo)
        model = _model()
        if model.words_first is not None and relevance.holds_every_word(pool.candidates):
            # The pipeline's words first (pipeline._words_first): without the encoder, answered when sure.
            first = model.first_answer(relevance.gather(text, items, lexical=pool.candidates, matched=pool.matched,
                                                        time_range=None, tz=timezone.utc, memo=memo, encoder=None,
                                                        language="english", unknown=pool.unknown,
                                                        taxonomy=model.taxonomy), limit=19)
            if first is not None:
                return first
        gathered = relevance.gather(text, items, lexical=pool.candidates, matched=pool.matched, time_range=None,
                                    tz=timezone.utc, memo=memo, encoder=encoder, language="english",
                                    unknown=pool.unknown, centroid=_model().centroid,
                                    words=_model().reads_words, taxonomy=_model().taxonomy)
        return _model().rank(gathered, limit=19)
    pool = build_pool(text, items, limit=19, memo=memo)
    return pool if encoder is None else widen(pool, text, items, encoder=encoder, memo=memo, limit=19,
                                              language="english")


def _model():
    from resolver.domain.relevance import RelevanceModel

    global _LOADED
    if _LOADED is None:
        _LOADED = RelevanceModel.load()
    return _LOADED


_LOADED = None


def _best(text, items, memo, encoder, runs: int, clock=time.perf_counter, ranker=None) -> tuple[float, float]:
    """The minimum and the median of `runs` runs, in ms."""
    _pool(text, tuple(list(items)), memo, encoder, ranker)
    times = []
    for _ in range(runs):
        again = tuple(list(items))  # a new sequence: what the next request reads
        started = clock()
        _pool(text, again, memo, encoder, ranker)
        times.append(clock() - started)
    return round(min(times) * 1000, 2), round(statistics.median(times) * 1000, 2)


def _paired(titles, encoder, runs: int) -> dict[str, float]:
    """Per reference at 5,000 titles: the fusion rule's and the model's medians (ms) over `runs` alternate runs."""
    items = tuple(make_item(collection_path="/u/work/", uid=str(n), title=title, etag='"1"', kind=Kind.TASK)
                  for n, title in enumerate(titles[:5_000]))
    memo = MatchingMemo()
    out: dict[str, float] = {}
    for text in SCORING_REFERENCES:
        _pool(text, tuple(list(items)), memo, encoder)
        _pool(text, tuple(list(items)), memo, encoder, RANKER)
        fusion, model = [], []
        for _ in range(runs):
            for times, ranker in ((fusion, None), (model, RANKER)):
                again = tuple(list(items))
                started = time.perf_counter()
                _pool(text, again, memo, encoder, ranker)
                times.append(time.perf_counter() - started)
        out[f"{text} fusion ms"] = round(statistics.median(fusion) * 1000, 2)
        out[f"{text} model ms"] = round(statistics.median(model) * 1000, 2)
        out[f"{text} difference ms"] = round(out[f"{text} model ms"] - out[f"{text} fusion ms"], 2)
    differences = [v for k, v in out.items() if k.endswith("difference ms")]
    out["median difference ms"] = round(statistics.median(differences), 2)
    out["worst model ms - worst fusion ms"] = round(
        max(v for k, v in out.items() if k.endswith("model ms")) - max(v for k, v in out.items()
                                                                       if k.endswith("fusion ms")), 2)
    return out


def _cold_vectors(items, memo, encoder) -> float:
    from resolver.domain.matching import title_index

    started = time.perf_counter()
    memo.vectors.matrix(title_index(items, memo=memo), encoder, expired=lambda: False)
    return time.perf_counter() - started


if __name__ == "__main__":
    raise SystemExit(main())

"""Does a word-alignment score (BERTScore-like, with the encoder's vectors of single words) help?

    PYTHONPATH=. .venv/bin/python bench/word_alignment.py                  # train split (formerly "tune") only
    PYTHONPATH=. .venv/bin/python bench/word_alignment.py --variants sentence,rerank19-avg~0.6,avg~0.6 --bigrams
    PYTHONPATH=. .venv/bin/python bench/word_alignment.py --modes '' --variants ...   # the encoder alone, faster

The encoder's cross-language misses rank first a title in the reference's own
language that shares one surface word ("empty the dishwasher" -> "Clean the
dishwasher filter" before "Vider le lave-vaisselle"; docs/retrieval.md,
"Correcting the encoder's language bias"). A soft word alignment should not
favour a verbatim word over a good translation, and should favour a title
that covers all of the reference's meaning over one that shares a word:

- every distinct content word (the project's tokens, clitics stripped, not
  diacritic-folded so the encoder reads "Führerschein"; the stopwords of every
  language in resolver/data/stopwords dropped) of the titles is encoded once,
  the reference's content words in one batched call per reference;
- recall R: for each reference word, its best cosine over the title's words;
  precision P: for each title word, its best cosine over the reference's
  words; each a weighted mean (weights: BM25's IDF over the titles of the
  kind, as matching weighs words, or uniform); F = 2PR / (P + R).

Scores per title: "sentence" (the shipped cosine), "align-F", "align-R",
"avg" ((sentence + F) / 2), "avg-R" ((sentence + R) / 2); "rerankK-X"
re-orders only the K titles nearest by sentence cosine by score X. A suffix
"~C" caps every word cosine at C ("avg~0.6"), so that a word shared verbatim
counts no more than a good translation; two words equal but for their
diacritics ("Lucia", "Lucía") count as shared verbatim. `--bigrams` also
aligns each two adjacent content words as one unit ("driving licence" with
"Führerschein"): a word counts the best of its own unit and the pairs it is in.

Two measures per variant, per category, as bench/language_bias.py: the
encoder alone (titles of the reference's kind, top 19) and the pipeline
(`project` of bench/recall.py, the judge off), where the variant's score
re-orders the nearest titles (`order`: the fusion still reads sentence
cosines for its floor and margins) or also replaces the cosines the fusion
reads (`as-similarity`: the floor, KEPT_GAP and the doubted best's margin
read the variant's score). The default split is tune. Cost per reference
(median ms, warm: the titles' word vectors memoised): encoding the
reference's words that are not title words (one call), and aligning it with
the titles (the K re-ranked, or all of its kind).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench import recall, retrieval  # noqa: E402
from bench.language_bias import Cached  # noqa: E402

LANGUAGES = ("english", "german", "french", "spanish", "italian", "dutch", "portuguese")


class Words:
    """Content words of a text and their vectors, memoised per word."""

    def __init__(self, encoder: Any) -> None:
        from resolver.domain.items import fold, normalise, strip_clitics, tokens_of
        from resolver.domain.wordforms import word_forms

        self.encoder = encoder
        self.stop = frozenset().union(*(word_forms(lang).stopwords for lang in LANGUAGES))
        self._split = lambda text: [w for w in dict.fromkeys(tokens_of(strip_clitics(normalise(text))))
                                    if fold(w) not in self.stop and not w.isdigit()]
        self.vectors: dict[str, np.ndarray] = {}

    def of(self, text: str) -> list[str]:
        return self._split(text)

    def matrix(self, words: Sequence[str]) -> np.ndarray:
        missing = [w for w in words if w not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.encoder.encode(missing)))
        return np.stack([self.vectors[w] for w in words]) if words else np.zeros((0, 512), np.float32)


def units(words: Sequence[str], bigrams: bool) -> tuple[list[str], np.ndarray]:
    """The units aligned (the words, and with `bigrams` each two adjacent content words: "driving
    licence" for "Führerschein") and which words each covers (a words x units 0/1 matrix)."""
    found = list(words) + ([f"{a} {b}" for a, b in zip(words, words[1:])] if bigrams else [])
    cover = np.zeros((len(words), len(found)), np.float32)
    for n in range(len(words)):
        cover[n, n] = 1
        if bigrams and n + 1 < len(words):
            cover[n, len(words) + n] = cover[n + 1, len(words) + n] = 1
    return found, cover


class Aligner:
    """The alignment scores of a reference against every title of a list."""

    def __init__(self, words: Words, titles: Sequence[str], *, weighting: str = "idf",
                 bigrams: bool = False) -> None:
        from resolver.domain.items import fold

        self.words, self.bigrams, self.fold = words, bigrams, fold
        self.title_words = [words.of(t) for t in titles]
        title_units = [units(ws, bigrams) for ws in self.title_words]
        self.vocabulary = sorted(set().union(*(set(u) for u, _c in title_units))) if titles else []
        column = {w: n for n, w in enumerate(self.vocabulary)}
        self.by_fold: dict[str, list[int]] = {}
        for n, w in enumerate(self.vocabulary):
            self.by_fold.setdefault(fold(w), []).append(n)
        self.columns = [(np.array([column[w] for w in u], dtype=np.int64), c) for u, c in title_units]
        self.vocab_matrix = words.matrix(self.vocabulary)
        df: dict[str, int] = {}
        for ws in self.title_words:
            for w in set(ws):
                df[w] = df.get(w, 0) + 1
        total = len(titles)
        self.idf = (lambda w: float(np.log1p((total - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5)))) \
            if weighting == "idf" else (lambda w: 1.0)
        self.title_weights = [np.array([self.idf(w) for w in ws]) for ws in self.title_words]

    def scores(self, reference: str, positions: Sequence[int] | None = None,
               cap: float = 1.0) -> dict[str, np.ndarray] | None:
        """R, P and F per title (of `positions`, default all); None when the reference has no content word.

        Cosines above `cap` count as `cap`: a word shared verbatim (1.0, or the same word but for
        its diacritics: "Lucia", "Lucía") then counts no more than a good translation."""
        ref_words = self.words.of(reference)
        if not ref_words:
            return None
        ref_units, ref_cover = units(ref_words, self.bigrams)
        query = self.words.matrix(ref_units)
        weights = np.array([self.idf(w) for w in ref_words])
        table = query @ self.vocab_matrix.T  # reference units x vocabulary
        for n, u in enumerate(ref_units):
            table[n, self.by_fold.get(self.fold(u), [])] = 1.0
        table = np.minimum(table, cap)
        chosen = range(len(self.columns)) if positions is None else positions
        r, p = [], []
        for n in chosen:
            cols, cover = self.columns[n]
            if cols.size == 0:
                r.append(0.0)
                p.append(0.0)
                continue
            sub = table[:, cols]
            r.append(float(weights @ (ref_cover * sub.max(axis=1)).max(axis=1) / weights.sum()))
            tw = self.title_weights[n]
            p.append(float(tw @ (cover * sub.max(axis=0)).max(axis=1) / tw.sum()))
        r_, p_ = np.array(r), np.array(p)
        f = np.where(r_ + p_ > 0, 2 * r_ * p_ / np.where(r_ + p_ > 0, r_ + p_, 1), 0.0)
        return {"R": r_, "P": p_, "F": f}


def combine(name: str, sentence: np.ndarray, aligned: dict[str, np.ndarray] | None) -> np.ndarray:
    """The variant's score per title (the sentence cosine when the reference has no content word)."""
    if aligned is None or name == "sentence":
        return sentence
    return {"align-F": aligned["F"], "align-R": aligned["R"], "avg": (sentence + aligned["F"]) / 2,
            "avg-R": (sentence + aligned["R"]) / 2}[name]


def split_variant(variant: str) -> tuple[int | None, str, float]:
    """"rerank19-avg~0.6" -> (19, "avg", 0.6): re-rank the 19 nearest, word cosines capped at 0.6;
    "avg" -> (None, "avg", 1.0)."""
    variant, _, cap = variant.partition("~")
    cap_ = float(cap) if cap else 1.0
    if variant.startswith("rerank"):
        k, _, score = variant[len("rerank"):].partition("-")
        return int(k), score, cap_
    return None, variant, cap_


def alone(variant: str, refs: list[dict], by_kind: dict[str, list[Any]], sentence_enc: Any,
          aligners: dict[str, Aligner]) -> list[recall.Result]:
    k, score, cap = split_variant(variant)
    titles = {kind: sentence_enc.encode([i.title for i in items]) for kind, items in by_kind.items()}
    out = []
    for ref in refs:
        items = by_kind[ref["kind"]]
        sentence = titles[ref["kind"]] @ sentence_enc.encode([ref["text"]])[0]
        tie = lambda p: (items[p].title.casefold(), items[p].uid)  # noqa: E731
        order = sorted(range(len(items)), key=lambda p: (-float(sentence[p]),) + tie(p))
        if k is None:
            values = combine(score, sentence, aligners[ref["kind"]].scores(ref["text"], cap=cap))
            order = sorted(range(len(items)), key=lambda p: (-float(values[p]),) + tie(p))
        else:
            head = order[:k]
            values = combine(score, sentence[head], aligners[ref["kind"]].scores(ref["text"], head, cap=cap))
            order = [head[n] for n in sorted(range(len(head)), key=lambda n: (-float(values[n]),) + tie(head[n]))] \
                + order[k:]
        top = [items[p].uid for p in order[:recall.TOP]]
        out.append(recall.Result(ref["id"], ref["category"], ref["split"], recall.rank_of(ref["expected"], top),
                                 wrong=None, occurrence_ok=None, ms=0.0, top=top))
    return out


class _Scored:
    """A reference vector stand-in: `row @ it` gives the variant's score of the title whose vector is `row`."""

    __array_ufunc__ = None  # numpy defers `row @ self` to __rmatmul__

    def __init__(self, by_row: Callable[[np.ndarray], float]) -> None:
        self.by_row = by_row

    def __rmatmul__(self, row: np.ndarray) -> float:
        return self.by_row(row)


def patched_nearest(variant: str, mode: str, words: Words, weighting: str, bigrams: bool) -> Callable[..., Any]:
    """`semantic.nearest` with the variant's score: re-ordering the nearest titles (`order`), or
    also standing for their cosine in the fusion (`as-similarity`, the doubted best's too)."""
    from resolver.domain import semantic

    original = semantic.nearest
    k, score, cap = split_variant(variant)
    aligners: dict[int, tuple[Any, Aligner]] = {}

    def nearest(reference: str, index: Any, memo: Any, encoder: Any, *, limit: int,
                floor: float = semantic.FLOOR) -> Any:
        found = original(reference, index, memo, encoder, limit=len(index.items), floor=-2.0)
        if found is None or score == "sentence" or not found.positions:
            return original(reference, index, memo, encoder, limit=limit, floor=floor)
        known = aligners.get(id(index))
        if known is None or known[0] is not index:
            known = aligners[id(index)] = (index, Aligner(words, [i.title for i in index.items],
                                                          weighting=weighting, bigrams=bigrams))
        aligner = known[1]
        positions = list(found.positions[:k] if k else found.positions)
        cosines = np.array(found.similarities[:len(positions)])
        aligned = aligner.scores(reference, positions, cap=cap)
        values = combine(score, cosines, aligned)
        cosine_of = dict(zip(positions, cosines.tolist()))
        value_of = dict(zip(positions, values.tolist()))
        ranked = sorted(positions, key=lambda p: (-value_of[p], p))
        if mode == "order":
            kept = [p for p in ranked if cosine_of[p] >= floor][:limit]
            return semantic.Nearest(tuple(kept), tuple(round(cosine_of[p], 4) for p in kept),
                                    reference=found.reference)
        kept = [p for p in ranked if value_of[p] >= floor][:limit]
        rows = {memo.vectors.row(index.items[p].title, encoder.name).tobytes(): p for p in positions}

        def by_row(row: np.ndarray) -> float:
            p = rows.get(np.asarray(row).tobytes())
            if p is not None:
                return value_of[p]
            cosine = float(row @ found.reference)
            return cosine  # outside the scored head: its cosine
        return semantic.Nearest(tuple(kept), tuple(round(value_of[p], 4) for p in kept), reference=_Scored(by_row))
    return nearest


def cost(refs: list[dict], by_kind: dict[str, list[Any]], aligners: dict[str, Aligner],
         k: int | None) -> tuple[float, float]:
    """Median ms per reference of encoding its words not among the titles' (one call), and of aligning
    it with the titles (the first k, or all); the titles' word vectors memoised (warm)."""
    encoding, aligning = [], []
    for ref in refs:
        aligner = aligners[ref["kind"]]
        vocabulary = set(aligner.vocabulary)
        found = units(aligner.words.of(ref["text"]), aligner.bigrams)[0]
        for w in found:
            if w not in vocabulary:  # a reference's own words are encoded per request
                aligner.words.vectors.pop(w, None)
        positions = list(range(min(k, len(by_kind[ref["kind"]])))) if k else None
        started = time.perf_counter()
        aligner.words.matrix(found)
        encoded = time.perf_counter()
        aligner.scores(ref["text"], positions)
        encoding.append((encoded - started) * 1000)
        aligning.append((time.perf_counter() - encoded) * 1000)
    return round(statistics.median(encoding), 3), round(statistics.median(aligning), 3)


def _cell(m: dict[str, Any]) -> str:
    if not m.get("n") or m.get("recall@1") is None:
        return "n/a"
    wrong = f" w{m['wrong']}" if m.get("wrong") else ""
    return f"{m['recall@1']:.3f}/{m['recall@19']:.3f}{wrong}"


DEFAULT_VARIANTS = ("sentence", "align-F", "avg", "rerank19-avg", "align-F~0.6", "avg~0.6", "rerank5-avg~0.6",
                    "rerank19-avg~0.6", "rerank19-avg~0.7", "rerank19-avg~0.8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=retrieval.SPLITS, default="train")
    parser.add_argument("--variants", help="comma-separated (default: " + ",".join(DEFAULT_VARIANTS) + ")")
    parser.add_argument("--weighting", choices=("idf", "uniform"), default="idf")
    parser.add_argument("--bigrams", action="store_true", help="also align adjacent content-word pairs")
    parser.add_argument("--modes", default="order,as-similarity", help="pipeline modes (comma-separated)")
    parser.add_argument("--show-misses", metavar="VARIANT/MODE", help="print the pipeline's cross-language misses")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    from resolver.calendars.memory import MemoryCalendar
    from resolver.domain import semantic
    from resolver.domain.semantic import MultilingualUSE

    meta = retrieval.load_meta()
    refs = [r for r in retrieval.load_references("a") if r["split"] == args.split]
    items = retrieval.memory_items(retrieval.load_items(), meta)
    by_kind = {kind: [i for i in items if i.kind.value == kind] for kind in ("task", "event")}
    raw = Cached(MultilingualUSE())
    words = Words(MultilingualUSE())
    words.matrix(["warm"])
    aligners = {kind: Aligner(words, [i.title for i in its], weighting=args.weighting, bigrams=args.bigrams)
                for kind, its in by_kind.items()}
    chosen = args.variants.split(",") if args.variants else list(DEFAULT_VARIANTS)
    modes = [m for m in args.modes.split(",") if m]
    categories = [c for c in retrieval.CATEGORIES if c != retrieval.ABSENT and any(r["category"] == c for r in refs)]
    titles = {i.uid: i.title for i in items}
    every: dict[str, dict[str, Any]] = {}
    original = semantic.nearest
    for name in chosen:
        k, _score, _cap = split_variant(name)
        runs = {"alone": alone(name, refs, by_kind, raw, aligners)}
        for mode in (modes if name != "sentence" else ["order"]):
            semantic.nearest = patched_nearest(name, mode, words, args.weighting, args.bigrams)
            try:
                runs[f"pipe:{mode}"] = recall.run_project(refs, MemoryCalendar(items=list(items)), meta,
                                                          semantic=raw)
            finally:
                semantic.nearest = original
            if args.show_misses == f"{name}/{mode}":
                by_id = {r["id"]: r for r in refs}
                recall.show_misses([r for r in runs[f"pipe:{mode}"] if r.category == "cross_language"],
                                   by_id, titles, f"{name}/{mode}", print)
        figures = recall.summarise(runs, args.split, categories)
        ms = cost(refs, by_kind, aligners, k) if name != "sentence" else (0.0, 0.0)
        for method, per in figures.items():
            every[f"{name} {method}"] = per
            print(f"{name:18} {method:18} " + "  ".join(f"{c}={_cell(per[c])}" for c in categories + [recall.OVERALL])
                  + (f"  ms encode {ms[0]} align {ms[1]}" if method == "alone" else ""), flush=True)
    base = {"alone": every.get("sentence alone"), "pipe": every.get("sentence pipe:order")}
    print("\ncategories whose recall@1 or @19 differs from the shipped sentence cosine (sentence -> variant):")
    for key, per in every.items():
        ref = base["alone" if key.endswith(" alone") else "pipe"]
        if ref is None or key.startswith("sentence "):
            continue
        moved = [f"{c} {_cell(ref[c])} -> {_cell(per[c])}" for c in categories + [recall.OVERALL]
                 if (per[c].get("recall@1"), per[c].get("recall@19"), per[c].get("wrong"))
                 != (ref[c].get("recall@1"), ref[c].get("recall@19"), ref[c].get("wrong"))]
        print(f"  {key}: " + ("; ".join(moved) if moved else "no change"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

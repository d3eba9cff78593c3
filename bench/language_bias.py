"""Does removing the encoder's language bias help? Centering, all-but-the-top, per-language centroids.

    PYTHONPATH=. .venv/bin/python bench/language_bias.py                 # train split (formerly "tune") only
    PYTHONPATH=. .venv/bin/python bench/language_bias.py --variants none,language-shift --split calibrate

A multilingual sentence encoder puts two sentences of the same language
nearer than their meanings alone would: "hang the washing out to dry" finds
"Pick up dry cleaning" before the German or French laundry title. The
literature's corrections are linear and need no training:

- centering (subtract a mean vector, renormalise) and "all-but-the-top"
  (Mu & Viswanath 2018: also project out the top principal components), the
  mean and components taken from the calendar's titles or from a fixed sample;
- per-language centering (Libovický et al. 2020): subtract the centroid of
  the text's language, the language being the nearest centroid; "shift" adds
  the sample's overall mean back, so only what is proper to the language goes;
- the language subspace: project out the directions between the language
  centroids (no language to assign).

The sample is 40 everyday sentences and phrases per language, the same 40
meanings in English, German, French and Spanish (bench/data/language_sample/,
none a title or reference of the labelled set). Every variant transforms the
reference and the titles alike, then renormalises.

Two measures per variant, per category: the encoder alone (the titles of the
reference's kind by cosine, top 19, as `semantic-alone` in bench/recall.py)
and the whole pipeline with the transformed encoder (the judge off, as
`project` in bench/recall.py; the fusion rule's thresholds unchanged). The
default split is tune: the variants are chosen there, the held-out split is
read once for the one adopted. On the tune split it also prints, for the
references the encoder alone misses to a same-language title sharing a word
(TUNE_MISSES), the expected title's cosine minus the first one's with the
languages known and the per-language shift applied at several strengths.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench import recall, retrieval  # noqa: E402

SAMPLE = Path(__file__).resolve().parent / "data" / "language_sample"
LANGUAGES = ("english", "german", "french", "spanish")
# The tune split's cross-language references the encoder alone ranks wrong because a title in the
# reference's own language shares a word: (reference, (expected title, its language), (first title, language)).
# The languages are given by hand, so the shift below is the per-language correction at its best.
TUNE_MISSES = (
    ("send the documents to the tax advisor", ("Unterlagen an den Steuerberater schicken", "german"),
     ("Gather tax documents for the accountant", "english")),
    ("empty the dishwasher", ("Vider le lave-vaisselle", "french"), ("Clean the dishwasher filter", "english")),
    ("renew Lucia's passport", ("Renovar el pasaporte de Lucía", "spanish"), ("Renew passport", "english")),
)


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    return np.where(norms > 0, rows / np.where(norms > 0, norms, 1), 0).astype(np.float32)


def _components(rows: np.ndarray, k: int) -> np.ndarray:
    """The top k principal directions of rows (already centred), one per row."""
    if k == 0:
        return np.zeros((0, rows.shape[1]), np.float32)
    return np.linalg.svd(rows, full_matrices=False)[2][:k].astype(np.float32)


def _orthonormal(rows: np.ndarray) -> np.ndarray:
    q, _r = np.linalg.qr(rows.T)
    return q.T.astype(np.float32)


class Transform:
    """x -> unit((x - centroid(x) + back - mean) with `drop` projected out)."""

    def __init__(self, *, mean: np.ndarray | None = None, drop: np.ndarray | None = None,
                 centroids: np.ndarray | None = None, back: np.ndarray | None = None, weight: float = 1.0) -> None:
        self.mean, self.drop, self.centroids, self.back, self.weight = mean, drop, centroids, back, weight

    def language(self, rows: np.ndarray) -> np.ndarray:
        """The nearest centroid, measured from the centroids' mean (what every language shares is no sign)."""
        middle = self.centroids.mean(axis=0)
        return np.argmax((rows - middle) @ _unit(self.centroids - middle).T, axis=1)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        x = np.asarray(rows, np.float32).copy()
        if self.centroids is not None:
            x -= self.weight * self.centroids[self.language(rows)]
            if self.back is not None:
                x += self.weight * self.back
        if self.mean is not None:
            x -= self.mean
        if self.drop is not None and len(self.drop):
            x -= (x @ self.drop.T) @ self.drop
        blank = ~np.any(rows, axis=1)
        x[blank] = 0
        return _unit(x)


class Corrected:
    """An encoder whose rows go through a transform; its name says which."""

    def __init__(self, inner: Any, transform: Callable[[np.ndarray], np.ndarray] | None, label: str) -> None:
        self.inner, self.transform, self.label = inner, transform, label

    @property
    def name(self) -> str:
        return self.inner.name if self.transform is None else f"{self.inner.name} + {self.label}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = self.inner.encode(texts)
        return rows if self.transform is None else self.transform(rows)


class Cached:
    """The raw encoder, each text encoded once for every variant."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.rows = inner, {}

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.rows]
        if missing:
            self.rows.update(zip(missing, self.inner.encode(missing)))
        return np.stack([self.rows[t] for t in texts]) if texts else np.zeros((0, 512), np.float32)


def load_sample(root: Path = SAMPLE) -> dict[str, list[str]]:
    return {lang: [line.strip() for line in (root / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
                   if line.strip() and not line.startswith("#")] for lang in LANGUAGES}


def variants(titles: np.ndarray, sample: dict[str, np.ndarray]) -> dict[str, Transform | None]:
    everything = np.concatenate(list(sample.values()))
    sample_mean = everything.mean(axis=0)
    title_mean = titles.mean(axis=0)
    centroids = np.stack([sample[lang].mean(axis=0) for lang in LANGUAGES])
    found: dict[str, Transform | None] = {"none": None, "center-calendar": Transform(mean=title_mean)}
    for k in (1, 2, 3):
        found[f"abtt{k}-calendar"] = Transform(mean=title_mean, drop=_components(titles - title_mean, k))
    found["center-sample"] = Transform(mean=sample_mean)
    for k in (1, 2, 3):
        found[f"abtt{k}-sample"] = Transform(mean=sample_mean, drop=_components(everything - sample_mean, k))
    found["language"] = Transform(centroids=centroids)
    found["language-shift"] = Transform(centroids=centroids, back=sample_mean)
    found["language-shift-half"] = Transform(centroids=centroids, back=sample_mean, weight=0.5)
    found["language-subspace"] = Transform(drop=_orthonormal(centroids[1:] - centroids[0]))
    return found


def encoder_alone(encoder: Any, refs: list[dict], by_kind: dict[str, list[Any]]) -> list[recall.Result]:
    rank = recall.semantic_alone(encoder)
    return [recall.Result(ref["id"], ref["category"], ref["split"],
                          recall.rank_of(ref["expected"], rank(ref["text"], by_kind[ref["kind"]])),
                          wrong=None, occurrence_ok=None, ms=0.0) for ref in refs]


def _cell(m: dict[str, Any]) -> str:
    if not m.get("n") or m.get("recall@1") is None:
        return "n/a"
    wrong = f" w{m['wrong']}" if m.get("wrong") else ""  # the pipeline's wrong resolutions
    return f"{m['recall@1']:.3f}/{m['recall@19']:.3f} ({m['mrr']:.3f}){wrong}"


def oracle(raw: Any, sample: dict[str, np.ndarray]) -> None:
    """The expected title's cosine minus the first title's, for TUNE_MISSES, the languages known:
    each vector shifted by `weight` times its language's centroid minus the centroids' mean."""
    centroids = {lang: rows.mean(axis=0) for lang, rows in sample.items()}
    middle = np.mean(list(centroids.values()), axis=0)
    for weight in (0.0, 0.5, 1.0, 2.0):
        margins = []
        for text, (expected, lang_e), (first, lang_f) in TUNE_MISSES:
            q, e, f = (_unit(v - weight * (centroids[lang] - middle)) for v, lang in
                       zip(raw.encode([text, expected, first]), ("english", lang_e, lang_f)))
            margins.append(f"{float(q @ e - q @ f):+.3f}")
        print(f"known languages, shift x{weight}: expected minus first " + ", ".join(margins))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=retrieval.SPLITS, default="train")
    parser.add_argument("--variants", help="comma-separated names (default all)")
    parser.add_argument("--show-misses", metavar="VARIANT", help="print the pipeline's cross-language misses")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    from resolver.calendars.memory import MemoryCalendar
    from resolver.domain.semantic import MultilingualUSE

    meta = retrieval.load_meta()
    raw_items = retrieval.load_items()
    refs = [r for r in retrieval.load_references("a") if r["split"] == args.split]
    items = retrieval.memory_items(raw_items, meta)
    by_kind = {kind: [i for i in items if i.kind.value == kind] for kind in ("task", "event")}
    raw = Cached(MultilingualUSE())
    sample_vectors = {lang: raw.encode(texts) for lang, texts in load_sample().items()}
    found = variants(raw.encode([i.title for i in items]), sample_vectors)
    chosen = args.variants.split(",") if args.variants else list(found)

    lang_of = Transform(centroids=np.stack([sample_vectors[lang].mean(axis=0) for lang in LANGUAGES]))
    share = np.bincount(lang_of.language(raw.encode([i.title for i in items])), minlength=len(LANGUAGES))
    print("titles by nearest language centroid: "
          + ", ".join(f"{lang} {n}" for lang, n in zip(LANGUAGES, share.tolist())))
    print("the sample's own sentences by nearest centroid: " + ", ".join(
        f"{lang} {int(np.sum(lang_of.language(sample_vectors[lang]) == n))}/{len(sample_vectors[lang])}"
        for n, lang in enumerate(LANGUAGES)))
    if args.split == "train":
        oracle(raw, sample_vectors)

    categories = [c for c in retrieval.CATEGORIES if c != retrieval.ABSENT and any(r["category"] == c for r in refs)]
    rows = []
    every: dict[str, dict[str, Any]] = {}
    titles = {i.uid: i.title for i in items}
    for name in chosen:
        encoder = Corrected(raw, found[name], name)
        runs = {"alone": encoder_alone(encoder, refs, by_kind),
                "pipeline": recall.run_project(refs, MemoryCalendar(items=list(items)), meta, semantic=encoder)}
        figures = recall.summarise(runs, args.split, categories)
        every[name] = figures
        for method in ("alone", "pipeline"):
            per = figures[method]
            rows.append([name, method] + [_cell(per[c]) for c in ("cross_language", "synonym_paraphrase",
                                                                  "foreign_title")]
                        + [_cell(per[recall.OVERALL]),
                           "n/a" if per[recall.OVERALL].get("wrong") is None else str(per[recall.OVERALL]["wrong"])])
            print(f"{name:22} {method:8} " + "  ".join(f"{c}={_cell(per[c])}" for c in categories
                                                        + [recall.OVERALL]), flush=True)
        if args.show_misses == name:
            by_id = {r["id"]: r for r in refs}
            recall.show_misses([r for r in runs["pipeline"] if r.category == "cross_language"], by_id, titles,
                               name, print)
    if "none" in every:
        print("\ncategories whose recall@1 or @19 differs from none (none -> variant):")
        for name, figures in every.items():
            for method in ("alone", "pipeline"):
                moved = [f"{c} {_cell(every['none'][method][c])} -> {_cell(figures[method][c])}"
                         for c in categories + [recall.OVERALL]
                         if (figures[method][c].get("recall@1"), figures[method][c].get("recall@19"))
                         != (every["none"][method][c].get("recall@1"), every["none"][method][c].get("recall@19"))]
                if name != "none" and moved:
                    print(f"  {name} {method}: " + "; ".join(moved))
    print(f"\n{args.split} split, recall@1/@19 (MRR); wN: N wrong resolutions\n")
    print(recall.render_table(["variant", "measure", "cross_language", "synonym_paraphrase", "foreign_title",
                               "overall (the rest)", "wrong"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

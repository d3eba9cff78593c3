"""Which rule fuses the lexical pool with the semantic signal? Measured on the labelled set.

    .venv/bin/python bench/fusion_rules.py                 # train split (formerly "tune") (the rule is chosen here)
    .venv/bin/python bench/fusion_rules.py --split calibrate # the chosen rule, checked once

For every labelled reference with one expected item, the reference's time
expression is taken out as the pipeline does, the lexical pool is built
(`build_pool`, the best 19 with their scores) and the 40 titles nearest the
reference are found with the multilingual encoder. Each rule then orders the
union; recall@1 and @19 per category are printed for each rule. The rules:

- lexical: the pool as it is (the signal off);
- semantic: the nearest titles alone;
- rrf k=K w=W: reciprocal rank fusion, the semantic list weighted W;
- sum a=A f=F: lexical score + A x cosine (a cosine below F counts 0);
- gate g=G: when the lexical pool's best score is at least G, the lexical
  pool first and the nearest titles after it; below, `sum a=2 f=0.35`.

The resolver's rule is resolver/domain/semantic.py's `fuse`; docs/retrieval.md
quotes this script's table.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import retrieval  # noqa: E402

TOP = 19
NEAREST = 40
SKIP = ("date_alone", "duplicates", retrieval.ABSENT)


def observations(split: str):
    from resolver.domain.matching import build_pool
    from resolver.domain.semantic import MultilingualUSE
    from resolver.domain.timeexpr import find_time_expression

    import numpy as np

    meta = retrieval.load_meta()
    items = retrieval.memory_items(retrieval.load_items(), meta)
    by_kind = {kind: [i for i in items if i.kind.value == kind] for kind in ("task", "event")}
    encoder = MultilingualUSE()
    vectors = {kind: encoder.encode([i.title for i in chosen]) for kind, chosen in by_kind.items()}
    for ref in retrieval.load_references("a"):
        if ref["category"] in SKIP or (split != "all" and ref["split"] != split):
            continue
        chosen = by_kind[ref["kind"]]
        found = find_time_expression(ref["text"], now=meta.now, tz=meta.zone)
        rest = found.rest if found else ref["text"]
        pool = build_pool(rest, chosen, limit=TOP, time_range=found.range if found else None, tz=meta.zone,
                          bonus_words=found.expression.split() if found else ())
        lexical = [(c.item.uid, c.score) for c in pool.candidates]
        if pool.by_date or not rest.strip():
            nearest = []
        else:
            cos = vectors[ref["kind"]] @ encoder.encode([rest])[0]
            order = np.argsort(-cos, kind="stable")[:NEAREST].tolist()
            nearest = [(chosen[p].uid, float(cos[p])) for p in order]
        yield ref, lexical, nearest


def rrf(k: int, w: float):
    def rule(lexical, nearest):
        score = defaultdict(float)
        for n, (uid, _s) in enumerate(lexical, 1):
            score[uid] += 1 / (k + n)
        for n, (uid, _c) in enumerate(nearest[:TOP], 1):
            score[uid] += w / (k + n)
        return sorted(score, key=lambda u: -score[u])
    return rule


def summed(a: float, floor: float):
    def rule(lexical, nearest):
        lex = dict(lexical)
        cos = {u: c for u, c in nearest if c >= floor}
        union = list(dict.fromkeys([u for u, _ in lexical] + list(cos)))
        return sorted(union, key=lambda u: -(lex.get(u, 0.0) + a * cos.get(u, 0.0)))
    return rule


def gate(g: float, fallback=None):
    fallback = fallback or summed(2.0, 0.35)

    def rule(lexical, nearest):
        if lexical and lexical[0][1] >= g:
            lex = [u for u, _ in lexical]
            return lex + [u for u, c in nearest if u not in lex and c >= 0.35]
        return fallback(lexical, nearest)
    return rule


def agree(g: float, depth: int, floor: float = 0.35):
    """The lexical pool first when its best is strong (>= g) or among the `depth` nearest titles;
    otherwise the nearest titles (cosine >= floor) first and the lexical pool after them."""
    def rule(lexical, nearest):
        lex = [u for u, _ in lexical]
        near = [u for u, c in nearest if c >= floor]
        if lexical and (lexical[0][1] >= g or lex[0] in [u for u, _ in nearest[:depth]]):
            return lex + [u for u in near if u not in lex]
        return near[:TOP] + [u for u in lex if u not in near[:TOP]]
    return rule


RULES = {
    "lexical": lambda lexical, nearest: [u for u, _ in lexical],
    "semantic": lambda lexical, nearest: [u for u, _ in nearest],
    "rrf k=10 w=0.8": rrf(10, 0.8),
    "rrf k=60 w=1": rrf(60, 1.0),
    "sum a=1 f=0.35": summed(1.0, 0.35),
    "sum a=2 f=0.35": summed(2.0, 0.35),
    "sum a=3 f=0.35": summed(3.0, 0.35),
    "sum a=2 f=0.5": summed(2.0, 0.5),
    "gate g=0.9": gate(0.9),
    "gate g=1.0": gate(1.0),
    "gate g=0.6": gate(0.6),
    "gate g=0.7": gate(0.7),
    "gate g=0.8": gate(0.8),
    "gate g=0.7 then sum a=4": gate(0.7, summed(4.0, 0.35)),
    "gate g=0.8 then sum a=4": gate(0.8, summed(4.0, 0.35)),
    "gate g=0.7 then semantic": gate(0.7, lambda lexical, nearest: [u for u, _ in nearest]),
    "gate g=0.8 then semantic": gate(0.8, lambda lexical, nearest: [u for u, _ in nearest]),
    "gate g=0.8 then rrf w=2": gate(0.8, rrf(10, 2.0)),
    "agree g=0.8 d=1": agree(0.8, 1),
    "agree g=0.8 d=3": agree(0.8, 3),
    "agree g=0.8 d=5": agree(0.8, 5),
    "agree g=0.9 d=3": agree(0.9, 3),
    "agree g=1.0 d=3": agree(1.0, 3),
    "agree g=0.8 d=3 f=0.2": agree(0.8, 3, 0.2),
    "agree g=0.8 d=3 f=0.3 (adopted)": agree(0.8, 3, 0.3),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("train", "calibrate", "all"), default="train")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    hits: dict[tuple[str, str], list[tuple[bool, bool]]] = defaultdict(list)
    for ref, lexical, nearest in observations(args.split):
        for name, rule in RULES.items():
            ranked = rule(lexical, nearest)[:TOP]
            expected = ref["expected"][0]
            hits[(name, ref["category"])].append((ranked[:1] == [expected], expected in ranked))
            group = "synonym+cross" if ref["category"] in ("synonym_paraphrase", "cross_language") else "lexical"
            hits[(name, group)].append((ranked[:1] == [expected], expected in ranked))
    first = ("lexical", "synonym+cross", "synonym_paraphrase", "cross_language")
    categories = [c for c in first if any(k == c for _, k in hits)] + sorted({c for _, c in hits} - set(first))
    print(f"recall@1 / recall@19 on the {args.split} split (lexical: every category but synonym and cross)\n")
    print("| rule | " + " | ".join(categories) + " |")
    print("|---|" + "---|" * len(categories))
    for name in RULES:
        cells = []
        for category in categories:
            got = hits[(name, category)]
            cells.append(f"{sum(a for a, _ in got) / len(got):.2f} / {sum(b for _, b in got) / len(got):.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

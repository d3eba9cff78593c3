"""Would a small embedded semantic signal find references that share no word with their title?

    python bench/semantic_signal.py            # in a scratch venv holding wordllama (see below)

Trial for issue 21, pattern 6 (synonyms and paraphrases: "the broadband guy
comes round" for "Internet technician visit"). `wordllama` is not a
dependency of the project: it was measured and left out. To run this, make a
scratch virtualenv with the project's requirements plus
`wordllama==0.4.0.post1` (it brings tokenizers, safetensors and toml), or
add this repository's `.venv` site-packages to a venv that has wordllama.
Its vectors and tokenizer ship inside the wheel; they are loaded from the
package's files through `WordLlamaInference` (its default `WordLlama.load()`
looks for the tokenizer in a cache folder and then downloads it, which fails
offline). Run it under `unshare -rn` to see that nothing needs the network.

For every labelled reference (bench/data/retrieval/) with an expected item,
except lists (duplicates, date alone) and exact titles, this takes the
project's own pool (`build_pool`, the time expression taken out as the
pipeline does) and reports recall@19 per category and split for:

- lexical: the pool as the resolver builds it;
- semantic alone: the 19 titles nearest the reference;
- widened when thin: when the pool's best candidate covers less than THIN of
  the reference (or there is none), its last SLOTS places go to the nearest
  titles not already in it (what would have been adopted);
- widened always: the same with no thinness test.

It also times one reference against 5,000 memoised title vectors (warm) and
the embedding of 5,000 titles (cold). Adoption rule (the issue's): synonym
recall@19 >= 0.5 with no other category dropping, under 5 ms at 5,000 items
warm, used only when the lexical pool is thin.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import retrieval  # noqa: E402

THIN = 0.7
SLOTS = 5
TOP = 19
SKIP = ("date_alone", "duplicates", "exact", retrieval.ABSENT)


def wordllama_encoder():
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    root = Path(wordllama.__file__).resolve().parent
    tokenizer = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np", device="cpu") as f:
        embedding = f.get_tensor("embedding.weight")
    model = WordLlamaInference(embedding, tokenizer)
    return lambda texts: np.asarray(model.embed(list(texts), norm=True), dtype=np.float32)


def main() -> int:
    from resolver.domain.matching import build_pool
    from resolver.domain.timeexpr import find_time_expression

    try:
        encode = wordllama_encoder()
    except ImportError:
        print("wordllama is not installed here: see the docstring")
        return 1
    meta = retrieval.load_meta()
    items = retrieval.memory_items(retrieval.load_items(), meta)
    refs = [r for r in retrieval.load_references() if r["category"] not in SKIP]
    by_kind = {kind: [i for i in items if i.kind.value == kind] for kind in ("task", "event")}
    vectors = {kind: encode([i.title for i in chosen]) for kind, chosen in by_kind.items()}
    methods = ("lexical", "semantic alone", f"widened when thin (<{THIN}, {SLOTS} places)",
               f"widened always ({SLOTS} places)")
    hits: dict[tuple[str, str, str], list[bool]] = {}
    for ref in refs:
        chosen = by_kind[ref["kind"]]
        expression = find_time_expression(ref["text"], now=meta.now, tz=meta.zone)
        rest = expression.rest if expression else ref["text"]
        pool = build_pool(rest, chosen, limit=TOP, time_range=expression.range if expression else None,
                          tz=meta.zone, bonus_words=expression.expression.split() if expression else ())
        lexical = [c.item.uid for c in pool.candidates]
        similarity = vectors[ref["kind"]] @ encode([rest.strip()])[0]
        nearest = [chosen[p].uid for p in np.argsort(-similarity, kind="stable")[:TOP + SLOTS].tolist()]

        def widened(pool_uids: list[str]) -> list[str]:
            keep = pool_uids[:TOP - SLOTS]
            return keep + [u for u in nearest if u not in keep][:TOP - len(keep)]

        thin = not pool.candidates or pool.candidates[0].score < THIN
        ranked = {methods[0]: lexical, methods[1]: nearest[:TOP],
                  methods[2]: widened(lexical) if thin else lexical, methods[3]: widened(lexical)}
        for method, uids in ranked.items():
            for split in (ref["split"], "all"):
                hits.setdefault((method, ref["category"], split), []).append(ref["expected"][0] in uids[:TOP])
    categories = sorted({r["category"] for r in refs})
    print(f"recall@{TOP} per category (tune / heldout / all); {len(items)} items\n")
    print("| category | n | " + " | ".join(methods) + " |")
    print("|---|---:|" + "---:|" * len(methods))
    for category in categories:
        cells = []
        for method in methods:
            cells.append(" / ".join(f"{np.mean(hits[(method, category, split)]):.3f}"
                                    if hits.get((method, category, split)) else "n/a"
                                    for split in ("tune", "heldout", "all")))
        print(f"| {category} | {len(hits[(methods[0], category, 'all')])} | " + " | ".join(cells) + " |")
    titles = ([i.title for i in items] * (5000 // len(items) + 1))[:5000]
    started = time.perf_counter()
    matrix = encode(titles)
    cold = (time.perf_counter() - started) * 1000
    timings = []
    for ref in refs:
        started = time.perf_counter()
        scores = matrix @ encode([ref["text"]])[0]
        np.argpartition(-scores, TOP)[:TOP]
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    print(f"\none reference against 5,000 memoised title vectors: median {statistics.median(timings):.3f} ms, "
          f"p95 {timings[int(len(timings) * 0.95)]:.3f} ms, max {timings[-1]:.3f} ms; "
          f"embedding 5,000 titles (cold): {cold:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

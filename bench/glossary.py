"""What FreeDict's glosses cost the semantic signal (resolver/domain/glossary.py), against the encoder without them.

    PYTHONPATH=. .venv/bin/python bench/glossary.py [--repeat 7]

In one run, medians of `--repeat`:

- opening the dictionaries (`find_freedict`: four memory maps and headers);
- glossing the labelled set's titles and references (bench/data/retrieval/),
  cold (a new glossary: no word remembered, no chunk inflated) and warm;
- encoding the set's titles with the glosses and without them (the baseline:
  the same encoder, the same process), and the ratio;
- encoding one English reference (glossed: none, only the lookups) and one
  German reference (glossed: a second encode), with and without.

Needs Debian's dict-freedict-deu-eng, -fra-eng, -spa-eng and -eng-deu (bin/setup).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "retrieval"


def _median_ms(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    from resolver.domain.glossary import find_freedict
    from resolver.domain.semantic import MultilingualUSE

    titles = [json.loads(line)["title"] for line in (DATA / "items.jsonl").read_text().splitlines() if line]
    texts = titles + [json.loads(line)["text"] for line in (DATA / "references.jsonl").read_text().splitlines()
                      if line]
    if find_freedict() is None:
        print("FreeDict's dictionaries are not installed (bin/setup installs them)")
        return 1
    opened = _median_ms(find_freedict, args.repeat)
    cold = _median_ms(lambda: [g.gloss(t) for g in [find_freedict()] for t in texts], args.repeat)
    warm_glossary = find_freedict()
    for text in texts:
        warm_glossary.gloss(text)
    warm = _median_ms(lambda: [warm_glossary.gloss(t) for t in texts], args.repeat)
    glossed_share = sum(1 for t in titles if warm_glossary.gloss(t)) / len(titles)

    plain, glossed = MultilingualUSE(), MultilingualUSE(glossary=warm_glossary)
    plain.encode(["warm up"])
    glossed._model = plain._model  # one model loaded: the same weights, the same process
    encode_plain = _median_ms(lambda: plain.encode(titles), args.repeat)
    encode_glossed = _median_ms(lambda: glossed.encode(titles), args.repeat)
    rows = [
        ("open the dictionaries", opened, None),
        (f"gloss {len(texts)} texts, cold", cold, None),
        (f"gloss {len(texts)} texts, warm", warm, None),
        (f"encode {len(titles)} titles ({glossed_share:.0%} glossed): without glosses", encode_plain, 1.0),
        (f"encode {len(titles)} titles: with glosses", encode_glossed, encode_glossed / encode_plain),
    ]
    for reference in ("the quarterly numbers", "Reisepass verlängern"):
        without = _median_ms(lambda r=reference: plain.encode([r]), args.repeat * 3)
        with_ = _median_ms(lambda r=reference: glossed.encode([r]), args.repeat * 3)
        rows.append((f"encode {reference!r}: without glosses", without, 1.0))
        rows.append((f"encode {reference!r}: with glosses", with_, with_ / without))
    width = max(len(name) for name, _ms, _r in rows)
    print(f"{'':{width}}  median ms  ratio")
    for name, ms, ratio in rows:
        print(f"{name:{width}}  {ms:9.2f}  {'' if ratio is None else f'{ratio:.2f}x'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

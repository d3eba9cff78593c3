"""Warm scoring, the minimum of many runs per reference: robust on a loaded machine.

    .venv/bin/python bench/scoring_warm.py [--runs 15]

`build_pool` over the scoring bench's distinct titles (bench/resolve.py's
`scoring_titles(True)`) at 5,000 and 20,000 items, each reference run once
to warm the title index and then `--runs` times; the minimum is printed as
JSON. Run it from two checkouts (before and after a change) alternately in
one session: the minimum of many runs is what the code costs when the
machine lets it run, whatever the other processes do.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.resolve import SCORING_REFERENCES, scoring_titles  # noqa: E402
from resolver.domain.items import Kind, make_item  # noqa: E402
from resolver.domain.matching import build_pool  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="measured runs per reference (default 15)")
    args = parser.parse_args(argv)
    out: dict[str, float] = {}
    titles = scoring_titles(True)
    for size in (5_000, 20_000):
        items = tuple(make_item(collection_path="/u/work/", uid=str(n), title=title, etag='"1"', kind=Kind.TASK)
                      for n, title in enumerate(titles[:size]))
        for text in SCORING_REFERENCES:
            build_pool(text, items, limit=19)
            best = float("inf")
            for _ in range(args.runs):
                started = time.perf_counter()
                build_pool(text, items, limit=19)
                best = min(best, time.perf_counter() - started)
            out[f"{size} {text}"] = round(best * 1000, 2)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

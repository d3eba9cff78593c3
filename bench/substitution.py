"""The cost of the swap guard (resolver/domain/substitution.py) against the matcher's pool, in the same run.

    .venv/bin/python bench/substitution.py [--repeat N]

For every labelled reference (bench/data/retrieval/, both calendars) the
matcher builds its pool over the reference's calendar (`build_pool`, the
relevance model's PREPOOL), and the guard reads the pool's first candidate as
the pipeline does (`pipeline._swapped`, with the FreeDict dictionaries when
they are installed). Each is timed warm, the median of N runs per reference;
the script prints the medians over references, the worst, and the guard's
share of the pool's time. Never asserted: docs/performance.md quotes it.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _median_ms(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per reference (default 21)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    from bench import retrieval
    from resolver.conf import resolver_settings
    from resolver.domain import pipeline, relevance
    from resolver.domain.glossary import find_freedict
    from resolver.domain.matching import MatchingMemo, build_pool

    glossary = find_freedict(resolver_settings.GLOSSARY_DIR)

    foreign = pipeline._foreign(SimpleNamespace(glossary=glossary))  # type: ignore[arg-type]
    refs = retrieval.load_references(None)
    names = list(retrieval.CALENDARS)
    metas = {n: retrieval.load_meta(retrieval.CALENDARS[n]) for n in names}
    items = {n: retrieval.memory_items(retrieval.load_items(retrieval.CALENDARS[n]), metas[n]) for n in names}
    memos = {n: MatchingMemo() for n in names}
    pool_ms, guard_ms, swaps = [], [], 0
    for ref in refs:
        name = retrieval.calendar_of(ref)
        kind_items = [i for i in items[name] if i.kind.value == ref["kind"]]

        def pool(text=ref["text"], kind_items=kind_items, memo=memos[name]):
            return build_pool(text, kind_items, limit=relevance.PREPOOL, memo=memo)

        candidates = pool().candidates
        pool_ms.append(_median_ms(pool, args.repeat))
        swaps += pipeline._swapped(ref["text"], candidates, foreign) is not None
        guard_ms.append(_median_ms(lambda: pipeline._swapped(ref["text"], candidates, foreign), args.repeat))
    print(f"glosses: {glossary.name if glossary else 'none'}; {len(refs)} references, {swaps} first candidates "
          f"read as a swap")
    print("| step | median ms | worst ms |")
    print("|---|---:|---:|")
    print(f"| the matcher's pool (build_pool, {relevance.PREPOOL}) | {statistics.median(pool_ms):.3f} "
          f"| {max(pool_ms):.3f} |")
    print(f"| the swap guard on its first candidate | {statistics.median(guard_ms):.3f} | {max(guard_ms):.3f} |")
    print(f"guard / pool, at the median: {statistics.median(guard_ms) / statistics.median(pool_ms):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

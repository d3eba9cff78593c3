"""The cost of reading the other kind: a reference no exact match answers, with and without that read.

    .venv/bin/python bench/other_kind.py                       # N = 1,000, 9 rounds
    .venv/bin/python bench/other_kind.py --sizes 1000,5000 --repeat 15

When no live item of the kind asked for holds every word of a reference, the
pipeline reads the same collections for the other kind too
(resolver/domain/pipeline.py, `_other_kind_named`), so that "design review"
asked as a task is told it names an event (`other_kind_matched`). That is a
second `fetch` for such a reference. What it costs, in one run against one
Radicale on loopback holding N open tasks and N live events
(bench/corpus.py), through `services.answer`:

- with: the pipeline as it ships;
- without: the same configured calendar behind a wrapper that refuses the
  other kind's fetch, which the pipeline treats as a server failing on it
  (it goes on without it): the pipeline before the read, in the same process;

each for a task and an event reference whose every word some title holds
(bench/corpus.py's typos: the other kind is not read) and one with a word no
title holds (it is; neither names an item of the other kind, so both variants
answer alike), with the
reader's memo on (the service: a warm incremental read) and off
(`RESOLVER_PARSE_CACHE_ITEMS=0`, as `manage.py resolve` runs: a full read
each time). Every variant runs once per round, in an order shuffled anew
each round (seeded), after a warm-up round. Printed: the medians, the CalDAV requests, and with / without.
Nothing is asserted.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django, launch_radicale, render_table  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent / "out"
# References with a word no title of bench/corpus.py holds ("paperwork", "investors"): the other kind is read.
UNHELD_TEXT = {"task": "renew passport paperwork for Lisbon", "event": "quarterly board pack review with investors"}


class OneKind:
    """A calendar that reads only `kind`: the other kind's fetch fails as a server's would."""

    def __init__(self, inner: Any, kind: Any) -> None:
        self.inner, self.kind = inner, kind

    def collections(self) -> Any:
        return self.inner.collections()

    def fetch(self, *, kind: Any, collection_ids: Any, time_zone: Any) -> Any:
        from resolver.domain.errors import CalendarUnavailable

        if kind is not self.kind:
            raise CalendarUnavailable("not read: the benchmark's baseline")
        return self.inner.fetch(kind=kind, collection_ids=collection_ids, time_zone=time_zone)


def measure(n: int, repeat: int) -> dict[str, Any]:
    from django.test import override_settings

    from bench import corpus
    from resolver import services
    from resolver.domain.items import Kind

    UNHELD = {kind: UNHELD_TEXT[kind.value] for kind in Kind}
    server = launch_radicale(n)
    try:
        references = [(Kind.TASK, "held", corpus.FUZZY_TASK), (Kind.TASK, "unheld", UNHELD[Kind.TASK]),
                      (Kind.EVENT, "held", corpus.FUZZY_EVENT), (Kind.EVENT, "unheld", UNHELD[Kind.EVENT])]
        variants = []
        for memo in ("on", "off"):
            settings = server.resolver_settings(**({} if memo == "on" else {"PARSE_CACHE_ITEMS": 0}))
            for kind, held, text in references:
                for read in ("with", "without"):
                    variants.append((f"{kind.value} {held} memo {memo} {read}", settings, kind, text, read))

        def run(settings: dict[str, Any], kind: Any, text: str, read: str) -> tuple[float, Any]:
            with override_settings(RESOLVER=settings):
                calendar = services.calendar_for(None)
                if read == "without":
                    calendar = OneKind(calendar, kind)
                gc.collect()
                started = time.perf_counter()
                outcome = services.answer({"text": text, "kind": kind.value}, caller=services.Caller(door="api"),
                                          calendar=calendar).outcome
                return (time.perf_counter() - started) * 1000.0, outcome

        samples: dict[str, list[float]] = {name: [] for name, *_ in variants}
        answers: dict[str, set[Any]] = {name: set() for name, *_ in variants}
        requests: dict[str, set[int]] = {name: set() for name, *_ in variants}
        for round_ in range(repeat + 1):
            # Shuffled each round: what ran just before a variant (the other kind read, the reader switched
            # between memo on and off) changes what its read costs, and no variant may always follow another.
            order = list(variants)
            random.Random(round_).shuffle(order)
            for name, settings, kind, text, read in order:
                ms, outcome = run(settings, kind, text, read)
                answers[name].add((outcome.status.value, tuple(c.item_id for c in outcome.candidates)))
                requests[name].add(outcome.calendar_requests)
                if round_:  # the first round warms the memo and Radicale's sync state
                    samples[name].append(ms)
        for name, *_ in variants:
            twin = name.replace("without", "with") if name.endswith("without") else name
            if answers[name] != answers[twin]:
                raise RuntimeError(f"{name} answers differently from {twin}: {answers[name]} {answers[twin]}")
        medians = {name: round(statistics.median(values), 1) for name, values in samples.items()}
        rows = []
        for name, *_ in variants:
            if name.endswith(" with"):
                base = name + "out"
                rows.append([f"{n:,}", name.removesuffix(" with"), medians[base], medians[name],
                             round(medians[name] / medians[base], 2),
                             "/".join(str(r) for r in sorted(requests[base])),
                             "/".join(str(r) for r in sorted(requests[name]))])
        return {"n": n, "median_ms": medians, "samples_ms": samples, "rows": rows,
                "requests": {k: sorted(v) for k, v in requests.items()}}
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000", help="Comma-separated N values.")
    parser.add_argument("--repeat", type=int, default=9, help="Measured rounds (after one warm-up round).")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-other-kind-"))
    try:
        configure_django(workdir)
        from django.core.management import call_command

        call_command("migrate", verbosity=0, interactive=False)
        load_before = os.getloadavg()
        results = [measure(int(n), args.repeat) for n in args.sizes.split(",") if n.strip()]
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(render_table(["N", "reference, reader's memo", "without ms", "with ms", "with / without",
                        "CalDAV req without", "CalDAV req with"], [row for r in results for row in r["rows"]]))
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} cores)")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"other-kind-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"results": results, "load_before": load_before, "load_after": load_after},
                              indent=2), encoding="utf-8")
    print(f"written: {out.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The cold read's two ways of taking its first token, against the plain full read, in one run.

    .venv/bin/python bench/cold_read.py --kind task
    .venv/bin/python bench/cold_read.py --kind event --size 1000 --repeat 7

One Radicale on loopback holds the benchmark calendar (bench/corpus.py). Each
repetition, in alternating order: the plain full read (bench/resolve.py
`make_plain_read`), a cold resolution as the reader does it now (the
collection's DAV:sync-token property, then the kind's calendar-query), and a
cold resolution taking the initial sync-collection instead (what the reader
does on a server without a usable token property: `sync.current_token`
answering None here). Cold: a fresh registry of readers, as a new process.
Medians and ratios to the plain read's median go to stdout; nothing is
asserted.
"""
from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django, launch_radicale, timed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("task", "event"), default="task")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-cold-read-"))
    try:
        configure_django(workdir)
        from django.test import override_settings

        from bench.resolve import REFERENCES, forget_process_state, make_plain_read
        from resolver import services
        from resolver.calendars.caldav import sync

        server = launch_radicale(args.size)
        real = sync.current_token
        try:
            with override_settings(RESOLVER=server.resolver_settings(RESOLUTION_BUDGET_SECONDS=600.0)):
                plain = make_plain_read(server, args.kind)

                def cold(token_property: bool) -> float:
                    sync.current_token = real if token_property else (lambda *_a, **_k: None)
                    forget_process_state()
                    gc.collect()
                    request = {"text": REFERENCES[args.kind]["fuzzy"], "kind": args.kind}
                    return timed(lambda: services.answer(request, caller=services.Caller(door="api")))[0]

                plain(), cold(True), cold(False)  # warm-up: imports, Radicale's own caches
                samples: dict[str, list[float]] = {"plain": [], "token property + query": [], "initial sync": []}
                for rep in range(args.repeat):
                    gc.collect()
                    samples["plain"].append(timed(plain)[0])
                    for token_property in ((True, False) if rep % 2 == 0 else (False, True)):
                        name = "token property + query" if token_property else "initial sync"
                        samples[name].append(cold(token_property))
                floor = statistics.median(samples["plain"])
                for name, values in samples.items():
                    median = statistics.median(values)
                    print(f"{args.kind} N={args.size} {name:24} median {median:8.1f} ms  min {min(values):8.1f} ms"
                          f"  x plain {median / floor:.2f}")
        finally:
            sync.current_token = real
            server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the connection layer's guards cost per CalDAV exchange (issue 26, points 1 and 2).

    .venv/bin/python bench/connection_policy.py [--rounds 300] [--out FILE]

One Radicale on loopback with two small collections. Three readers list the
account's calendars over and over (a warm `collections()`: one PROPFIND on
the remembered home), interleaved round by round so that the machine's noise
falls on all of them alike:

- baseline: the operator's account (connect by name) with the header-phase
  watchdog switched off: the client as it was before these guards;
- watchdog: the operator's account as it is now (the header phase watched);
- checked: a person's account as it is now: the name `localhost` resolved and
  every address checked on each request, the pool pinned to the checked
  address, plus the watchdog. Loopback is admitted as if it were public for
  this measurement only (`addresses._public` patched), since nothing else is
  reachable here.

Figures are medians in milliseconds, and ratios to the baseline of the same run.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django, render_table, summary  # noqa: E402


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _variants(url: str, username: str, password: str) -> dict[str, Callable[[], Any]]:
    from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry, connections

    def listing(check: bool, host: str, guarded: bool) -> Callable[[], Any]:
        cal = CalDAVCalendar(url=url.replace("127.0.0.1", host), username=username, password=password,
                             check_addresses=check, registry=ReaderRegistry())

        def call() -> Any:
            guard = contextlib.nullcontext() if guarded else _unguarded(connections)
            with guard:
                return cal.collections()

        call()  # warm: the home is remembered, the connection open
        return call

    return {"baseline": listing(False, "127.0.0.1", False), "watchdog": listing(False, "127.0.0.1", True),
            "checked": listing(True, "localhost", True)}


@contextlib.contextmanager
def _unguarded(connections: Any) -> Any:
    original = connections.guarded
    connections.guarded = lambda connection: contextlib.nullcontext()
    try:
        yield
    finally:
        connections.guarded = original


def measure(url: str, username: str, password: str, rounds: int) -> dict[str, Any]:
    from resolver.calendars.caldav import addresses

    addresses._public = lambda address: True  # loopback stands for a public server (module docstring)
    variants = _variants(url, username, password)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, call in variants.items():
            samples[name].append(_timed(call))
    base = statistics.median(samples["baseline"])
    return {name: {**summary(values), "ratio_to_baseline": round(statistics.median(values) / base, 3)}
            for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-connection-policy-"))
    radicale = None
    try:
        configure_django(workdir)
        from lifeproject import embedded_radicale
        from lifeproject.seeding import Spec, seed

        instance, radicale = embedded_radicale.launch(workdir / "radicale")
        url = instance.url
        seed(url, instance.username, instance.password,
             {"work": ("Work", [Spec("t1", "Quarterly report")]), "personal": ("Personal", [Spec("t2", "Dentist")])})
        result = measure(url, instance.username, instance.password, args.rounds)
    finally:
        if radicale is not None and radicale.poll() is None:
            radicale.terminate()
            radicale.wait(timeout=15)
        shutil.rmtree(workdir, ignore_errors=True)
    rows = [[name, r["median_ms"], r["min_ms"], r["max_ms"], r["ratio_to_baseline"]] for name, r in result.items()]
    print(render_table(["variant", "median ms", "min ms", "max ms", "ratio"], rows))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

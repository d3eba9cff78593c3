"""How long a trickled chunked answer holds a request, against its budget (issue 38, point 1).

    .venv/bin/python bench/deadline.py [--budget 2] [--rounds 3] [--bytes 400] [--interval 0.05]

A loopback server (tests/support/slow_peers.py) answers every request with a
207 whose chunked body stalls where http.client reads byte by byte: the
chunk-size line's extension (`size`) or a trailer line (`trailer`), one byte
every `--interval` seconds, `--bytes` of them. `services.list_collections`
(what /v1/collections and the MCP tool call) reads the settings' account
there under a `--budget` second deadline, with a socket timeout far longer.

- unguarded: the body read as before (only each read bounded): the watchdog
  is not armed on the body (`http._socket_of` answers None), as before the fix;
- guarded: as the reader is now (the watchdog ends the body at the deadline).

Printed, not asserted: the median wall time of a request, its ratio to the
budget, and what it ended with. Then what bounding a name lookup by the
deadline costs (it runs in a thread of its own): `localhost` looked up
directly and under a deadline, interleaved, medians in microseconds.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import configure_django  # noqa: E402


def _once(where: str, *, budget: float, max_bytes: int, interval: float) -> tuple[float, str]:
    from django.test.utils import override_settings

    from resolver import services
    from resolver.domain.errors import ResolverError
    from tests.support.slow_peers import ChunkTrickler

    with ChunkTrickler(where=where, interval=interval, max_bytes=max_bytes) as server:
        with override_settings(RESOLVER={"CALDAV_URL": server.url, "CALDAV_USERNAME": "u", "CALDAV_PASSWORD": "p",
                                         "CALDAV_TIMEOUT": 30.0, "RESOLUTION_BUDGET_SECONDS": budget}):
            started = time.perf_counter()
            try:
                services.list_collections(caller=services.Caller(door="api"))
                ended = "ok"
            except ResolverError as err:
                ended = f"{err.code}/{err.details.get('reason')}"
            return time.perf_counter() - started, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bytes", type=int, default=400)
    parser.add_argument("--interval", type=float, default=0.05)
    args = parser.parse_args()
    configure_django(Path(tempfile.mkdtemp(prefix="bench-deadline-")))
    from resolver.calendars.caldav import http

    print(f"budget {args.budget} s; the server trickles {args.bytes} bytes, one every {args.interval} s "
          f"({args.bytes * args.interval:.0f} s in all); socket timeout 30 s")
    print(f"{'where':8} {'reader':10} {'median s':>9} {'x budget':>9}  ended with")
    for where in ("size", "trailer"):
        for label, patch in (("unguarded", mock.patch.object(http, "_socket_of", lambda raw: None)),
                             ("guarded", mock.patch.object(http, "_socket_of", http._socket_of))):
            times, ends = [], set()
            with patch:
                for _ in range(args.rounds):
                    seconds, ended = _once(where, budget=args.budget, max_bytes=args.bytes, interval=args.interval)
                    times.append(seconds)
                    ends.add(ended)
            median = statistics.median(times)
            print(f"{where:8} {label:10} {median:9.2f} {median / args.budget:9.2f}  {', '.join(sorted(ends))}")
    lookup_cost()


def lookup_cost(rounds: int = 2000) -> None:
    from resolver.calendars.caldav import addresses
    from resolver.domain import deadline

    direct, bounded = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        addresses._lookup("localhost", 80)
        direct.append(time.perf_counter() - started)
        with deadline.running(20.0):
            started = time.perf_counter()
            addresses._lookup("localhost", 80)
            bounded.append(time.perf_counter() - started)
    a, b = statistics.median(direct) * 1e6, statistics.median(bounded) * 1e6
    print(f"lookup of localhost, {rounds} rounds: direct {a:.0f} us, bounded by the deadline {b:.0f} us "
          f"(+{b - a:.0f} us)")


if __name__ == "__main__":
    main()

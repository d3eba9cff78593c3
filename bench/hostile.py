"""CPU cost of reading one hostile resource (issue: bounded work per resource).

    .venv/bin/python -m bench.hostile [--reader PATH_TO_ICAL_PY] [--timeout 120]

Each resource of tests/support/hostile_ics.py is read with `ical.live_items`
in a child process (a pathological one may not finish), against a fixed now
and the default 90-day window; the figure is the child's CPU time. `--reader`
loads another version of resolver/calendars/ical.py (say, one from
`git show OLD:resolver/calendars/ical.py`) to measure before and after in one run.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import sys
import time
from datetime import datetime, timezone

from tests.support.hostile_ics import HOSTILE

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
_ORDINARY = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:o\r\nSUMMARY:Weekly\r\n"
             "DTSTART:20260101T100000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def _load(reader: str | None):
    if reader is None:
        from resolver.calendars import ical
        return ical
    spec = importlib.util.spec_from_file_location("ical_under_test", reader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _child(reader: str | None, name: str, queue) -> None:
    try:
        ical = _load(reader)
        from resolver.domain.items import Kind
        window = ical.window_from(NOW, 90)
        # Warm up the parser and the caches on an ordinary resource first.
        ical.live_items(_ORDINARY, kind=Kind.EVENT, collection_path="/u/c/",
                        etag='"e"', window=window)
        text = HOSTILE[name][0](NOW)
        started = time.process_time()
        try:
            found = ical.live_items(text, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=window)
            outcome = f"{len(found)} live"
        except ical.UnparseableResource as err:
            outcome = f"skipped: {err.reason}"
        queue.put((round((time.process_time() - started) * 1000, 1), outcome))
    except BaseException as err:  # a crash is a result too, never a hang of the parent
        queue.put((None, f"crashed: {type(err).__name__}: {err}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", help="path of an ical.py to measure instead of the current one")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    rows = {}
    for name in HOSTILE:
        queue = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(target=_child, args=(args.reader, name, queue))
        child.start()
        child.join(args.timeout)
        if child.is_alive():
            child.kill()
            child.join()
            rows[name] = {"cpu_ms": None, "outcome": f"did not finish in {args.timeout:.0f} s"}
        else:
            cpu_ms, outcome = queue.get(timeout=10)
            rows[name] = {"cpu_ms": cpu_ms, "outcome": outcome}
        print(f"{name:28} {rows[name]['cpu_ms']!s:>10} ms  {rows[name]['outcome']}", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

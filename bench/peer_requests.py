"""CalDAV requests per resolution on each server of the compatibility suite, cold and warm.

    .venv/bin/python bench/peer_requests.py            # every peer that runs here
    .venv/bin/python bench/peer_requests.py --peers radicale,cyrus

Each server gets a fresh collection with the suite's 20 items
(tests/compat/seed.py); DAViCal, Cyrus and SOGo must have been started by
scripts/peers/ (a peer that is not running is reported and left out). For
each read mode (sync, sync off, memo off), with a fresh reader: the first
task read (cold: discovery and the collection), the same read again (warm),
the read after one edit (churn), then the first and second event reads (the
other kind of the same collection). The figure is `FetchResult.requests`: the
HTTP requests the reader sent, counted by its transport. Reads name the
seeded collection; a resolution reading every collection adds the same per
collection. Nothing is timed. Figures to stdout (a Markdown table) and
bench/out/peer-requests-<time>.json.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import OUT_DIR, configure_django  # noqa: E402

STEPS = ("task cold", "task warm", "task after an edit", "event cold", "event warm")
MODES = {"sync": dict(sync="auto"), "sync off": dict(sync="off"), "memo off": dict(parse_cache_items=0)}


def counts(peer, cid: str, mode: str) -> dict[str, int]:
    from resolver import deadline
    from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
    from resolver.domain.items import Kind
    from tests.compat import seed

    cal = CalDAVCalendar(url=peer.url, username=peer.username, password=peer.password, timeout=30.0,
                         event_time_range=peer.event_time_range, registry=ReaderRegistry(), **MODES[mode])

    def read(kind: Kind) -> int:
        return deadline.bounded(lambda: cal.fetch(kind=kind, collection_ids=[cid]))().requests

    found = {"task cold": read(Kind.TASK), "task warm": read(Kind.TASK)}
    peer.put(cid, "t-edit.ics", seed.task("t-edit", f"Call the plumber {time.monotonic_ns()}"))
    found["task after an edit"] = read(Kind.TASK)
    found["event cold"] = read(Kind.EVENT)
    found["event warm"] = read(Kind.EVENT)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", default="radicale,xandikos,davical,cyrus,sogo")
    args = parser.parse_args()
    configure_django(Path(tempfile.mkdtemp(prefix="lp-bench-peers-")))
    from tests.compat import seed
    from tests.compat.conftest import _local
    from tests.compat.peers import EXTERNAL, external

    results: dict[str, dict[str, dict[str, int]]] = {}
    versions: dict[str, str] = {}
    for name in args.peers.split(","):
        root = None
        if name in EXTERNAL:
            peer = external(name)
            if isinstance(peer, str):
                print(f"left out: {peer}", file=sys.stderr)
                continue
        else:
            root = Path(tempfile.mkdtemp(prefix=f"lp-bench-{name}-"))
            peer = _local(name, root)
        versions[name] = peer.version
        try:
            results[name] = {}
            for mode in MODES:
                cid = peer.new_collection()
                for resource, text in seed.items().items():
                    peer.put(cid, resource, text)
                try:
                    results[name][mode] = counts(peer, cid, mode)
                finally:
                    peer.drop_collection(cid)
        finally:
            if peer.stop:
                peer.stop()
            if root:
                shutil.rmtree(root, ignore_errors=True)
    print("| server | mode | " + " | ".join(STEPS) + " |")
    print("|---|---|" + "---:|" * len(STEPS))
    for name, modes in results.items():
        for mode, found in modes.items():
            print(f"| {versions[name]} | {mode} | " + " | ".join(str(found[s]) for s in STEPS) + " |")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"peer-requests-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"versions": versions, "requests": results}, indent=2))
    print(f"\nwritten: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

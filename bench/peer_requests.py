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

`ctag` (issue 39): on a fresh seeded collection, the server's CS:getctag
before and after a PUT, a second PUT of another resource in the same second,
an edit and a DELETE (does it move with every change, and within one
second?); then, in sync mode with a fresh reader, the requests of a task
read once the ctag is a witness (seen moving with a change, settled by the
2 s rule: `task settled`), and whether the reader still trusts ctags there.
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


_CTAG = ('<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" '
         'xmlns:CS="http://calendarserver.org/ns/"><D:prop><CS:getctag/></D:prop></D:propfind>')


def ctag_of(peer, cid: str) -> str | None:
    from lxml import etree

    answer = peer.send("PROPFIND", f"{peer.home}{cid}/", data=_CTAG,
                       headers={"Depth": "0", "Content-Type": "application/xml; charset=utf-8"})
    if answer.status_code != 207:
        return None
    return etree.fromstring(answer.content).findtext(".//{http://calendarserver.org/ns/}getctag")


def ctag_probe(peer, cid: str) -> dict[str, object]:
    """Whether the ctag moves on each kind of change, within one second too; and a settled read's requests."""
    from resolver import deadline
    from resolver.calendars.caldav import CalDAVCalendar, ReaderRegistry
    from resolver.domain.items import Kind
    from tests.compat import seed

    seen = [ctag_of(peer, cid)]
    steps = {"put": lambda: peer.put(cid, "t-probe1.ics", seed.task("t-probe1", "Probe one")),
             "put, same second": lambda: peer.put(cid, "t-probe2.ics", seed.task("t-probe2", "Probe two")),
             "edit": lambda: peer.put(cid, "t-probe1.ics", seed.task("t-probe1", "Probe one, edited")),
             "delete": lambda: peer.delete(cid, "t-probe2.ics")}
    moved: dict[str, object] = {"ctag given": seen[0] is not None}
    for name, step in steps.items():
        step()
        seen.append(ctag_of(peer, cid))
        moved[name] = seen[-1] != seen[-2]
    registry = ReaderRegistry()
    cal = CalDAVCalendar(url=peer.url, username=peer.username, password=peer.password, timeout=30.0,
                         event_time_range=peer.event_time_range, registry=registry)

    def read() -> int:
        # Asked on every read (not every 10 s until it is a witness): the steps below are the reads.
        registry.get(cal.account).ctags.ask_seconds = 0.0
        return deadline.bounded(lambda: cal.fetch(kind=Kind.TASK, collection_ids=[cid]))().requests

    read()  # cold
    read()  # the ctag first seen
    peer.put(cid, "t-probe3.ics", seed.task("t-probe3", f"Probe three {time.monotonic_ns()}"))
    read()  # the ctag moves with the change: the reader has seen it move on a PUT
    read()  # right after a change: the sync
    read()  # the ctag first seen again
    peer.delete(cid, "t-probe3.ics")
    read()  # and on a DELETE
    read()
    read()
    time.sleep(2.2)
    read()  # settled now
    moved["task settled"] = read()
    reader = registry.get(cal.account)
    moved["trusted"] = reader.ctags.trusted and reader.ctags.moved >= {"update", "delete"} and reader.ctags.given
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", default="radicale,xandikos,davical,cyrus,sogo")
    args = parser.parse_args()
    configure_django(Path(tempfile.mkdtemp(prefix="lp-bench-peers-")))
    from tests.compat import seed
    from tests.compat.conftest import _local
    from tests.compat.peers import EXTERNAL, external

    results: dict[str, dict[str, dict[str, int]]] = {}
    ctags: dict[str, dict[str, object]] = {}
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
            cid = peer.new_collection()
            for resource, text in seed.items().items():
                peer.put(cid, resource, text)
            try:
                ctags[name] = ctag_probe(peer, cid)
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
    columns = ["ctag given", "put", "put, same second", "edit", "delete", "task settled", "trusted"]
    print("\n| server | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, found in ctags.items():
        print(f"| {versions[name]} | " + " | ".join(str(found[c]) for c in columns) + " |")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"peer-requests-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"versions": versions, "requests": results, "ctag": ctags}, indent=2))
    print(f"\nwritten: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()

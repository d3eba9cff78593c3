"""The reader's bounds, measured: how big a real answer is, and what refusing a hostile one costs.

    .venv/bin/python bench/reader_bounds.py                      # all three
    .venv/bin/python bench/reader_bounds.py --size-only --n 1000  # the answer size only

- size: one Radicale on loopback holds N open tasks and N live events
  (bench/corpus.py); the resolver's own calendar-query REPORT (etag and data,
  no time-range: what an incremental first read asks) is sent per collection
  and its bytes counted, per resource; the figure for a 20,000-item
  collection is that per-resource size times 20,000 (sizes grow linearly with
  the resources: one `<D:response>` each).
- refuse: a server of this script's own answers 207 with a valid multistatus
  of `--body-mib` MiB (default 200), generated as it is sent; a fresh child
  process runs one `CalDAVCalendar.fetch` with the default settings
  (RESOLVER_MAX_RESPONSE_BYTES) under the default resolution deadline, and
  reports how long it took to end, with which reason, and its peak RSS
  (ru_maxrss) against the same child's RSS before the fetch.
- trickle: the same server sends a 207 then one byte a second; the child
  reports when and how the fetch ended (the deadline: reason timeout).

A table goes to stdout and the figures to bench/out/reader-bounds-<time>.json.
"""
from __future__ import annotations

import argparse
import re
import json
import os
import resource
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402
from bench.harness import OUT_DIR, launch_radicale, render_table  # noqa: E402

USER = "bench"
ITEM = ("BEGIN:VCALENDAR&#13;\nVERSION:2.0&#13;\nPRODID:-//bench//EN&#13;\nBEGIN:VTODO&#13;\n"
        "UID:{n}@bench&#13;\nDTSTAMP:20260101T000000Z&#13;\nSUMMARY:Hostile filler task {n}&#13;\n"
        "END:VTODO&#13;\nEND:VCALENDAR&#13;\n")


def _responses(total: int) -> Iterator[bytes]:
    head = (b'<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:" '
            b'xmlns:C="urn:ietf:params:xml:ns:caldav">')
    yield head
    sent, n = len(head), 0
    while sent < total:
        chunk = "".join(
            f"<D:response><D:href>/{USER}/tasks/{n + k}.ics</D:href><D:propstat><D:prop>"
            f'<D:getetag>"{n + k}"</D:getetag><C:calendar-data>{ITEM.format(n=n + k)}</C:calendar-data>'
            "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
            for k in range(200)).encode()
        n += 200
        sent += len(chunk)
        yield chunk
    yield b"</D:multistatus>"


class Hostile(BaseHTTPRequestHandler):
    """Discovery answered plainly; every REPORT answered huge (mode "huge") or one byte a second ("trickle")."""

    protocol_version = "HTTP/1.1"
    mode = "huge"
    body_bytes = 200 * 2**20

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, body: bytes) -> None:
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PROPFIND(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        ns = '<D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
        if self.headers.get("Depth") == "0":
            body = (f'{ns}<D:response><D:href>{self.path}</D:href><D:propstat><D:prop><C:calendar-home-set>'
                    f"<D:href>/{USER}/</D:href></C:calendar-home-set></D:prop><D:status>HTTP/1.1 200 OK</D:status>"
                    "</D:propstat></D:response></D:multistatus>")
        else:
            body = (f"{ns}<D:response><D:href>/{USER}/tasks/</D:href><D:propstat><D:prop><D:resourcetype>"
                    "<D:collection/><C:calendar/></D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status>"
                    "</D:propstat></D:response></D:multistatus>")
        self._reply(body.encode())

    def do_REPORT(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            if self.mode == "trickle":
                for chunk in _responses(10 * 2**20):
                    for byte in chunk:
                        self.wfile.write(b"1\r\n" + bytes([byte]) + b"\r\n")
                        self.wfile.flush()
                        time.sleep(1.0)
            for chunk in _responses(self.body_bytes):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client gave up: what it should do


def child(mode: str, url: str, budget: float | None) -> dict[str, Any]:
    """In a fresh process: one fetch with the default settings; how it ended, when, and the peak RSS."""
    import django
    from django.conf import settings

    values: dict[str, Any] = {"CALDAV_URL": url, "CALDAV_USERNAME": USER, "CALDAV_PASSWORD": "x"}
    if budget is not None:
        values["RESOLUTION_BUDGET_SECONDS"] = budget
    settings.configure(INSTALLED_APPS=[], RESOLVER=values)
    django.setup()
    from resolver import deadline
    from resolver.calendars.caldav import CalDAVCalendar
    from resolver.conf import resolver_settings
    from resolver.domain.errors import CalendarUnavailable
    from resolver.domain.items import Kind

    calendar = CalDAVCalendar.from_settings(resolver_settings)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    try:
        deadline.bounded(lambda: calendar.fetch(kind=Kind.TASK, collection_ids=None))()
        reason = "no error"
    except CalendarUnavailable as err:
        reason = str(err.details.get("reason"))
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"mode": mode, "reason": reason, "seconds": round(seconds, 2), "rss_before_mib": round(before / 1024, 1),
            "rss_peak_mib": round(peak / 1024, 1),
            "max_response_bytes": int(resolver_settings.MAX_RESPONSE_BYTES),
            "budget_seconds": float(resolver_settings.RESOLUTION_BUDGET_SECONDS)}


def run_child(mode: str, body_mib: int, budget: float | None = None) -> dict[str, Any]:
    Hostile.mode = mode
    Hostile.body_bytes = body_mib * 2**20
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = subprocess.run([sys.executable, __file__, "--child", mode, "--url",
                              f"http://127.0.0.1:{server.server_address[1]}/",
                              *(["--budget", str(budget)] if budget is not None else [])],
                             capture_output=True, text=True, timeout=600, check=True)
    finally:
        server.shutdown()
    return json.loads(out.stdout.strip().splitlines()[-1])


def answer_size(n: int) -> dict[str, Any]:
    import requests

    from resolver.calendars.caldav import query_body
    from resolver.calendars.ical import Window
    from resolver.domain.items import Kind

    server = launch_radicale(n)
    try:
        session = requests.Session()
        session.auth = (server.username, server.password)
        now = datetime.now(timezone.utc)
        window = Window(start=now, end=now + timedelta(days=90))
        found: dict[str, Any] = {}
        for kind in (Kind.TASK, Kind.EVENT):
            total = resources = 0
            for cid, _name, _share in corpus.COLLECTIONS:
                response = session.request("REPORT", f"{server.url}{server.username}/{cid}/",
                                           data=query_body(kind, window, time_range=False), timeout=300,
                                           headers={"Depth": "1", "Content-Type": "application/xml"})
                total += len(response.content)
                resources += len(re.findall(rb"<(?:[\w-]+:)?response[ >]", response.content))
            per = total / max(resources, 1)
            found[kind.value] = {"bytes": total, "resources": resources, "bytes_per_resource": round(per),
                                 "mib_at_20000": round(per * 20_000 / 2**20, 1)}
        return found
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="Open tasks (and live events) for the size measurement.")
    parser.add_argument("--body-mib", type=int, default=200, help="The hostile answer's size in MiB.")
    parser.add_argument("--size-only", action="store_true", help="Only measure a real answer's size.")
    parser.add_argument("--child", choices=("huge", "trickle"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=float, default=None,
                        help="The resolution deadline for the refusal (default: the setting's, 20 s); a long one "
                             "shows the byte bound's own refusal on a slow machine.")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.url, args.budget)))
        return 0
    from bench.harness import configure_django
    import tempfile

    configure_django(Path(tempfile.mkdtemp(prefix="reader-bounds-")))
    report: dict[str, Any] = {"when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                              "size": answer_size(args.n), "loadavg_1min": round(os.getloadavg()[0], 2)}
    if not args.size_only:
        report["refuse"] = run_child("huge", args.body_mib)
        if args.budget is not None:
            report["refuse_long_budget"] = run_child("huge", args.body_mib, args.budget)
        report["trickle"] = run_child("trickle", args.body_mib)
    rows = [[kind, v["resources"], v["bytes"], v["bytes_per_resource"], v["mib_at_20000"]]
            for kind, v in report["size"].items()]
    print(render_table(["kind", "resources", "REPORT bytes", "bytes per resource", "MiB at 20,000"], rows))
    for name in ("refuse", "refuse_long_budget", "trickle"):
        if name in report:
            print(f"{name}: " + json.dumps(report[name]))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"reader-bounds-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

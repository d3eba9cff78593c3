"""What each CalDAV request costs the server: the figures the filters were chosen by.

    .venv/bin/python bench/server_costs.py                      # N = 1,000 on Radicale and Xandikos
    .venv/bin/python bench/server_costs.py --sizes 1000,5000 --servers radicale

One collection per server holding N open tasks and N events (a twelfth of
them weekly series), written item by item. For each request, the median of
7 wall-clock times on the client, body read, nothing parsed (except the row
that says so): REPORT with and without the `COMPLETED is-not-defined`
prop-filter, the etag-only REPORT, events with and without a time-range,
sync-collection with an unchanged and with an empty token (ETags only, and
with the data: the reader's cold read), the Depth 0
PROPFIND of the sync token, a calendar-multiget of 10 resources, and the
Depth 0 PROPFINDs of CS:getctag and getlastmodified (issue 39).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import icalendar  # noqa: E402
import requests  # noqa: E402
from lxml import etree  # noqa: E402

from bench.corpus import _todo, _vevent  # noqa: E402
from bench.harness import render_table  # noqa: E402

NOW = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
NS = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"'


CTAG = ('<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:CS="http://calendarserver.org/ns/">'
        '<D:prop><CS:getctag/></D:prop></D:propfind>')
MODIFIED = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getlastmodified/></D:prop></D:propfind>'


def _query(inner: str, data: bool = True) -> str:
    prop = "<D:getetag/>" + ("<C:calendar-data/>" if data else "")
    return (f'<?xml version="1.0"?><C:calendar-query {NS}><D:prop>{prop}</D:prop><C:filter>'
            f'<C:comp-filter name="VCALENDAR">{inner}</C:comp-filter></C:filter></C:calendar-query>')


def _sync(token: str, data: bool = False) -> str:
    prop = "<D:getetag/>" + ("<C:calendar-data/>" if data else "")
    return (f'<?xml version="1.0"?><D:sync-collection {NS}><D:sync-token>{token}</D:sync-token>'
            f"<D:sync-level>1</D:sync-level><D:prop>{prop}</D:prop></D:sync-collection>")


def _fmt(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%SZ")


TASKS_PROP_FILTER = _query('<C:comp-filter name="VTODO"><C:prop-filter name="COMPLETED"><C:is-not-defined/>'
                           "</C:prop-filter></C:comp-filter>")
TASKS = _query('<C:comp-filter name="VTODO"/>')
TASKS_ETAGS = _query('<C:comp-filter name="VTODO"/>', data=False)
EVENTS = _query('<C:comp-filter name="VEVENT"/>')
EVENTS_RANGE = _query(f'<C:comp-filter name="VEVENT"><C:time-range start="{_fmt(NOW)}" '
                      f'end="{_fmt(NOW + timedelta(days=90))}"/></C:comp-filter>')
TOKEN = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:sync-token/></D:prop></D:propfind>'


def resources(n: int) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        lines = _todo(f"t-{i}", f"Task number {i} review", status="NEEDS-ACTION", due=NOW + timedelta(days=i % 50))
        out.append((f"t-{i}", lines))
        start = NOW + timedelta(days=i % 80, hours=2) if i % 12 else NOW - timedelta(days=100)
        out.append((f"e-{i}", _vevent(f"e-{i}", f"Event {i} sync", start=start,
                                      rrule=None if i % 12 else "FREQ=WEEKLY")))
    return [(uid, "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//lifeproject//costs//EN", *lines,
                               "END:VCALENDAR", ""])) for uid, lines in out]


def median_ms(fn: Callable[[], object], k: int = 7) -> float:
    times = []
    for _ in range(k):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def measure(session: requests.Session, url: str) -> dict[str, float]:
    def report(body: str, depth: str = "1") -> bytes:
        response = session.request("REPORT", url, data=body.encode(), timeout=300,
                                   headers={"Depth": depth, "Content-Type": "application/xml; charset=utf-8"})
        response.raise_for_status()
        return response.content

    first = etree.fromstring(report(_sync(""), "0"))
    token = first.findtext("{DAV:}sync-token")
    hrefs = [node.findtext("{DAV:}href") for node in first.iterfind("{DAV:}response")][:10]
    multiget = (f'<?xml version="1.0"?><C:calendar-multiget {NS}><D:prop><D:getetag/><C:calendar-data/></D:prop>'
                + "".join(f"<D:href>{h}</D:href>" for h in hrefs) + "</C:calendar-multiget>")

    def parse(content: bytes) -> None:
        for node in etree.fromstring(content).iterfind("{DAV:}response"):
            data = node.findtext(".//{urn:ietf:params:xml:ns:caldav}calendar-data")
            if data:
                icalendar.Calendar.from_ical(data)

    figures = {
        "tasks: REPORT with COMPLETED prop-filter": median_ms(lambda: report(TASKS_PROP_FILTER)),
        "tasks: REPORT, VTODO comp-filter alone": median_ms(lambda: report(TASKS)),
        "tasks: the same, plus parsing every item": median_ms(lambda: parse(report(TASKS))),
        "tasks: etag-only REPORT": median_ms(lambda: report(TASKS_ETAGS)),
        "events: REPORT with time-range": median_ms(lambda: report(EVENTS_RANGE)),
        "events: REPORT, VEVENT comp-filter alone": median_ms(lambda: report(EVENTS)),
        "sync-collection, unchanged token": median_ms(lambda: report(_sync(token or ""), "0")),
        "sync-collection, empty token": median_ms(lambda: report(_sync(""), "0")),
        # The reader's cold read (resolver/calendars/caldav/sync.py): token, ETags and data at once.
        "sync-collection, empty token, with data": median_ms(lambda: report(_sync("", data=True), "0")),
        "PROPFIND sync-token, Depth 0": median_ms(lambda: session.request(
            "PROPFIND", url, data=TOKEN, headers={"Depth": "0"}, timeout=300).content),
        "calendar-multiget, 10 resources": median_ms(lambda: report(multiget)),
        # Issue 39: the collection's CS:getctag (the reader's witness, Depth 0) and getlastmodified.
        "PROPFIND CS:getctag, Depth 0": median_ms(lambda: session.request(
            "PROPFIND", url, data=CTAG, headers={"Depth": "0"}, timeout=300).content),
        "PROPFIND getlastmodified, Depth 0": median_ms(lambda: session.request(
            "PROPFIND", url, data=MODIFIED, headers={"Depth": "0"}, timeout=300).content),
    }
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000", help="Comma-separated N values.")
    parser.add_argument("--servers", default="radicale,xandikos", help="radicale, xandikos or both.")
    args = parser.parse_args(argv)
    from lifeproject import embedded_radicale
    from tests.support.xandikos import start_xandikos

    table: dict[str, dict[str, float]] = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        for name in args.servers.split(","):
            root = Path(tempfile.mkdtemp(prefix=f"costs-{name}-"))
            session = requests.Session()
            try:
                if name == "radicale":
                    instance, process = embedded_radicale.launch(root)
                    session.auth = (instance.username, instance.password)
                    url, stop = f"{instance.url}{instance.username}/costs/", process.terminate
                else:
                    server = start_xandikos(root)
                    url, stop = f"{server.url}user/calendars/costs/", server.stop
                session.request("MKCALENDAR", url, timeout=30).raise_for_status()
                for uid, text in resources(n):
                    session.put(f"{url}{uid}.ics", data=text.encode(), timeout=30,
                                headers={"Content-Type": "text/calendar; charset=utf-8"}).raise_for_status()
                print(f"{name} N={n}: measuring ...", file=sys.stderr, flush=True)
                table[f"{name} N={n}"] = measure(session, url)
                stop()
            finally:
                shutil.rmtree(root, ignore_errors=True)
    columns = list(table)
    rows = [[request, *(f"{table[c][request]:.1f}" for c in columns)] for request in next(iter(table.values()))]
    print(render_table(["request (ms, median of 7)", *columns], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Resolution cost against the floor: reading and parsing the live collections.

    .venv/bin/python bench/resolve.py                    # N = 100, 1,000, 5,000
    .venv/bin/python bench/resolve.py --sizes 100 --repeat 5
    .venv/bin/python bench/resolve.py --incremental      # cold / warm / churn, N = 1,000, 5,000, 20,000
    .venv/bin/python bench/resolve.py --incremental --server davical --sizes 1000   # on a running peer

For each N, one Radicale on loopback holds N open tasks and N live events
(bench/corpus.py). In one run, interleaved (every repetition runs every
scenario once, in a rotating order) and after a warm-up, it measures:

- floor: one bare calendar-query REPORT per collection with `requests` (the
  very body the resolver sends: etag + calendar-data, same filter), the
  multistatus parsed with lxml and every item parsed with `icalendar`;
  nothing else: no discovery, no liveness rules, no matching;
- exact / fuzzy (judge off) / fuzzy (loopback Jev contract server), each
  through `resolver.services.answer` and through `POST /v1/resolve`
  with Django's test Client (in-process: the full middleware, DRF and
  token-authentication stack, without a socket);
- the ratio of each median to the floor's median for the same kind;
- CalDAV round trips per resolution (FetchResult.requests, cross-checked
  against a count of the HTTP requests the caldav client really sent), and
  the number of Jev calls per resolution (the exact path must make none);
- scoring alone over 20,000 titles (`score_candidates`);
- peak memory: tracemalloc's peak for one resolution (a separate, untimed
  pass) and the process's maximum RSS after each N;
- the client process's CPU time per scenario, and a calibration figure (a
  fixed pure-Python loop) with the load average, before and after: on a
  shared machine they tell how much other work slowed the run down.

A table goes to stdout and the figures to bench/out/resolve-<time>.json.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402
from bench.harness import (  # noqa: E402
    OUT_DIR,
    BenchRadicale,
    configure_django,
    launch_peer,
    launch_radicale,
    migrate_and_token,
    render_table,
    summary,
    timed,
)

TARGET_RATIO = 1.3
TARGET_SCORING_MS = 15.0
TARGET_SCORING_5000_MS = 5.0
SCORING_TITLES = 20_000

REFERENCES = {
    "task": {"exact": corpus.EXACT_TASK, "fuzzy": corpus.FUZZY_TASK},
    "event": {"exact": corpus.EXACT_EVENT, "fuzzy": corpus.FUZZY_EVENT},
}


# -- the floor --------------------------------------------------------------

def floor_body(kind: str, start: datetime, end: datetime) -> bytes:
    """The resolver's own calendar-query body, so the server does the same work for both."""
    from resolver.calendars.caldav import query_body
    from resolver.calendars.ical import Window
    from resolver.conf import resolver_settings
    from resolver.domain.items import Kind

    return query_body(Kind(kind), Window(start=start, end=end),
                      time_range=bool(resolver_settings.EVENT_TIME_RANGE_FILTER))


def calibration() -> dict[str, float]:
    """A fixed pure-Python loop (best of 5) and the load average: how busy the machine was."""
    best = min(timed(lambda: sum(range(1_000_000)))[0] for _ in range(5))
    return {"loop_ms": round(best, 2), "loadavg_1min": round(os.getloadavg()[0], 2)}


def make_floor(server: BenchRadicale, kind: str) -> Callable[[], int]:
    import icalendar
    import requests
    from lxml import etree

    session = requests.Session()
    session.auth = (server.username, server.password)
    urls = [f"{server.url}{server.username}/{cid}/" for cid, _name, _share in corpus.COLLECTIONS]
    dav, cal = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"

    def run() -> int:
        now = datetime.now(timezone.utc)
        body = floor_body(kind, now, now + timedelta(days=90))
        parsed = 0
        for url in urls:
            response = session.request("REPORT", url, data=body, timeout=60,
                                       headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
            response.raise_for_status()
            tree = etree.fromstring(response.content)
            for node in tree.iterfind(f"{dav}response"):
                node.findtext(f".//{dav}getetag")
                data = node.findtext(f".//{cal}calendar-data")
                if data:
                    icalendar.Calendar.from_ical(data)
                    parsed += 1
        return parsed

    return run


# -- counting real round trips ------------------------------------------------

class RoundTrips:
    """Counts the HTTP requests the reader's client sends (to cross-check FetchResult.requests)."""

    def __init__(self) -> None:
        from resolver.calendars.caldav import http

        self.count = 0
        original = http.Transport._send

        def counting(transport: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return original(transport, *args, **kwargs)

        http.Transport._send = counting  # type: ignore[method-assign]


# -- one size -----------------------------------------------------------------

def bench_size(server: BenchRadicale, *, jev_url: str, token: str, repeat: int, warmup: int,
               trips: RoundTrips, jev: Any) -> dict[str, Any]:
    from django.test import Client, override_settings

    from resolver import services

    client = Client(headers={"Authorization": f"Token {token}"})
    judge_off = server.resolver_settings()
    judge_jev = server.resolver_settings(TYPESAFE_BASE_URL=jev_url, TYPESAFE_API_KEY="")

    def service_call(text: str, kind: str) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            outcome = services.answer({"text": text, "kind": kind}, caller=services.Caller(door="api")).outcome
            envelope = services.envelope_for(outcome)
            return {"status": envelope["status"], "candidates": len(outcome.candidates),
                    "calendar_requests": outcome.calendar_requests, "timings": dict(outcome.timings),
                    "method": envelope["data"]["method"]}
        return run

    def api_call(text: str, kind: str) -> Callable[[], dict[str, Any]]:
        payload = json.dumps({"text": text, "kind": kind})

        def run() -> dict[str, Any]:
            response = client.post("/v1/resolve", data=payload, content_type="application/json")
            envelope = response.json()
            data = envelope.get("data") or {}
            return {"status": envelope["status"], "http_status": response.status_code,
                    "candidates": len(data.get("candidates", ())), "method": data.get("method")}
        return run

    scenarios: list[tuple[str, dict[str, Any] | None, Callable[[], Any]]] = []
    for kind in ("task", "event"):
        scenarios.append((f"floor {kind}", None, make_floor(server, kind)))
        for door, factory in (("service", service_call), ("api", api_call)):
            refs = REFERENCES[kind]
            scenarios.append((f"exact {kind} {door}", judge_off, factory(refs["exact"], kind)))
            scenarios.append((f"fuzzy-off {kind} {door}", judge_off, factory(refs["fuzzy"], kind)))
            scenarios.append((f"fuzzy-jev {kind} {door}", judge_jev, factory(refs["fuzzy"], kind)))

    samples: dict[str, list[float]] = {name: [] for name, _s, _f in scenarios}
    cpu: dict[str, list[float]] = {name: [] for name, _s, _f in scenarios}
    facts: dict[str, dict[str, Any]] = {name: {"trips": set(), "jev_calls": set(), "results": []}
                                        for name, _s, _f in scenarios}
    for rep in range(warmup + repeat):
        shift = rep % len(scenarios)
        for name, resolver_settings, fn in scenarios[shift:] + scenarios[:shift]:
            override = override_settings(RESOLVER=resolver_settings) if resolver_settings is not None else None
            if override is not None:
                override.enable()
            try:
                gc.collect()
                trips_before, jev_before = trips.count, len(jev.systemone_requests)
                cpu_before = time.process_time()
                ms, result = timed(fn)
                cpu_ms = (time.process_time() - cpu_before) * 1000
            finally:
                if override is not None:
                    override.disable()
            if rep < warmup:
                continue
            samples[name].append(ms)
            cpu[name].append(cpu_ms)
            if not name.startswith("floor"):
                facts[name]["trips"].add(trips.count - trips_before)
                facts[name]["jev_calls"].add(len(jev.systemone_requests) - jev_before)
            facts[name]["results"].append(result)

    figures: dict[str, Any] = {}
    for name, _s, _f in scenarios:
        entry: dict[str, Any] = summary(samples[name])
        entry["client_cpu_ms_median"] = round(statistics.median(cpu[name]), 3)
        results = facts[name]["results"]
        if name.startswith("floor"):
            entry["items_parsed"] = results[-1]
        else:
            last = results[-1]
            entry.update({
                "status": last["status"],
                "method": last["method"],
                "candidates": last["candidates"],
                "http_round_trips": sorted(facts[name]["trips"]),
                "jev_calls": sorted(facts[name]["jev_calls"]),
            })
            if "calendar_requests" in last:
                entry["calendar_requests"] = last["calendar_requests"]
                for key in ("calendar_ms", "matching_ms", "judgment_ms"):
                    values = [r["timings"][key] for r in results if key in r["timings"]]
                    if values:
                        entry[f"{key}_median"] = round(statistics.median(values), 3)
            kind = name.split()[1]
            floor = summary(samples[f"floor {kind}"])
            entry["ratio_to_floor"] = round(entry["median_ms"] / floor["median_ms"], 3)
            # Minimums are the least disturbed by other work on a shared machine.
            entry["ratio_of_minimums"] = round(entry["min_ms"] / floor["min_ms"], 3)
        figures[name] = entry

    # Memory: tracemalloc slows Python down several times, so it gets its own pass.
    memory: dict[str, Any] = {}
    with override_settings(RESOLVER=judge_off):
        for label, fn in (("floor task", make_floor(server, "task")),
                          ("fuzzy-off task service", service_call(REFERENCES["task"]["fuzzy"], "task")),
                          ("fuzzy-off event service", service_call(REFERENCES["event"]["fuzzy"], "event"))):
            gc.collect()
            tracemalloc.start()
            fn()
            _current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            memory[f"{label} tracemalloc_peak_mib"] = round(peak / 2**20, 2)
    memory["process_maxrss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return {"scenarios": figures, "memory": memory}


# -- scoring alone ------------------------------------------------------------

SCORING_REFERENCES = ["renew pasport lisbon", "budget review anna", "weekly sync", "dentist",
                      "quartely board review", "kalomi", "zzz nothing like it"]
_SYLLABLES = ("ka", "lo", "mi", "zu", "ra", "ve", "no", "ti", "sa", "qu", "do", "pe", "ri", "ba", "xo", "le")


def scoring_titles(distinct: bool) -> list[str]:
    """20,000 titles from the corpus vocabulary; `distinct` adds a made-up word to each.

    The corpus vocabulary repeats titles (about one in four is distinct), as
    calendars do; the distinct set is the worst case: every title differs and
    the vocabulary holds some 17,000 words.
    """
    rng = random.Random(20_000 + distinct)
    titles = []
    for i in range(SCORING_TITLES):
        title = corpus._task_title(rng) if i % 2 else corpus._event_title(rng)
        if distinct:
            title += " " + "".join(rng.choice(_SYLLABLES) for _ in range(4))
        titles.append(title)
    return titles


def _shared_word_baseline(text: str, items: tuple) -> list:
    """The simple ranking rule a user would otherwise write: shared words, most first."""
    from resolver.domain.matching import significant_words

    words = set(significant_words(text))
    scored = [(len(words.intersection(item.title_words)), item) for item in items]
    scored = [pair for pair in scored if pair[0]]
    scored.sort(key=lambda pair: (-pair[0], pair[1].title_key))
    return scored


def bench_scoring(repeat: int, sizes: tuple[int, ...] = (5_000, SCORING_TITLES)) -> dict[str, Any]:
    """score_candidates at 5,000 and 20,000 titles: cold (the title index built in
    the call), warm (the same titles as the previous request, in a new sequence
    of new Item objects: the index is reused), and the shared-word baseline over
    the same titles, interleaved."""
    from resolver.domain.items import Kind, make_item
    from resolver.domain.matching import MatchingMemo, build_pool

    memo = MatchingMemo()  # what a reader keeps between requests

    def score_candidates(text, items):  # what a request runs: the best 19, and the count
        return build_pool(text, items, limit=19, memo=memo).candidates

    def clear_indexes() -> None:
        memo.clear()

    result: dict[str, Any] = {"titles": list(sizes)}
    worst: dict[str, float] = {}
    for label, distinct in (("corpus titles", False), ("distinct titles", True)):
        every = scoring_titles(distinct)
        for size in sizes:
            items = tuple(make_item(collection_path="/bench/work/", uid=f"score-{i}", title=title,
                                    etag=f'"{i}"', kind=Kind.TASK)
                          for i, title in enumerate(every[:size]))
            figures: dict[str, Any] = {}
            for text in SCORING_REFERENCES:
                for _ in range(3):
                    score_candidates(text, items)
                cold, warm, baseline = [], [], []
                for _ in range(repeat):
                    gc.collect()
                    # Cold: no index for these titles (a collection whose titles changed).
                    # (tuple(items) would be `items` itself: a tuple copy is the same object.)
                    clear_indexes()
                    fresh = tuple(list(items))
                    cold.append(timed(lambda: score_candidates(text, fresh))[0])
                    # Warm: the same titles read again, as new Item objects in a new
                    # sequence (what an unchanged collection gives the next request).
                    again = tuple(list(items))
                    warm.append(timed(lambda: score_candidates(text, again))[0])
                    baseline.append(timed(lambda: _shared_word_baseline(text, items))[0])
                figures[text] = {"cold_median_ms": round(statistics.median(cold), 3),
                                 "warm_median_ms": round(statistics.median(warm), 3),
                                 "shared_word_baseline_median_ms": round(statistics.median(baseline), 3),
                                 "matched": build_pool(text, items, limit=19).matched}
                for kind in ("cold", "warm"):
                    key = f"{kind}@{size}"
                    worst[key] = max(worst.get(key, 0.0), figures[text][f"{kind}_median_ms"])
            result[f"{label} @ {size}"] = {"distinct_titles": len({item.title_words for item in items}),
                                           "vocabulary": len({w for item in items for w in item.title_words}),
                                           "references": figures}
    result["worst_median_ms"] = worst
    return result


# -- incremental reads: cold, warm, churn against the plain full read -----------

# Issue 27: warm <= 0.25x, 1 % churn <= 0.35x (at 1,000 and 5,000), cold <= 1.15x (every size).
INCREMENTAL_TARGETS = {"warm": 0.25, "churn": 0.35, "cold": 1.15}
INCREMENTAL_TARGET_SIZES = (1000, 5000)  # warm and churn targets; cold applies at every size
MEMORY_TARGET_MIB_PER_10K = 30.0
CHURN_FRACTION = 0.01


def make_plain_read(server: BenchRadicale, kind: str) -> Callable[[], int]:
    """What a user would otherwise run: PROPFIND on the home, a comp-filter-only REPORT per collection, parse all."""
    import icalendar
    import requests
    from lxml import etree

    session = requests.Session()
    session.auth = (server.username, server.password)
    home = server.home_url
    # On a peer the home holds other calendars too: the benchmark's are read, as the resolver reads them.
    ours = {url.split("/", 3)[3].rstrip("/") for url in server.collection_urls()} if server.collection_ids else None
    component = "VTODO" if kind == "task" else "VEVENT"
    body = ('<?xml version="1.0" encoding="utf-8"?><C:calendar-query xmlns:D="DAV:" '
            'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop>'
            f'<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="{component}"/></C:comp-filter>'
            "</C:filter></C:calendar-query>").encode("utf-8")
    listing = (b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:displayname/>'
               b"</D:prop></D:propfind>")
    dav, cal = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"

    def run() -> int:
        response = session.request("PROPFIND", home, data=listing, timeout=120,
                                   headers={"Depth": "1", "Content-Type": "application/xml"})
        response.raise_for_status()
        urls = [f"{server.origin}{_path(node.findtext(f'{dav}href'))}"
                for node in etree.fromstring(response.content).iterfind(f"{dav}response")
                if node.find(f".//{cal}calendar") is not None
                and (ours is None or _path(node.findtext(f"{dav}href")).strip("/") in ours)]
        parsed = 0
        for url in urls:
            response = session.request("REPORT", url, data=body, timeout=120,
                                       headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
            response.raise_for_status()
            for node in etree.fromstring(response.content).iterfind(f"{dav}response"):
                node.findtext(f".//{dav}getetag")
                data = node.findtext(f".//{cal}calendar-data")
                if data:
                    icalendar.Calendar.from_ical(data)
                    parsed += 1
        return parsed

    return run


def _path(href: str) -> str:
    """An href's path (Cyrus and SOGo may answer absolute URLs)."""
    return "/" + href.split("://", 1)[1].split("/", 1)[1] if "://" in href else href


def forget_process_state() -> None:
    """What a fresh process starts with: a new registry of readers (no memo, sync tokens, sessions or home)."""
    from resolver.calendars.caldav import ReaderRegistry, use_registry

    # The readers hold the title indexes too (matching.MatchingMemo): a new registry forgets them.
    use_registry(ReaderRegistry()).clear()


class Churner:
    """Edits a fraction of one kind's resources on the server (untimed), as someone else would."""

    def __init__(self, server: BenchRadicale, kind: str) -> None:
        import requests
        from lxml import etree

        self.session = requests.Session()
        self.session.auth = (server.username, server.password)
        self.base = server.origin
        component = "VTODO" if kind == "task" else "VEVENT"
        body = ('<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
                f'<D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter '
                f'name="{component}"/></C:comp-filter></C:filter></C:calendar-query>').encode("utf-8")
        self.hrefs: list[str] = []
        for url in server.collection_urls():
            response = self.session.request("REPORT", url, data=body,
                                            headers={"Depth": "1", "Content-Type": "application/xml"}, timeout=120)
            response.raise_for_status()
            self.hrefs += [_path(n.findtext("{DAV:}href")) for n in etree.fromstring(response.content).iter("{DAV:}response")
                           if n.find(".//{DAV:}getetag") is not None and n.findtext(".//{DAV:}getetag")]
        self.rng = random.Random(7)
        self.round = 0

    def churn(self, fraction: float) -> int:
        self.round += 1
        chosen = self.rng.sample(self.hrefs, max(1, int(len(self.hrefs) * fraction)))
        for href in chosen:
            url = self.base + href
            text = self.session.get(url, timeout=60).text
            # A new DTSTAMP: a real edit with a new ETag, the title and liveness unchanged.
            lines = [f"DTSTAMP:2026{self.round % 12 + 1:02d}01T000000Z" if line.startswith("DTSTAMP:") else line
                     for line in text.splitlines()]
            self.session.put(url, data="\r\n".join(lines).encode("utf-8"),
                             headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=60).raise_for_status()
        return len(chosen)

    def remove_one(self) -> tuple[str, str]:
        """Delete one resource (a DELETE the ctag must move with); its href and text, to put back."""
        href = self.rng.choice(self.hrefs)
        text = self.session.get(self.base + href, timeout=60).text
        self.session.delete(self.base + href, timeout=60).raise_for_status()
        return href, text

    def put_back(self, href: str, text: str) -> None:
        self.session.put(self.base + href, data=text.encode("utf-8"),
                         headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=60).raise_for_status()


def settle(resolve: Any, churner: Churner) -> Any:
    """Bring the reader to a settled ctag witness (issue 39), untimed: seen moving with a PUT and a DELETE,
    then 2 s passed. Returns the deleted resource, to put back.
    The ctag is asked on every read here (not every 10 s until it is a witness): these reads are the steps.
    """
    from resolver.calendars.caldav import readers

    for reader in readers().readers():
        reader.ctags.ask_seconds = 0.0
    resolve()  # right after a change: the sync alone
    resolve()  # the ctag first seen
    churner.churn(0.0)  # one PUT
    resolve()  # moved with the PUT
    resolve()
    resolve()  # first seen again
    removed = churner.remove_one()
    resolve()  # moved with the DELETE
    resolve()
    resolve()  # first seen again
    time.sleep(2.2)
    resolve()  # these members read 2 s after: settled
    for reader in readers().readers():
        if not (reader.ctags.trusted and reader.ctags.moved >= {"update", "delete"}):
            print(f"  note: {reader!r} does not trust its ctags ({sorted(reader.ctags.moved)}, "
                  f"trusts {reader.ctags.trusted}): `settled` is not a witness read", file=sys.stderr, flush=True)
    return removed


def bench_incremental(server: BenchRadicale, *, repeat: int, settled: bool = False) -> dict[str, Any]:
    """Cold, warm and churn resolutions (service door, judge off) against the plain full read, interleaved."""
    from django.test import override_settings

    from resolver import services
    from resolver.calendars.caldav import readers
    from resolver.domain.items import Kind

    result: dict[str, Any] = {}
    # The resolution deadline is for requests, not for a benchmark's first
    # read of a fresh server (Radicale builds its own item cache then).
    with override_settings(RESOLVER=server.resolver_settings(RESOLUTION_BUDGET_SECONDS=600.0)):
        for kind in ("task", "event"):
            text = REFERENCES[kind]["fuzzy"]
            plain = make_plain_read(server, kind)
            churner = Churner(server, kind)

            def resolve() -> Any:
                request = {"text": text, "kind": kind}
                if server.collection_ids:
                    request["collection_ids"] = list(server.collection_ids)
                return services.answer(request, caller=services.Caller(door="api")).outcome

            samples: dict[str, list[float]] = {"plain": [], "cold": [], "warm": [], "churn": [], "settled": [],
                                               "warm_ctag_off": []}
            churned = 0
            # Warm-up: imports, Radicale's own item cache and sync history.
            plain(), forget_process_state(), resolve(), resolve(), churner.churn(CHURN_FRACTION), resolve()
            for rep in range(repeat):
                # Interleaved: the plain read before the resolver's sequence on even
                # repetitions, after it on odd ones.
                order = ["plain", "sequence"] if rep % 2 == 0 else ["sequence", "plain"]
                for step in order:
                    if step == "plain":
                        gc.collect()
                        samples["plain"].append(timed(plain)[0])
                        continue
                    forget_process_state()
                    gc.collect()
                    samples["cold"].append(timed(resolve)[0])
                    gc.collect()
                    samples["warm"].append(timed(resolve)[0])
                    churned = churner.churn(CHURN_FRACTION)
                    gc.collect()
                    samples["churn"].append(timed(resolve)[0])
                    if settled:
                        # Warm once the ctag is a witness (the calendar unchanged since).
                        removed = settle(resolve, churner)
                        gc.collect()
                        samples["settled"].append(timed(resolve)[0])
                        # After it: a read without the ctag stores no ctag, and would unsettle it.
                        with override_settings(RESOLVER=server.resolver_settings(
                                RESOLUTION_BUDGET_SECONDS=600.0, CALDAV_CTAG=False)):
                            gc.collect()
                            samples["warm_ctag_off"].append(timed(resolve)[0])
                        churner.put_back(*removed)
            floor = statistics.median(samples["plain"])
            entry: dict[str, Any] = {"resources_of_kind": len(churner.hrefs), "churned_per_round": churned}
            for name, values in samples.items():
                if not values:
                    continue
                entry[name] = summary(values)
                if name != "plain":
                    entry[name]["ratio_to_plain"] = round(statistics.median(values) / floor, 3)
            result[kind] = entry
            print(f"  {kind}: " + json.dumps({k: v.get("median_ms") if isinstance(v, dict) else v
                                             for k, v in entry.items()}), file=sys.stderr, flush=True)

        # Memory: what the memo and the sync state hold after a cold read of both kinds.
        forget_process_state()
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for kind in ("task", "event"):
            services.calendar_from_settings().fetch(kind=Kind(kind), collection_ids=server.collection_ids or None)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        entries = len(readers().facts_budget)
        result["memory"] = {"memoised_resources": entries, "held_mib": round(held / 2**20, 2),
                            "mib_per_10000": round(held / 2**20 / entries * 10_000, 2) if entries else None}
    return result


def incremental_targets(sizes: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for n, result in sizes.items():
        for kind in ("task", "event"):
            for name, target in INCREMENTAL_TARGETS.items():
                if name != "cold" and int(n) not in INCREMENTAL_TARGET_SIZES:
                    continue
                ratio = result[kind][name]["ratio_to_plain"]
                found[f"{name} {kind} N={n}"] = {"ratio": ratio, "target": target, "met": ratio <= target}
        per = result["memory"]["mib_per_10000"]
        found[f"memory N={n}"] = {"mib_per_10000": per, "target": MEMORY_TARGET_MIB_PER_10K,
                                  "met": per is not None and per <= MEMORY_TARGET_MIB_PER_10K}
    return found


def render_incremental(report: dict[str, Any]) -> str:
    rows = []
    for n, result in report["sizes"].items():
        for kind in ("task", "event"):
            e = result[kind]
            rows.append([n, kind, e["resources_of_kind"], f"{e['plain']['median_ms']:.1f}",
                         *(f"{e[name]['median_ms']:.1f} ({e[name]['ratio_to_plain']:.2f}x)"
                           for name in ("cold", "warm", "churn"))])
    parts = [render_table(["N", "kind", "resources", "plain full read ms", "cold ms (x)", "warm ms (x)",
                           "churn 1% ms (x)"], rows)]
    settled = [[n, kind, *(f"{e[name]['median_ms']:.1f} ({e[name]['ratio_to_plain']:.2f}x)"
                           for name in ("settled", "warm_ctag_off"))]
               for n, result in report["sizes"].items() for kind in ("task", "event")
               for e in [result[kind]] if "settled" in e]
    if settled:
        parts.append(render_table(["N", "kind", "warm, ctag a witness ms (x)", "warm, ctag off ms (x)"], settled))
    parts.append(render_table(["N", "memoised resources", "held MiB", "MiB per 10,000"],
                              [[n, r["memory"]["memoised_resources"], r["memory"]["held_mib"],
                                r["memory"]["mib_per_10000"]] for n, r in report["sizes"].items()]))
    parts.append("calibration: before " + json.dumps(report["calibration_before"])
                 + ", after " + json.dumps(report["calibration_after"]))
    parts.append("targets: " + json.dumps(report["targets"], sort_keys=True))
    return "\n\n".join(parts)


def run_incremental(args: argparse.Namespace, sizes: list[int], workdir: Path) -> int:
    configure_django(workdir)
    report: dict[str, Any] = {
        "benchmark": "resolve-incremental",
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "server": args.server,
        "method": {"repeat": args.repeat, "door": "services.answer (judge off)",
                   "cold": "process state reset in-process (memo, sync tokens, client session, home)",
                   "churn_fraction": CHURN_FRACTION},
        "sizes": {},
    }
    report["calibration_before"] = calibration()
    for n in sizes:
        server = launch_radicale(n) if args.server == "radicale" else launch_peer(args.server, n)
        try:
            print(f"N={n}: seeded in {server.seed_seconds:.1f} s; measuring ...", file=sys.stderr, flush=True)
            report["sizes"][str(n)] = bench_incremental(server, repeat=args.repeat, settled=args.settled)
            report["sizes"][str(n)]["server"] = getattr(server, "version", "Radicale")
        finally:
            server.stop()
    report["calibration_after"] = calibration()
    report["targets"] = incremental_targets(report["sizes"])
    print(render_incremental(report))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = args.out or OUT_DIR / f"resolve-incremental-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, sort_keys=True, default=list), encoding="utf-8")
    print(f"\nwritten: {out.relative_to(Path.cwd()) if out.is_relative_to(Path.cwd()) else out.name}")
    return 0


# -- main -----------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="Comma-separated N values.")
    parser.add_argument("--repeat", type=int, default=7, help="Measured repetitions per scenario (>= 5).")
    parser.add_argument("--warmup", type=int, default=2, help="Unmeasured repetitions first.")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path.")
    parser.add_argument("--scoring-only", action="store_true",
                        help="Only the scoring benchmark (no Radicale, no Django requests).")
    parser.add_argument("--incremental", action="store_true",
                        help="Cold / warm / churn resolutions against the plain full read, and memo memory "
                             "(sizes default to 1,000, 5,000, 20,000).")
    parser.add_argument("--settled", action="store_true",
                        help="With --incremental: also warm once the CS:getctag is a witness (issue 39: "
                             "`settled`), and the same read with RESOLVER_CALDAV_CTAG off after it "
                             "(`warm_ctag_off`: a listing and a sync report, the warm read before).")
    parser.add_argument("--server", choices=("radicale", "davical", "cyrus", "sogo"), default="radicale",
                        help="With --incremental: a Radicale of the benchmark's own (default), or a peer "
                             "started by scripts/peers/ (the calendar is written into two new collections "
                             "of its home, item by item, and deleted after).")
    parser.add_argument("--event-time-range", choices=("on", "off"), default="on",
                        help="RESOLVER_EVENT_TIME_RANGE_FILTER for the run (the floor follows it).")
    args = parser.parse_args(argv)
    os.environ["RESOLVER_EVENT_TIME_RANGE_FILTER"] = "True" if args.event_time_range == "on" else "False"
    if args.incremental and args.sizes == parser.get_default("sizes"):
        args.sizes = "1000,5000,20000"
    sizes = [] if args.scoring_only else [int(s) for s in args.sizes.split(",") if s.strip()]

    workdir = Path(tempfile.mkdtemp(prefix="bench-resolve-"))
    try:
        return (run_incremental if args.incremental else run)(args, sizes, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, sizes: list[int], workdir: Path) -> int:
    configure_django(workdir)
    token = migrate_and_token()
    trips = RoundTrips()
    from tests.support.jev_contract_server import JevContractServer

    report: dict[str, Any] = {
        "benchmark": "resolve",
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "method": {"repeat": args.repeat, "warmup": args.warmup, "api_door": "django.test.Client (in-process)",
                   "event_time_range_filter": args.event_time_range},
        "sizes": {},
    }
    report["calibration_before"] = calibration()
    with JevContractServer() as jev:
        for n in sizes:
            server = launch_radicale(n)
            try:
                print(f"N={n}: seeded in {server.seed_seconds:.1f} s; measuring ...", file=sys.stderr, flush=True)
                result = bench_size(server, jev_url=jev.url, token=token, repeat=args.repeat,
                                    warmup=args.warmup, trips=trips, jev=jev)
                result["seed_seconds"] = round(server.seed_seconds, 2)
                report["sizes"][str(n)] = result
            finally:
                server.stop()
    print("scoring ...", file=sys.stderr, flush=True)
    report["scoring"] = bench_scoring(max(args.repeat, 20))
    report["calibration_after"] = calibration()
    report["targets"] = targets(report)

    print(render(report))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = args.out or OUT_DIR / f"resolve-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, sort_keys=True, default=list), encoding="utf-8")
    print(f"\nwritten: {out.relative_to(Path.cwd()) if out.is_relative_to(Path.cwd()) else out.name}")
    return 0


def targets(report: dict[str, Any]) -> dict[str, Any]:
    worst: dict[str, float] = {}
    worst_of_minimums: dict[str, float] = {}
    exact_jev_calls = set()
    for n, result in report["sizes"].items():
        ratios = [e["ratio_to_floor"] for e in result["scenarios"].values() if "ratio_to_floor" in e]
        worst[n] = max(ratios)
        worst_of_minimums[n] = max(e["ratio_of_minimums"] for e in result["scenarios"].values()
                                   if "ratio_of_minimums" in e)
        for name, entry in result["scenarios"].items():
            if name.startswith("exact"):
                exact_jev_calls.update(entry["jev_calls"])
    big = {n: r for n, r in worst.items() if int(n) >= 1000}
    return {
        "worst_ratio_by_size": worst,
        "worst_ratio_of_minimums_by_size": worst_of_minimums,
        "ratio_target": TARGET_RATIO,
        "ratio_met": all(r <= TARGET_RATIO for r in big.values()) if big else None,
        "scoring_worst_median_ms": report["scoring"]["worst_median_ms"],
        "scoring_target_ms": TARGET_SCORING_MS,
        # Issue targets: <= 5 ms at 5,000 live items (cold: a changed collection),
        # < 15 ms at 20,000 titles warm (the collection unchanged since the last request).
        "scoring_met": (report["scoring"]["worst_median_ms"].get("cold@5000", 0.0) <= TARGET_SCORING_5000_MS
                        and report["scoring"]["worst_median_ms"].get(f"warm@{SCORING_TITLES}", 0.0)
                        < TARGET_SCORING_MS),
        "exact_path_jev_calls": sorted(exact_jev_calls),
        "exact_path_met": exact_jev_calls == {0} if report["sizes"] else None,
    }


def render(report: dict[str, Any]) -> str:
    rows = []
    for n, result in report["sizes"].items():
        for name, e in result["scenarios"].items():
            rows.append([
                n, name, f"{e['median_ms']:.1f}", f"{e['min_ms']:.1f}", f"{e['client_cpu_ms_median']:.1f}",
                e.get("ratio_to_floor", ""), e.get("ratio_of_minimums", ""),
                e.get("status", f"{e.get('items_parsed')} items"),
                e.get("calendar_requests", ""), ",".join(map(str, e.get("http_round_trips", []))),
                ",".join(map(str, e.get("jev_calls", []))),
                e.get("calendar_ms_median", ""), e.get("matching_ms_median", ""), e.get("judgment_ms_median", ""),
            ])
    parts = [render_table(
        ["N", "scenario", "median ms", "min ms", "client CPU ms", "x floor", "x floor (min)", "status",
         "CalDAV req", "HTTP seen", "Jev calls",
         "calendar ms", "matching ms", "judgment ms"], rows)]
    mem_rows = [[n, *(f"{v}" for v in r["memory"].values())] for n, r in report["sizes"].items()]
    if mem_rows:
        first = next(iter(report["sizes"].values()))["memory"]
        parts.append(render_table(["N", *first.keys()], mem_rows))
    scoring = report["scoring"]
    for label, block in scoring.items():
        if not isinstance(block, dict) or "references" not in block:
            continue
        parts.append(render_table(
            [f"scoring, {label} ({block['distinct_titles']} distinct, vocabulary {block['vocabulary']})",
             "cold ms", "warm ms", "shared-word baseline ms", "matched"],
            [[text, f"{e['cold_median_ms']:.2f}", f"{e['warm_median_ms']:.2f}",
              f"{e['shared_word_baseline_median_ms']:.2f}", e["matched"]]
             for text, e in block["references"].items()]))
    parts.append("calibration: before " + json.dumps(report["calibration_before"])
                 + ", after " + json.dumps(report["calibration_after"]))
    parts.append("targets: " + json.dumps(report["targets"], sort_keys=True))
    return "\n\n".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())

"""Shared plumbing for the benchmarks: Django in-process, real Radicales, timing helpers.

Nothing here asserts: the benchmarks print figures and write JSON; the
targets are compared and reported, never enforced in the test suite.
"""
from __future__ import annotations

import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
OUT_DIR = REPO / "bench" / "out"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def configure_django(workdir: Path, *, database_url: str | None = None, cache_url: str | None = None) -> None:
    """Point the project settings at a throwaway database and cache, DEBUG off, then set up Django.

    DEBUG stays off as in production: with it on Django keeps every SQL query
    in memory, which would show up in the memory figures.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    os.environ["DEBUG"] = "False"
    os.environ["SECRET_KEY"] = "bench-" + os.urandom(24).hex()
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ["CACHE_URL"] = cache_url or "locmemcache://"
    os.environ.setdefault("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
    (workdir / "static").mkdir(parents=True, exist_ok=True)
    os.environ["STATIC_ROOT"] = str(workdir / "static")
    import django

    django.setup()
    # The request log and the resolution log still format every record (that
    # cost is part of a request) but write to the null device, not the table.
    devnull = open(os.devnull, "w")
    for name in ("resolver", "resolver.requests", "lifeproject.requests"):
        for handler in logging.getLogger(name).handlers:
            if isinstance(handler, logging.StreamHandler):
                handler.setStream(devnull)


def migrate_and_token() -> str:
    """Create the schema and an API user; returns the user's token key."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    call_command("migrate", verbosity=0, interactive=False)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    token, _ = Token.objects.get_or_create(user=user)
    return token.key


def pointed_settings(url: str, username: str, password: str, **extra: Any) -> dict[str, Any]:
    """The project's RESOLVER settings (from the environment), pointed at one bench server."""
    from django.conf import settings

    return {**getattr(settings, "RESOLVER", {}), "CALDAV_URL": url, "CALDAV_USERNAME": username,
            "CALDAV_PASSWORD": password, "CALDAV_TIMEOUT": 60.0, "EVENT_HORIZON_DAYS": 90, **extra}


@dataclass
class BenchRadicale:
    n: int
    root: Path
    url: str
    username: str
    password: str = field(repr=False)
    process: subprocess.Popen[bytes] = field(repr=False)
    seed_seconds: float = 0.0

    def resolver_settings(self, **extra: Any) -> dict[str, Any]:
        """The project's RESOLVER settings (from the environment), pointed at this Radicale."""
        return pointed_settings(self.url, self.username, self.password, **extra)

    # Every calendar of the account is the benchmark's: resolutions name none.
    collection_ids: tuple[str, ...] | None = None

    @property
    def home_url(self) -> str:
        return f"{self.url}{self.username}/"

    @property
    def origin(self) -> str:
        return "/".join(self.url.split("/", 3)[:3])

    def collection_urls(self) -> list[str]:
        from bench import corpus

        return [f"{self.home_url}{cid}/" for cid, _name, _share in corpus.COLLECTIONS]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


def launch_radicale(n: int, *, now: datetime | None = None) -> BenchRadicale:
    """A Radicale on loopback holding the benchmark calendar for `n`."""
    from bench import corpus
    from lifeproject import embedded_radicale

    root = Path(tempfile.mkdtemp(prefix=f"bench-radicale-{n}-"))
    instance, process = embedded_radicale.launch(root)
    server = BenchRadicale(n=n, root=root, url=instance.url, username=instance.username,
                           password=instance.password, process=process)
    try:
        started = time.perf_counter()
        corpus.upload(server.url, server.username, server.password,
                      corpus.build(n, now=now or datetime.now(timezone.utc)))
        server.seed_seconds = time.perf_counter() - started
    except BaseException:
        server.stop()
        raise
    return server


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return (time.perf_counter() - started) * 1000.0, result


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "min_ms": round(ordered[0], 3),
        "max_ms": round(ordered[-1], 3),
        "samples": len(ordered),
    }


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not ordered:
        return float("nan")
    rank = max(1, min(len(ordered), int(round(fraction * len(ordered) + 0.5))))
    return ordered[rank - 1]


def render_table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) if i else v.ljust(w)  # noqa: E731
                                            for i, (v, w) in enumerate(zip(values, widths))) + " |"
    out = [line(headers), "|" + "|".join(("-" * (w + 2)) for w in widths) + "|"]
    out += [line(r) for r in cells]
    return "\n".join(out)


# -- the other servers (DAViCal, Cyrus, SOGo), started by scripts/peers/ ----------

@dataclass
class BenchPeer:
    """The benchmark calendar on an already running peer, in two new collections of the account's home.

    The home also holds other calendars (the compatibility suite's, Cyrus's
    Default, SOGo's personal): the resolutions name the benchmark's two
    collections and the plain read lists the home and reads those two only.
    `stop()` deletes them.
    """

    name: str
    version: str
    url: str  # the account's URL: the calendar home on every peer here
    username: str
    password: str = field(repr=False)
    collection_ids: tuple[str, ...] = ()
    event_time_range: bool = True
    seed_seconds: float = 0.0

    @property
    def home_url(self) -> str:
        return self.url

    @property
    def origin(self) -> str:
        return "/".join(self.url.split("/", 3)[:3])

    def collection_urls(self) -> list[str]:
        return [f"{self.url}{cid}/" for cid in self.collection_ids]

    def resolver_settings(self, **extra: Any) -> dict[str, Any]:
        return pointed_settings(self.url, self.username, self.password,
                                EVENT_TIME_RANGE_FILTER=self.event_time_range, **extra)

    def stop(self) -> None:
        import requests

        for url in self.collection_urls():
            try:
                requests.delete(url, auth=(self.username, self.password), timeout=120)
            except requests.RequestException:
                pass


def split_items(calendar: str) -> list[tuple[str, str]]:
    """A whole VCALENDAR (corpus.build) as one resource per UID: (file name, text)."""
    head = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//lifeproject//bench//EN"]
    by_uid: dict[str, list[str]] = {}
    block: list[str] = []
    for line in calendar.split("\r\n"):
        if line.startswith("BEGIN:") and line != "BEGIN:VCALENDAR" and not block:
            block = [line]
        elif block:
            block.append(line)
            if line.startswith("END:") and line[4:] == block[0][6:]:
                uid = next(x[4:] for x in block if x.startswith("UID:"))
                by_uid.setdefault(uid, []).extend(block)
                block = []
    return [(f"{uid}.ics", "\r\n".join([*head, *lines, "END:VCALENDAR", ""])) for uid, lines in by_uid.items()]


def launch_peer(name: str, n: int, *, now: datetime | None = None, workers: int = 8) -> BenchPeer:
    """The benchmark calendar for `n` on a running peer (scripts/peers/<name>.sh), written item by item."""
    import concurrent.futures
    import threading

    import requests

    from bench import corpus
    from tests.compat.peers import external

    found = external(name)
    if isinstance(found, str):
        raise SystemExit(found)
    stamp = f"bench{os.getpid()}n{n}"
    server = BenchPeer(name=name, version=found.version, url=found.url, username=found.username,
                       password=found.password, event_time_range=found.event_time_range,
                       collection_ids=tuple(f"{stamp}{cid}" for cid, _name, _share in corpus.COLLECTIONS))
    local = threading.local()

    def session() -> requests.Session:
        if getattr(local, "session", None) is None:
            local.session = requests.Session()
            local.session.auth = (server.username, server.password)
        return local.session

    def put(url: str, text: str) -> None:
        for attempt in range(3):
            try:
                answer = session().put(url, data=text.encode("utf-8"), timeout=120,
                                       headers={"Content-Type": "text/calendar; charset=utf-8"})
            except requests.ConnectionError:  # SOGo drops an idle kept-alive connection
                local.session = None
                continue
            if answer.status_code in (200, 201, 204):
                return
        raise RuntimeError(f"PUT {url}: {answer.status_code} {answer.text[:200]}")

    started = time.perf_counter()
    try:
        built = corpus.build(n, now=now or datetime.now(timezone.utc))
        jobs = []
        for (cid, label, _share), target in zip(corpus.COLLECTIONS, server.collection_ids):
            url = f"{server.url}{target}/"
            body = ('<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" '
                    'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
                    f"<D:displayname>{label}</D:displayname></D:prop></D:set></C:mkcalendar>")
            answer = session().request("MKCALENDAR", url, data=body.encode("utf-8"), timeout=120,
                                       headers={"Content-Type": "application/xml; charset=utf-8"})
            if answer.status_code not in (200, 201):
                raise RuntimeError(f"MKCALENDAR {url}: {answer.status_code} {answer.text[:200]}")
            jobs += [(url + name, text) for name, text in split_items(built.calendars[cid])]
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            for future in [pool.submit(put, url, text) for url, text in jobs]:
                future.result()
    except BaseException:
        server.stop()
        raise
    server.seed_seconds = time.perf_counter() - started
    return server

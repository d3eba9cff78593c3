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
        from django.conf import settings

        values: dict[str, Any] = {
            **getattr(settings, "RESOLVER", {}),
            "CALDAV_URL": self.url,
            "CALDAV_USERNAME": self.username,
            "CALDAV_PASSWORD": self.password,
            "CALDAV_TIMEOUT": 60.0,
            "EVENT_HORIZON_DAYS": 90,
        }
        values.update(extra)
        return values

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

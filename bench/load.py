"""Load test of the production shape: gunicorn, PostgreSQL, Redis, a 1,000-item Radicale.

    .venv/bin/python bench/load.py                      # 600 requests, concurrency 8, 4 workers
    .venv/bin/python bench/load.py --requests 200 --embedded
    .venv/bin/python bench/load.py --items 5000 --before-requests 100   # memo off first, then on

Bounded by construction: a fixed number of requests, loopback only, a
deadline for the whole run, and every process it starts is stopped at the end.

1. A Radicale on loopback with the benchmark calendar for N = 1,000
   (bench/corpus.py): 1,000 open tasks and 1,000 live events.
2. A fresh PostgreSQL database and a Redis key prefix of its own (or, with
   --embedded or when they are not reachable, SQLite and the file cache).
3. `gunicorn lifeproject.wsgi` with the repository's gunicorn.conf.py and the
   documented production environment (DEBUG off, HTTPS settings on; the client
   sends X-Forwarded-Proto as the TLS-terminating load balancer would).
   The per-user rate limit is raised for the run: one user sends everything.
4. Each distinct request is sent once, alone: its envelope is the expected
   answer. Then the mix (exact, ambiguous, invalid references) is sent at the
   given concurrency; every envelope must equal the expected one, request_id
   aside (and the clarification link, which signs the request ID).

Prints throughput, latency percentiles and error counts; writes bench/out/load-<time>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402
from bench.harness import OUT_DIR, launch_radicale, percentile, render_table  # noqa: E402
from tests.production import servers  # noqa: E402

# (category, request body, weight). Invalid ones never reach CalDAV.
MIX: list[tuple[str, dict[str, Any], int]] = [
    ("exact", {"text": corpus.EXACT_TASK, "kind": "task"}, 3),
    ("exact", {"text": corpus.EXACT_EVENT, "kind": "event"}, 3),
    ("ambiguous", {"text": corpus.DUPLICATE_TASK, "kind": "task"}, 2),
    ("ambiguous", {"text": corpus.FUZZY_TASK, "kind": "task"}, 2),
    ("ambiguous", {"text": corpus.FUZZY_EVENT, "kind": "event"}, 2),
    ("invalid", {"text": "Weekly report", "kind": "meeting"}, 1),
    ("invalid", {"text": "", "kind": "task"}, 1),
    ("invalid", {"text": "x" * 501, "kind": "task"}, 1),
]

PRODUCTION_ENV = {
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "True",
    "SESSION_COOKIE_SECURE": "True",
    "CSRF_COOKIE_SECURE": "True",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "True",
    "SECURE_HSTS_PRELOAD": "True",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
    "RESOLVER_THROTTLE_RATE": "1000000/min",
}


def strip(envelope: dict[str, Any]) -> dict[str, Any]:
    """The envelope without what is unique to one request: the request ID, the
    clarification link (whose signed token carries that request ID), and when
    the calendar was read."""
    stripped = {key: value for key, value in envelope.items() if key != "request_id"}
    data = stripped.get("data")
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key != "read_at"}
        if "clarification_url" in data:
            data["clarification_url"] = "<signed link>"
        stripped["data"] = data
    return stripped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=600, help="Requests in the measured run (>= 500).")
    parser.add_argument("--concurrency", type=int, default=8, help="Client threads.")
    parser.add_argument("--workers", type=int, default=4, help="Gunicorn workers.")
    parser.add_argument("--items", type=int, default=1000, help="N for the benchmark calendar.")
    parser.add_argument("--embedded", action="store_true", help="SQLite and the file cache, not PostgreSQL/Redis.")
    parser.add_argument("--deadline", type=float, default=1800.0, help="Seconds the measured run may take.")
    parser.add_argument("--before-requests", type=int, default=0,
                        help="First, this many requests with the parse memo off (the full read of before).")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path.")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-load-"))
    report: dict[str, Any] = {
        "benchmark": "load",
        "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count()},
        "config": {"requests": args.requests, "concurrency": args.concurrency, "workers": args.workers,
                   "items": args.items},
    }
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        print(f"seeding a Radicale with N={args.items} ...", file=sys.stderr, flush=True)
        radicale = launch_radicale(args.items)
        stack.callback(radicale.stop)

        problem = None if args.embedded else (servers.postgres_problem() or servers.redis_problem())
        if args.embedded or problem:
            if problem:
                print(f"falling back to SQLite + file cache: {problem}", file=sys.stderr)
            database_url = f"sqlite:///{workdir / 'db.sqlite3'}"
            cache_url = f"filecache://{workdir / 'cache'}"
            report["config"]["backends"] = "sqlite+filecache"
        else:
            database_url = stack.enter_context(servers.fresh_database("lifeproject_load"))
            prefix = f"lp-load-{secrets.token_hex(4)}"
            stack.callback(servers.clear_redis_prefix, prefix)
            cache_url = servers.redis_cache_url(prefix)
            report["config"]["backends"] = "postgresql+redis"

        env = servers.base_env(
            DATABASE_URL=database_url, CACHE_URL=cache_url, CALDAV_URL=radicale.url,
            CALDAV_USERNAME=radicale.username, CALDAV_PASSWORD=radicale.password, CALDAV_TIMEOUT="60",
            STATIC_ROOT=str(workdir / "static"), **PRODUCTION_ENV,
        )
        migrate = servers.manage(env, "migrate", "--noinput", "-v", "0")
        if migrate.returncode != 0:
            raise SystemExit(migrate.stderr)
        token = servers.run_python(env, """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
user = get_user_model().objects.create_user("load-agent")
print(Token.objects.create(user=user).key)
""").strip().splitlines()[-1]
        # Before and after issue 12 in one run, on the same Radicale and
        # database: the memo off (every request a full read) and on (the
        # default: sync-collection, only changes parsed).
        configs = [("memo on (default)", {}, args.requests)]
        if args.before_requests:
            configs.insert(0, ("memo off (full read)", {"RESOLVER_PARSE_CACHE_ITEMS": "0"}, args.before_requests))
        report["runs"] = []
        for label, extra, count in configs:
            print(f"{label}: {count} requests ...", file=sys.stderr, flush=True)
            gunicorn = servers.start_gunicorn({**env, **extra}, workers=args.workers,
                                              log_dir=workdir / f"gunicorn-{len(report['runs'])}")
            try:
                figures = run(gunicorn.url, token, args, count)
            finally:
                gunicorn.stop()
            figures.update(label=label, server_log=summarise_log(gunicorn.stderr))
            report["runs"].append(figures)

    print(render(report))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = args.out or OUT_DIR / f"load-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    print(f"\nwritten: {out.name}")
    return 0 if all(r["unexpected_errors"] == 0 and r["mismatches"] == 0 for r in report["runs"]) else 1


def run(url: str, token: str, args: argparse.Namespace, count: int) -> dict[str, Any]:
    headers = {"Authorization": f"Token {token}", "X-Forwarded-Proto": "https"}
    local = threading.local()

    def session() -> requests.Session:
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.headers.update(headers)
        return local.session

    def send(body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        started = time.perf_counter()
        response = session().post(f"{url}/v1/resolve", json=body, timeout=120)
        elapsed = (time.perf_counter() - started) * 1000
        return response.status_code, response.json(), elapsed

    # The single-request answers, one at a time (each also warms a worker).
    expected: dict[int, tuple[int, dict[str, Any]]] = {}
    for index, (_category, body, _weight) in enumerate(MIX):
        status, envelope, _ms = send(body)
        expected[index] = (status, strip(envelope))

    rng = random.Random(5)
    plan = rng.choices(range(len(MIX)), weights=[w for _c, _b, w in MIX], k=count)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    deadline = time.monotonic() + args.deadline

    def one(index: int) -> None:
        category, body, _weight = MIX[index]
        record: dict[str, Any] = {"category": category}
        if time.monotonic() > deadline:
            record.update(error="deadline")
        else:
            try:
                status, envelope, ms = send(body)
                record.update(status=status, ms=ms, envelope_status=envelope.get("status"),
                              same=(status, strip(envelope)) == expected[index])
            except Exception as err:  # a transport failure is a result to count
                record.update(error=type(err).__name__)
        with lock:
            results.append(record)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        list(pool.map(one, plan))
    wall = time.perf_counter() - started

    answered = [r for r in results if "ms" in r]
    latencies = sorted(r["ms"] for r in answered)
    by_category: dict[str, Any] = {}
    for category in sorted({c for c, _b, _w in MIX}):
        values = sorted(r["ms"] for r in answered if r["category"] == category)
        by_category[category] = {
            "count": len(values),
            "p50_ms": round(percentile(values, 0.50), 1),
            "p95_ms": round(percentile(values, 0.95), 1),
            "p99_ms": round(percentile(values, 0.99), 1),
        }
    expected_status = {index: status for index, (status, _env) in expected.items()}
    unexpected = [r for r in results if "error" in r or r.get("status", 500) >= 500]
    return {
        "expected_http_status": {MIX[i][0] + f"#{i}": s for i, s in expected_status.items()},
        "sent": len(results),
        "wall_seconds": round(wall, 2),
        "throughput_rps": round(len(answered) / wall, 2),
        "p50_ms": round(percentile(latencies, 0.50), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
        "by_category": by_category,
        "unexpected_errors": len(unexpected),
        "mismatches": sum(1 for r in answered if not r["same"]),
        "http_statuses": {str(s): sum(1 for r in answered if r["status"] == s)
                          for s in sorted({r["status"] for r in answered})},
    }


def summarise_log(stderr: str) -> dict[str, Any]:
    """The server's own view, from its JSON request lines."""
    lines = []
    for text in stderr.splitlines():
        if text.startswith("{"):
            try:
                lines.append(json.loads(text))
            except ValueError:
                continue
    resolved = [line for line in lines if line.get("calendar_ms") is not None]

    def median(key: str) -> float | None:
        values = [line[key] for line in resolved if isinstance(line.get(key), (int, float))]
        return round(statistics.median(values), 1) if values else None

    return {
        "request_lines": len(lines),
        "resolutions": len(resolved),
        "calendar_ms_median": median("calendar_ms"),
        "matching_ms_median": median("matching_ms"),
        "duration_ms_median": median("duration_ms"),
        "calendar_requests": sorted({line.get("calendar_requests") for line in resolved} - {None}),
    }


def render(report: dict[str, Any]) -> str:
    runs = report["runs"]
    head = render_table(
        ["run", "backends", "items", "workers", "concurrency", "requests", "wall s", "req/s", "p50 ms", "p95 ms",
         "p99 ms", "unexpected errors", "mismatches"],
        [[r["label"], report["config"]["backends"], report["config"]["items"], report["config"]["workers"],
          report["config"]["concurrency"], r["sent"], r["wall_seconds"], r["throughput_rps"], r["p50_ms"],
          r["p95_ms"], r["p99_ms"], r["unexpected_errors"], r["mismatches"]] for r in runs])
    parts = [head]
    for r in runs:
        parts.append(r["label"] + "\n" + render_table(
            ["category", "count", "p50 ms", "p95 ms", "p99 ms"],
            [[c, v["count"], v["p50_ms"], v["p95_ms"], v["p99_ms"]] for c, v in r["by_category"].items()]))
        parts.append("HTTP statuses: " + json.dumps(r["http_statuses"]) + "\nserver log: " + json.dumps(r["server_log"]))
    return "\n\n".join(parts)


if __name__ == "__main__":
    raise SystemExit(main())

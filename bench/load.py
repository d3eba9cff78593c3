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

`--bursts` (issue 39: agents call tools in parallel) measures parallel calls on
the ASGI site, `gunicorn lifeproject.asgi:application` (uvicorn workers), with
per-user accounts: the agent's account is the 1,000-task one, and `--accounts`
more people each hold `--account-items` tasks (bench/accounts.py's calendars).
Two sites run side by side on the same Radicale and database, "before"
(RESOLVER_CALDAV_SHARED_READS and RESOLVER_CALDAV_CTAG off: every request
reads for itself) and "after" (the defaults), and every measurement alternates
between them, so a machine shared with other work loads both alike:

1. one account, `--workers 1` sites (bin/run's shape, one uvicorn worker): a
   call alone, then bursts of 4, 8 and 16 calls at once; the figure is the
   burst's wall time against the call alone (medians over `--rounds`);
2. the load: `--load-workers` (4) worker sites, bursts of `--burst` (8) calls
   at once, from one account (a person picked in turn) and from many (eight
   people), `--load-bursts` of each; throughput and p50/p95.

Every envelope must equal the one a call alone got (request_id, read_at and
the signed link aside).
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
    parser.add_argument("--bursts", action="store_true", help="Parallel calls, before and after issue 39.")
    parser.add_argument("--accounts", type=int, default=50, help="--bursts: people besides the agent.")
    parser.add_argument("--account-items", type=int, default=200, help="--bursts: tasks per person.")
    parser.add_argument("--rounds", type=int, default=5, help="--bursts: rounds of the one-account bursts.")
    parser.add_argument("--burst", type=int, default=8, help="--bursts: calls per burst in the load.")
    parser.add_argument("--load-bursts", type=int, default=30, help="--bursts: bursts of each pattern per site.")
    parser.add_argument("--load-workers", type=int, default=4, help="--bursts: workers of the load's sites.")
    args = parser.parse_args(argv)
    if args.bursts:
        return bursts_main(args)

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


# -- issue 39: parallel calls --------------------------------------------------------

BEFORE_39 = {"RESOLVER_CALDAV_SHARED_READS": "False", "RESOLVER_CALDAV_CTAG": "False"}
ASGI_APP = "lifeproject.asgi:application"

SEED_PEOPLE = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from resolver import accounts
spec = json.loads(open({spec!r}).read())
tokens = []
for name, url, username, password in spec:
    user = get_user_model().objects.create_user(name)
    accounts.add_account(user=user, url=url, username=username, password=password, label="Home")
    tokens.append(Token.objects.create(user=user).key)
print(json.dumps(tokens))
"""


def bursts_main(args: argparse.Namespace) -> int:
    from passlib.hash import sha512_crypt

    from bench.accounts import person_calendar

    workdir = Path(tempfile.mkdtemp(prefix="bench-bursts-"))
    report: dict[str, Any] = {
        "benchmark": "load --bursts", "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "load_average_start": os.getloadavg()},
        "config": {k: getattr(args, k) for k in ("items", "accounts", "account_items", "rounds", "burst",
                                                 "load_bursts", "load_workers")},
    }
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, workdir, True)
        print(f"seeding a Radicale with N={args.items} and {args.accounts} people ...", file=sys.stderr, flush=True)
        radicale = launch_radicale(args.items)
        stack.callback(radicale.stop)
        now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
        people = [(f"person{i:02d}", f"radicale password {i} {secrets.token_hex(6)}") for i in range(args.accounts)]
        with (radicale.root / "users").open("a", encoding="utf-8") as users:
            for name, password in people:
                users.write(f"{name}:{sha512_crypt.using(rounds=5000).hash(password)}\n")
        for index, (name, password) in enumerate(people):
            corpus.upload(radicale.url, name, password,
                          corpus.Corpus(calendars=person_calendar(index, args.account_items, now), counts={}))
        env = servers.base_env(
            DATABASE_URL=f"sqlite:///{workdir / 'db.sqlite3'}", CACHE_URL=f"filecache://{workdir / 'cache'}",
            CALDAV_URL=radicale.url, CALDAV_USERNAME=radicale.username, CALDAV_PASSWORD=radicale.password,
            CALDAV_TIMEOUT="60", STATIC_ROOT=str(workdir / "static"),
            RESOLVER_ACCOUNT_BACKEND="resolver.accounts.PerUserAccounts",
            RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES="True", RESOLVER_RESOLUTION_BUDGET_SECONDS="120",
            **PRODUCTION_ENV,
        )
        migrate = servers.manage(env, "migrate", "--noinput", "-v", "0")
        if migrate.returncode != 0:
            raise SystemExit(migrate.stderr)
        spec = [("load-agent", radicale.url, radicale.username, radicale.password)]
        spec += [(f"load-{name}", radicale.url, name, password) for name, password in people]
        spec_file = workdir / "people.json"
        spec_file.write_text(json.dumps(spec), encoding="utf-8")
        agent, *others = json.loads(servers.run_python(env, SEED_PEOPLE.format(spec=str(spec_file)),
                                                       timeout=600).strip().splitlines()[-1])

        def pair(workers: int, tag: str) -> dict[str, Any]:
            sites = {}
            for label, extra in (("before", BEFORE_39), ("after", {})):
                site = servers.start_gunicorn({**env, **extra}, workers=workers, app=ASGI_APP,
                                              log_dir=workdir / f"{tag}-{label}")
                stack.callback(site.stop)
                sites[label] = site
            return sites

        body = {"text": corpus.EXACT_TASK, "kind": "task"}
        print("one account, one worker: alone and bursts ...", file=sys.stderr, flush=True)
        sites = pair(1, "one")
        report["one_account"] = one_account_bursts(sites, agent, body, args.rounds)
        for site in sites.values():
            site.stop()
        print(f"load: {args.load_workers} workers, bursts of {args.burst} ...", file=sys.stderr, flush=True)
        sites = pair(args.load_workers, "load")
        report["load"] = load_bursts(sites, [agent, *others], body, args)
        report["machine"]["load_average_end"] = os.getloadavg()

    print(render_bursts(report))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = args.out or OUT_DIR / f"load-bursts-{datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    print(f"\nwritten: {out.name}")
    ok = all(r["errors"] == 0 and r["mismatches"] == 0 for r in report["load"].values())
    return 0 if ok and report["one_account"]["errors"] == 0 else 1


def _poster(url: str) -> Any:
    local = threading.local()

    def post(token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        started = time.perf_counter()
        response = local.session.post(f"{url}/v1/resolve", json=body, timeout=180,
                                      headers={"Authorization": f"Token {token}", "X-Forwarded-Proto": "https"})
        return response.status_code, response.json(), (time.perf_counter() - started) * 1000

    return post


def _burst(post: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[float, list[Any]]:
    """The calls sent at once (a barrier); the burst's wall time (ms) and each answer or error."""
    gate = threading.Barrier(len(calls))

    def one(call: tuple[str, dict[str, Any]]) -> Any:
        gate.wait()
        try:
            return post(*call)
        except Exception as err:  # counted
            return err

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        answers = list(pool.map(one, calls))
    return (time.perf_counter() - started) * 1000, answers


def one_account_bursts(sites: dict[str, Any], token: str, body: dict[str, Any], rounds: int) -> dict[str, Any]:
    posts = {label: _poster(site.url) for label, site in sites.items()}
    expected = {}
    for label, post in posts.items():
        for _ in range(3):  # the cold read, then warm ones
            status, envelope, _ms = post(token, body)
        expected[label] = (status, strip(envelope))
        time.sleep(2.2)  # past the 2 s racy window of a first-seen ctag
        post(token, body)
    sizes = (1, 4, 8, 16)
    samples: dict[str, dict[int, list[float]]] = {label: {n: [] for n in sizes} for label in posts}
    errors = mismatches = 0
    for rnd in range(rounds):
        for n in sizes:
            order = list(posts) if rnd % 2 == 0 else list(reversed(posts))
            for label in order:
                ms, answers = _burst(posts[label], [(token, body)] * n)
                samples[label][n].append(ms)
                for answer in answers:
                    if isinstance(answer, Exception) or answer[0] >= 500:
                        errors += 1
                    elif (answer[0], strip(answer[1])) != expected[label]:
                        mismatches += 1
    result: dict[str, Any] = {"errors": errors, "mismatches": mismatches, "samples_ms": samples}
    for label in posts:
        alone = statistics.median(samples[label][1])
        result[label] = {n: {"median_ms": round(statistics.median(samples[label][n]), 1),
                             "x_alone": round(statistics.median(samples[label][n]) / alone, 2)} for n in sizes}
    return result


def load_bursts(sites: dict[str, Any], tokens: list[str], body: dict[str, Any],
                args: argparse.Namespace) -> dict[str, Any]:
    posts = {label: _poster(site.url) for label, site in sites.items()}
    expected: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for label, post in posts.items():
        # Each person's answer alone; also each worker's first read of them (several workers: a few passes).
        for token in tokens:
            status, envelope, _ms = post(token, body)
            expected[(label, token)] = (status, strip(envelope))
    rng = random.Random(39)
    plans = {"one account": [[tokens[i % len(tokens)]] * args.burst for i in range(args.load_bursts)],
             "many accounts": [rng.sample(tokens, args.burst) for _ in range(args.load_bursts)]}
    figures: dict[str, Any] = {}
    for pattern, plan in plans.items():
        for label in posts:
            figures[f"{pattern}, {label}"] = {"latencies": [], "wall": 0.0, "errors": 0, "mismatches": 0}
        for i, burst in enumerate(plan):
            order = list(posts) if i % 2 == 0 else list(reversed(posts))
            for label in order:
                entry = figures[f"{pattern}, {label}"]
                ms, answers = _burst(posts[label], [(token, body) for token in burst])
                entry["wall"] += ms / 1000
                for token, answer in zip(burst, answers):
                    if isinstance(answer, Exception) or answer[0] >= 500:
                        entry["errors"] += 1
                        continue
                    entry["latencies"].append(answer[2])
                    if (answer[0], strip(answer[1])) != expected[(label, token)]:
                        entry["mismatches"] += 1
    out = {}
    for key, entry in figures.items():
        lat = sorted(entry["latencies"])
        out[key] = {"calls": len(lat) + entry["errors"], "throughput_rps": round(len(lat) / entry["wall"], 2),
                    "p50_ms": round(percentile(lat, 0.50), 1), "p95_ms": round(percentile(lat, 0.95), 1),
                    "errors": entry["errors"], "mismatches": entry["mismatches"]}
    return out


def render_bursts(report: dict[str, Any]) -> str:
    one = report["one_account"]
    rows = []
    for label in ("before", "after"):
        rows.append([label] + [f"{one[label][n]['median_ms']} ms ({one[label][n]['x_alone']}x)" for n in (1, 4, 8, 16)])
    head = render_table(["one account, 1 worker", "alone", "4 at once", "8 at once", "16 at once"], rows)
    load = render_table(["load", "calls", "req/s", "p50 ms", "p95 ms", "errors", "differing envelopes"],
                        [[k, v["calls"], v["throughput_rps"], v["p50_ms"], v["p95_ms"], v["errors"], v["mismatches"]]
                         for k, v in report["load"].items()])
    return f"{head}\n(errors {one['errors']}, differing envelopes {one['mismatches']})\n\n{load}\n" \
           f"load average: {report['machine']['load_average_start']} -> {report['machine']['load_average_end']}"


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

"""The shell door against a hand-written script, each a fresh process.

    .venv/bin/python bench/command.py                     # N = 1,000 and 5,000 tasks, 7 rounds
    .venv/bin/python bench/command.py --sizes 1000 --repeat 3
    .venv/bin/python bench/command.py --importtime        # also: the command's slowest imports
    .venv/bin/python bench/command.py --baseline DIR      # also: DIR's manage.py (an older checkout), same rounds

`manage.py resolve` starts a new Python process on every call, so it always
pays the interpreter, Django's start-up, our imports and a cold calendar read.
What a person would otherwise run is a short script: `requests` + `lxml` +
`icalendar`, one PROPFIND for the calendars, one calendar-query REPORT per
calendar, every item parsed, the open task whose title matches picked. Both
run here as fresh processes against the same Radicale on loopback (one per N,
seeded by bench/corpus.py: N open tasks, N // 3 closed, N live events), with
the same exact-title reference, in rounds where every variant runs once in a
rotating order; the medians and their ratio are reported.

Also measured, in the same rounds, so the shares can be read off:
- `python -c pass`: the interpreter alone;
- Django's start-up: `django.setup()` with the project's settings and
  nothing else, what every `manage.py` command pays before its own imports;
- the command's start-up: `manage.py resolve` with a request that fails
  validation (an empty reference): Django, the command's imports and its
  checks, but no calendar read.

With `--baseline DIR` (a checkout of an earlier commit, e.g. made with
`git archive COMMIT | tar -x -C DIR`), that tree's `manage.py resolve` and
its start-up run in the same rounds too: before and after, under the same load.

Nothing is asserted; a table goes to stdout and the figures to
bench/out/command-<time>.json. The machine may be shared: the ratios are
measured in the same run, interleaved, and the load average is printed.
"""
from __future__ import annotations

# Only the standard library at the top: `--script` is the hand-written
# script's fresh process and must import what that script would, no more.
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
TARGET = 1.5


# -- the hand-written script (runs as `bench/command.py --script`) ---------------

def script(url: str, username: str, title: str) -> int:
    """The careful hand-written script: one PROPFIND, one REPORT per calendar, parse all, pick by title."""
    import icalendar
    import requests
    from lxml import etree

    password = os.environ["BENCH_CALDAV_PASSWORD"]
    session = requests.Session()
    session.auth = (username, password)
    dav, cal = "{DAV:}", "{urn:ietf:params:xml:ns:caldav}"
    home = f"{url.rstrip('/')}/{username}/"
    listing = (b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop>'
               b"</D:propfind>")
    response = session.request("PROPFIND", home, data=listing, timeout=120,
                               headers={"Depth": "1", "Content-Type": "application/xml"})
    response.raise_for_status()
    calendars = [node.findtext(f"{dav}href") for node in etree.fromstring(response.content).iterfind(f"{dav}response")
                 if node.find(f".//{cal}calendar") is not None]
    query = (b'<?xml version="1.0" encoding="utf-8"?><C:calendar-query xmlns:D="DAV:" '
             b'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop>'
             b'<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"/></C:comp-filter>'
             b"</C:filter></C:calendar-query>")
    wanted = title.strip().casefold()
    found = []
    for href in calendars:
        response = session.request("REPORT", url.rstrip("/") + href, data=query, timeout=120,
                                   headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
        response.raise_for_status()
        for node in etree.fromstring(response.content).iterfind(f"{dav}response"):
            data = node.findtext(f".//{cal}calendar-data")
            if not data:
                continue
            for todo in icalendar.Calendar.from_ical(data).walk("VTODO"):
                status = str(todo.get("STATUS", "")).upper()
                if status in ("COMPLETED", "CANCELLED") or todo.get("COMPLETED") is not None:
                    continue
                if str(todo.get("SUMMARY", "")).strip().casefold() == wanted:
                    found.append({"href": node.findtext(f"{dav}href"), "etag": node.findtext(f".//{dav}getetag"),
                                  "uid": str(todo.get("UID"))})
    print(json.dumps(found))
    return 0 if len(found) == 1 else 3


# -- the benchmark -------------------------------------------------------------------

def _environment(server, workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "lifeproject.settings",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + os.urandom(24).hex(),
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "CACHE_URL": "locmemcache://",
        "STATIC_ROOT": str(workdir / "static"),
        "CALDAV_URL": server.url,
        "CALDAV_USERNAME": server.username,
        "CALDAV_PASSWORD": server.password,
        "CALDAV_TIMEOUT": "60",
        # The default 20 s budget is for people; on a loaded, shared machine the
        # bench measures the work and leaves the deadline out of it.
        "RESOLVER_RESOLUTION_BUDGET_SECONDS": "120",
        "RESOLVER_JUDGE": "off",
        "LOG_LEVEL": "WARNING",
        "BENCH_CALDAV_PASSWORD": server.password,
        "PYTHONDONTWRITEBYTECODE": "",
    })
    return env


def _variants(server, title: str, baseline: Path | None = None) -> dict[str, list[str]]:
    manage = str(REPO / "manage.py")
    extra = {}
    if baseline is not None:
        before = str(baseline / "manage.py")
        extra = {"baseline_command_startup": [PYTHON, before, "resolve", "--text", " ", "--kind", "task", "--json"],
                 "baseline_command": [PYTHON, before, "resolve", "--text", title, "--kind", "task", "--json"]}
    return {**extra,
        "python": [PYTHON, "-c", "pass"],
        "django_setup": [PYTHON, "-c", "import django; django.setup()"],
        "command_startup": [PYTHON, manage, "resolve", "--text", " ", "--kind", "task", "--json"],
        "command": [PYTHON, manage, "resolve", "--text", title, "--kind", "task", "--json"],
        "script": [PYTHON, str(Path(__file__).resolve()), "--script", server.url, server.username, title],
    }


def _run(argv: list[str], env: dict[str, str], expect: set[int]) -> tuple[float, str]:
    started = time.perf_counter()
    # Each from its own tree: a baseline's manage.py imports that tree's code.
    done = subprocess.run(argv, env=env, cwd=Path(argv[1]).parent if argv[1].endswith(".py") else REPO, capture_output=True, text=True, timeout=600)
    elapsed = (time.perf_counter() - started) * 1000.0
    if done.returncode not in expect:
        raise RuntimeError(f"{argv[1:4]} exited {done.returncode}: {done.stderr[-2000:]}")
    return elapsed, done.stdout


def _check_answers(server, env: dict[str, str], variants: dict[str, list[str]]) -> dict[str, object]:
    """Both find the same one item: the comparison is between equals.

    Each runs once before: Radicale's first read of a freshly seeded
    collection, and its first sync-collection (it then builds the state that
    sync tokens name), are much slower than any later one and are paid once
    per server, not per call. The commands' warm-ups get a longer budget.
    """
    _run(variants["script"], env, {0})
    patient = dict(env, RESOLVER_RESOLUTION_BUDGET_SECONDS="900", CALDAV_TIMEOUT="900")
    _run(variants["command"], patient, {0})
    if "baseline_command" in variants:
        # The two trees may read differently (a sync-collection or a calendar-query): each warms its own.
        _run(variants["baseline_command"], patient, {0})
        _, out = _run(variants["baseline_command"], env, {0})
        if json.loads(out)["data"]["href"] != json.loads(_run(variants["command"], env, {0})[1])["data"]["href"]:
            raise RuntimeError("the baseline command resolves to another item")
    _, out = _run(variants["script"], env, {0})
    command = json.loads(_run(variants["command"], env, {0})[1])["data"]
    [script_found] = json.loads(out)
    if (command["href"], command["etag"]) != (script_found["href"], script_found["etag"]):
        raise RuntimeError(f"the command and the script disagree: {command['href']} vs {script_found['href']}")
    return {"href": command["href"], "method": command["method"]}


def measure(n: int, *, repeat: int, workdir: Path, baseline: Path | None = None) -> dict[str, object]:
    from bench import corpus
    from bench.harness import launch_radicale

    server = launch_radicale(n)
    try:
        env = _environment(server, workdir)
        variants = _variants(server, corpus.EXACT_TASK, baseline)
        answer = _check_answers(server, env, variants)
        names = list(variants)
        samples: dict[str, list[float]] = {name: [] for name in names}
        expect = {"command_startup": {2}, "baseline_command_startup": {2}}
        for round_ in range(repeat):
            order = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in order:
                elapsed, _ = _run(variants[name], env, expect.get(name, {0}))
                samples[name].append(elapsed)
        medians = {name: round(statistics.median(values), 1) for name, values in samples.items()}
        baseline_figures = {}
        if baseline is not None:
            baseline_figures = {"baseline_ratio": round(medians["baseline_command"] / medians["script"], 2)}
        return {**baseline_figures,
            "n": n, "answer": answer, "seed_seconds": round(server.seed_seconds, 1),
            "samples_ms": {name: [round(v, 1) for v in values] for name, values in samples.items()},
            "median_ms": medians,
            "ratio": round(medians["command"] / medians["script"], 2),
            "django_setup_share": round((medians["django_setup"] - medians["python"]) / medians["command"], 2),
            "command_startup_share": round(medians["command_startup"] / medians["command"], 2),
        }
    finally:
        server.stop()


def importtime(workdir: Path, top: int = 25) -> list[tuple[str, int]]:
    """The command's imports by cumulative microseconds (a request that fails validation: no server)."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DEBUG="False",
               SECRET_KEY="bench-" + os.urandom(24).hex(),
               DATABASE_URL=f"sqlite:///{workdir / 'bench.sqlite3'}", CACHE_URL="locmemcache://",
               CALDAV_URL="http://127.0.0.1:9/")
    done = subprocess.run([PYTHON, "-X", "importtime", str(REPO / "manage.py"), "resolve", "--text", " ",
                           "--kind", "task"], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            _, cumulative, name = line.split("|")
            rows.append((name.rstrip(), int(cumulative)))
    return sorted(rows, key=lambda row: -row[1])[:top]


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--script":
        return script(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--baseline", type=Path, help="a checkout of an earlier commit to compare with")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    workdir = Path(tempfile.mkdtemp(prefix="bench-command-"))
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DEBUG="False",
               SECRET_KEY="bench-" + os.urandom(24).hex(),
               DATABASE_URL=f"sqlite:///{workdir / 'bench.sqlite3'}", CACHE_URL="locmemcache://")
    subprocess.run([PYTHON, str(REPO / "manage.py"), "migrate", "--verbosity", "0"], env=env, cwd=REPO, check=True)
    load_before = os.getloadavg()
    baseline = args.baseline.resolve() if args.baseline else None
    results = []
    for n in args.sizes:
        results.append(measure(n, repeat=args.repeat, workdir=workdir, baseline=baseline))
        print(json.dumps({"n": n, "median_ms": results[-1]["median_ms"], "ratio": results[-1]["ratio"]}), flush=True)
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} ({os.cpu_count()} cores)")
    header = "| N tasks | python | django.setup() | command start-up | command | script | command / script |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for r in results:
        m = r["median_ms"]
        verdict = "met" if r["ratio"] <= TARGET else f"missed by {r['ratio'] - TARGET:.2f}x"
        print(f"| {r['n']:,} | {m['python']:.0f} ms | {m['django_setup']:.0f} ms | {m['command_startup']:.0f} ms "
              f"| {m['command']:.0f} ms | {m['script']:.0f} ms | {r['ratio']:.2f}x ({verdict}, target <= {TARGET}x) |")
    for r in results:
        if "baseline_ratio" in r:
            m = r["median_ms"]
            print(f"baseline tree, N = {r['n']:,}: start-up {m['baseline_command_startup']:.0f} ms, "
                  f"command {m['baseline_command']:.0f} ms, {r['baseline_ratio']:.2f}x the script")
    output = {"results": results, "load_before": load_before, "load_after": load_after,
              "python": sys.version.split()[0], "cores": os.cpu_count()}
    if args.importtime:
        output["importtime"] = importtime(workdir)
        print("\nslowest imports of `manage.py resolve` (cumulative):")
        for name, micros in output["importtime"]:
            print(f"  {micros / 1000:8.1f} ms  {name}")
    out_dir = REPO / "bench" / "out"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"command-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(output, indent=2))
    print(f"figures: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

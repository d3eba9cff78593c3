"""Per-user accounts at scale: 50 people, each with a CalDAV account of 1,000 tasks, in one process.

    .venv/bin/python bench/accounts.py [--accounts 50] [--items 1000] [--rounds 5] [--out FILE]

One Radicale on loopback, one server user per person (600 tasks in `work`,
400 in `personal`, titles drawn per person with a seed of their own, plus the
exact anchor title), one Django user per person with their account connected
through `resolver.accounts.add_account` (checked live, password sealed), and
RESOLVER["ACCOUNT_BACKEND"] = PerUserAccounts. Then, in this one process:

- cold: every person resolves the anchor title once (their reader's first read;
  person 0 is the process's warm-up and is not counted);
- warm: `--rounds` rounds over all people in turn (each reader's state reused
  while 49 others are used in between);
- baseline, in the same run: what a person would otherwise run, a plain full
  read of their own account (PROPFIND on the home, one REPORT per collection,
  every resource parsed), for each person, interleaved with the cold pass (the
  order alternating) and again with the first warm round;
- memory: resident set size before the first resolution, after the cold pass
  and after the warm rounds, and what the readers hold (memoised resources,
  under the one process-wide RESOLVER_PARSE_CACHE_ITEMS bound).

Every resolution must come back `ok` with the person's own UID prefix; the
script stops otherwise. Figures are medians; the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import corpus  # noqa: E402
from bench.harness import configure_django, render_table, summary  # noqa: E402

PAGE = 4096


def rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def person_calendar(index: int, items: int, now: datetime) -> dict[str, str]:
    rng = random.Random(1000 + index)
    parts: dict[str, list[str]] = {"work": [], "personal": []}
    for i in range(items):
        title = corpus.EXACT_TASK if i == 0 else corpus._task_title(rng)
        due = now + timedelta(days=rng.randint(1, 120)) if rng.random() < 0.6 else None
        target = "work" if i < items * 0.6 else "personal"
        parts[target] += corpus._todo(f"p{index:02d}-task-{i}", title, status="NEEDS-ACTION", due=due)
    return {cid: "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//lifeproject//bench//EN", *lines,
                              "END:VCALENDAR", ""]) for cid, lines in parts.items()}


def plain_read(url: str, username: str, password: str) -> Callable[[], int]:
    from bench.resolve import make_plain_read

    class Server:  # the fields make_plain_read reads
        pass

    server = Server()
    server.url, server.username, server.password = url, username, password  # type: ignore[attr-defined]
    return make_plain_read(server, "task")  # type: ignore[arg-type]


def resolve_as(user: Any, text: str) -> Any:
    """One resolution for `user` through the services, whichever door contract they offer."""
    from resolver import services

    return services.answer({"text": text, "kind": "task"}, caller=services.Caller(door="bench", user=user)).outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accounts", type=int, default=50)
    parser.add_argument("--items", type=int, default=1000, help="Open tasks per account.")
    parser.add_argument("--rounds", type=int, default=5, help="Warm rounds over all accounts.")
    parser.add_argument("--out", type=Path, default=None, help="JSON output path.")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="bench-accounts-"))
    radicale = None
    try:
        configure_django(workdir)
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from passlib.hash import sha512_crypt

        from lifeproject import embedded_radicale
        from resolver import accounts, services  # noqa: F401 - imported before the long seeding
        from resolver.calendars.caldav import readers
        from resolver.conf import resolver_settings
        from resolver.domain.pipeline import Status

        call_command("migrate", verbosity=0, interactive=False)
        root = workdir / "radicale"
        instance, radicale = embedded_radicale.launch(root)
        people = [(f"person{i:02d}", f"radicale password {i} {os.urandom(6).hex()}") for i in range(args.accounts)]
        with (root / "users").open("a", encoding="utf-8") as users:
            for name, password in people:
                users.write(f"{name}:{sha512_crypt.using(rounds=5000).hash(password)}\n")
        settings.RESOLVER = {**settings.RESOLVER, "CALDAV_URL": instance.url, "CALDAV_TIMEOUT": 60.0,
                             "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
                             "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": True, "RESOLUTION_BUDGET_SECONDS": 120.0}
        resolver_settings.reload()
        now = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
        started = time.perf_counter()
        users = []
        for index, (name, password) in enumerate(people):
            corpus.upload(instance.url, name, password,
                          corpus.Corpus(calendars=person_calendar(index, args.items, now), counts={}))
            user = get_user_model().objects.create_user(name)
            accounts.add_account(user=user, url=instance.url, username=name, password=password, label="Home")
            users.append(user)
        seeded = time.perf_counter() - started
        print(f"{args.accounts} accounts x {args.items} tasks seeded and connected in {seeded:.0f} s",
              file=sys.stderr, flush=True)

        def check(outcome: Any, index: int) -> None:
            if outcome.status is not Status.OK or not outcome.item.uid.startswith(f"p{index:02d}-"):
                raise SystemExit(f"person {index}: {outcome.status} {getattr(outcome.item, 'uid', None)}")

        reads = [plain_read(instance.url, name, password) for name, password in people]

        def plain(index: int, into: list[float]) -> None:
            started = time.perf_counter()
            count = reads[index]()
            into.append((time.perf_counter() - started) * 1000)
            if count != args.items:
                raise SystemExit(f"person {index}: the plain read parsed {count} tasks")

        def resolved(index: int, into: list[float]) -> None:
            started = time.perf_counter()
            outcome = resolve_as(users[index], corpus.EXACT_TASK)
            into.append((time.perf_counter() - started) * 1000)
            check(outcome, index)

        # The first resolution of the process pays its imports: person 0 is the warm-up, not measured cold.
        resolved(0, [])
        rss_before = rss_mib()
        cold, plain_cold = [], []
        for index in range(1, len(users)):
            # Interleaved, the order alternating, so that both see the same load on a shared machine.
            steps = (lambda: plain(index, plain_cold), lambda: resolved(index, cold))
            for step in (steps if index % 2 else steps[::-1]):
                step()
        rss_cold = rss_mib()
        warm, plain_warm = [], []
        for round_ in range(args.rounds):
            for index in range(len(users)):
                resolved(index, warm)
                if round_ == 0:
                    plain(index, plain_warm)
        rss_warm = rss_mib()
        registry = readers()
        memo_items = len(registry.facts_budget)
        report = {
            "accounts": args.accounts, "tasks_per_account": args.items, "warm_rounds": args.rounds,
            "readers": len(registry), "memoised_resources": memo_items,
            "parse_cache_items_bound": int(resolver_settings.PARSE_CACHE_ITEMS),
            "cold": summary(cold), "warm": summary(warm),
            "plain_full_read_cold_phase": summary(plain_cold), "plain_full_read_warm_phase": summary(plain_warm),
            "warm_over_plain": round(statistics.median(warm) / statistics.median(plain_warm), 3),
            "cold_over_plain": round(statistics.median(cold) / statistics.median(plain_cold), 3),
            "rss_mib": {"before": round(rss_before, 1), "after_cold": round(rss_cold, 1),
                        "after_warm": round(rss_warm, 1)},
            "rss_mib_per_account": round((rss_warm - rss_before) / args.accounts, 2),
        }
        print(render_table(["measure", "median ms", "min ms", "max ms", "samples"], [
            [name, report[key]["median_ms"], report[key]["min_ms"], report[key]["max_ms"], report[key]["samples"]]
            for name, key in (("resolver, cold (first read of each account)", "cold"),
                              ("plain full read, interleaved with the cold pass", "plain_full_read_cold_phase"),
                              ("resolver, warm (round-robin over all accounts)", "warm"),
                              ("plain full read, during the first warm round", "plain_full_read_warm_phase"))]))
        print(f"\nwarm / plain: {report['warm_over_plain']}   cold / plain: {report['cold_over_plain']}")
        print(f"RSS MiB: before {report['rss_mib']['before']}, after cold {report['rss_mib']['after_cold']}, "
              f"after warm {report['rss_mib']['after_warm']}; {report['rss_mib_per_account']} MiB per account; "
              f"{report['readers']} readers, {memo_items} memoised resources "
              f"(bound {report['parse_cache_items_bound']})")
        if args.out:
            args.out.write_text(json.dumps(report, indent=2))
        return 0
    finally:
        if radicale is not None and radicale.poll() is None:
            radicale.terminate()
            radicale.wait(timeout=15)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

"""CPU cost of reading one hostile resource (issue: bounded work per resource); huge titles.

    .venv/bin/python -m bench.hostile [--reader PATH_TO_ICAL_PY] [--timeout 120]
    .venv/bin/python -m bench.hostile --titles [--tree CHECKOUT] [--title-mb 1.0]
    .venv/bin/python -m bench.hostile --worst [--title-chars 500] [--response-mib 8]

Each resource of tests/support/hostile_ics.py is read with `ical.live_items`
in a child process (a pathological one may not finish), against a fixed now
and the default 90-day window; the figure is the child's CPU time. `--reader`
loads another version of resolver/calendars/ical.py (say, one from
`git show OLD:resolver/calendars/ical.py`) to measure before and after in one run.

`--titles` (issue 38): three to-dos whose SUMMARY is about a megabyte each,
beside a few ordinary ones, read with `ical.live_items` and resolved with a
non-exact reference through the pipeline with the semantic signal on (the
default encoder, no glosses, no judge), the read and the resolution under one
default deadline (20 s; the read looks at it every 64 resources, as the
CalDAV reader does; the XML and the HTTP exchange are not measured). A
fresh child process per run prints the read's and the resolution's wall time
against the budget, the child's peak RSS, the outcome, and the JSON size of a
clarification envelope listing 20 such items. `--tree` runs it against another
checkout (`git archive OLD | tar -x -C DIR`): before and after.

`--worst`: the calendar that chose the bounds. One CalDAV answer may be
RESOLVER_MAX_RESPONSE_BYTES (8 MiB); it is filled with to-dos whose titles are
`--title-chars` characters of distinct short words (the most words, hence the
most memory and matching, per byte), each resource counted with its share of
the multistatus XML. They are parsed and resolved as above; the figures are
the same. Wall times are one run each on a shared machine: read them as
orders of magnitude, not medians.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import sys
import time
from datetime import datetime, timezone

from tests.support.hostile_ics import HOSTILE

NOW = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
_ORDINARY = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VEVENT\r\nUID:o\r\nSUMMARY:Weekly\r\n"
             "DTSTART:20260101T100000Z\r\nRRULE:FREQ=WEEKLY\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def _load(reader: str | None):
    if reader is None:
        from resolver.calendars import ical
        return ical
    spec = importlib.util.spec_from_file_location("ical_under_test", reader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _child(reader: str | None, name: str, queue) -> None:
    try:
        ical = _load(reader)
        from resolver.domain.items import Kind
        window = ical.window_from(NOW, 90)
        # Warm up the parser and the caches on an ordinary resource first.
        ical.live_items(_ORDINARY, kind=Kind.EVENT, collection_path="/u/c/",
                        etag='"e"', window=window)
        text = HOSTILE[name][0](NOW)
        started = time.process_time()
        try:
            found = ical.live_items(text, kind=Kind.EVENT, collection_path="/u/c/", etag='"e"', window=window)
            outcome = f"{len(found)} live"
        except ical.UnparseableResource as err:
            outcome = f"skipped: {err.reason}"
        queue.put((round((time.process_time() - started) * 1000, 1), outcome))
    except BaseException as err:  # a crash is a result too, never a hang of the parent
        queue.put((None, f"crashed: {type(err).__name__}: {err}"))


_TODO = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:bench\r\nBEGIN:VTODO\r\nUID:{uid}\r\n"
         "SUMMARY:{title}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
# One member of a REPORT's multistatus, around its calendar-data (what the response cap counts).
_MEMBER = ('<D:response><D:href>/calendars/u/c/{uid}.ics</D:href><D:propstat><D:prop>'
           '<D:getetag>"{uid}-0123456789abcdef"</D:getetag><C:calendar-data>{data}</C:calendar-data></D:prop>'
           '<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>')
_ORDINARY_TITLES = ("Quarterly budget review", "Renew passport", "Buy groceries", "Call the plumber",
                    "Draft portfolio outline")
REFERENCE = "budget review for the quarter"


def _huge_title(n: int, chars: int) -> str:
    """About `chars` characters of ordinary words, different for each `n` (the encoder memoises by title)."""
    words = ("meeting notes agenda budget review quarterly planning offsite travel expenses report "
             "invoice contract renewal supplier catalogue translation").split()
    parts, size, k = [f"Hostile title {n}"], 0, n
    while size < chars:
        k = (k * 1103515245 + 12345) % 2**31
        word = words[k % len(words)]
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)[:chars]


def _word(k: int) -> str:
    """A distinct short word per k: aa, ab, ..., zz, aaa, ... (distinct words are the most memory)."""
    letters = []
    k += 26
    while k:
        k, r = divmod(k, 26)
        letters.append(chr(97 + r))
    return "".join(reversed(letters))


def _peak_mib() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _resolve_and_print(texts: list[str], label: str) -> None:
    """Parse, resolve REFERENCE with the semantic signal under the default deadline, print the figures."""
    from resolver.calendars import ical
    from resolver.calendars.memory import MemoryCalendar
    from resolver.domain import deadline, semantic
    from resolver.domain.items import Kind
    from resolver.domain.pipeline import resolve
    from resolver.domain.ports import NoThresholds
    from resolver.domain.relevance import DEFAULT_MODEL, RelevanceModel
    from resolver.domain.requests import parse_request
    from resolver.judges.disabled import DisabledJudge

    ranker = RelevanceModel.load(DEFAULT_MODEL)
    encoder = semantic.MultilingualUSE()
    encoder.encode(["warm up"])  # the model's load is not the resolution's
    window = ical.window_from(NOW, 90)
    baseline = _peak_mib()
    items = []
    read_s = resolve_s = 0.0
    # One deadline over the read and the resolution, as a service opens it; the read looks at it
    # every 64 resources, as the CalDAV reader does.
    started = time.perf_counter()
    cpu = time.process_time()
    try:
        with deadline.running(deadline.DEFAULT_SECONDS):
            for n, text in enumerate(texts):
                if n % 64 == 0 and deadline.expired():
                    raise TimeoutError(f"deadline passed while reading, after {n} resources")
                items.extend(ical.live_items(text, kind=Kind.TASK, collection_path="/u/c/", etag=f'"{n}"',
                                             window=window, href=f"/u/c/{n}.ics"))
            read_s = time.perf_counter() - started
            calendar = MemoryCalendar(items=items)
            started = time.perf_counter()
            outcome = resolve(request=parse_request(text=REFERENCE, kind="task"), calendar=calendar,
                              judge=DisabledJudge(), policy=NoThresholds(), request_id="bench", semantic=encoder,
                              ranker=ranker)
            resolve_s = time.perf_counter() - started
        listed = [outcome.item] if outcome.item is not None else list(outcome.candidates)
        result = (f"{outcome.status.value}, {len(listed)} listed, longest listed title "
                  f"{max((len(i.title) for i in listed), default=0)} chars, "
                  f"{len(calendar.memo.vectors)} titles encoded")
    except Exception as err:  # a deadline error is a result too
        elapsed = time.perf_counter() - started
        read_s, resolve_s = (read_s, elapsed) if read_s else (elapsed, 0.0)
        result = f"{type(err).__name__}: {getattr(err, 'code', '')} {getattr(err, 'details', err)}"
    print(f"{label}: {len(items)} items; read {read_s:.1f} s + resolution {resolve_s:.1f} s "
          f"= {read_s + resolve_s:.1f} s (budget {deadline.DEFAULT_SECONDS:.0f} s), "
          f"CPU {time.process_time() - cpu:.1f} s; peak RSS {_peak_mib()} MiB "
          f"(before reading {baseline} MiB); {result}", flush=True)


def _titles_child(title_mb: float) -> None:
    chars = int(title_mb * 1_000_000)
    texts = [_TODO.format(uid=f"huge-{n}", title=_huge_title(n, chars)) for n in range(3)]
    texts += [_TODO.format(uid=f"plain-{n}", title=t) for n, t in enumerate(_ORDINARY_TITLES)]
    _resolve_and_print(texts, f"three {title_mb:g} MB titles")
    # A clarification listing 20 such items: what a caller receives.
    import json

    from resolver.calendars import ical
    from resolver.domain.items import Kind
    from resolver.domain.pipeline import Outcome, Status
    from resolver.envelope import outcome_envelope

    window = ical.window_from(NOW, 90)
    items = [ical.live_items(_TODO.format(uid=f"huge-{n}", title=_huge_title(n, chars)), kind=Kind.TASK,
                             collection_path="/u/c/", etag=f'"{n}"', window=window)[0] for n in range(20)]
    outcome = Outcome(request_id="bench", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=None,
                      candidates=tuple(items), prompt="Which item do you mean?")
    size = len(json.dumps(outcome_envelope(outcome)).encode("utf-8"))
    print(f"envelope listing 20 such items: {size:,} bytes", flush=True)


def _worst_child(title_chars: int, response_mib: float) -> None:
    budget = int(response_mib * 1024 * 1024)
    texts, used, k, n = [], 0, 0, 0
    while True:
        words = []
        size = 0
        while size < title_chars:
            word = _word(k)
            k += 1
            words.append(word)
            size += len(word) + 1
        text = _TODO.format(uid=f"w{n}", title=" ".join(words)[:title_chars])
        member = len(_MEMBER.format(uid=f"w{n}", data=text).encode("utf-8"))
        if used + member > budget:
            break
        texts.append(text)
        used += member
        n += 1
    texts += [_TODO.format(uid=f"plain-{n}", title=t) for n, t in enumerate(_ORDINARY_TITLES)]
    _resolve_and_print(texts, f"{response_mib:g} MiB answer of {title_chars}-character titles "
                              f"({k:,} distinct words)")


def _in_child(flag: list[str], tree: str | None, timeout: float) -> None:
    """Run this file with `flag` in a fresh interpreter (its peak RSS is its own), on `tree` if given."""
    import os
    import subprocess
    from pathlib import Path

    root = Path(tree).resolve() if tree else Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    try:
        subprocess.run([sys.executable, str(Path(__file__).resolve()), *flag], cwd=root, env=env,
                       timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"{' '.join(flag)}: did not finish in {timeout:.0f} s", flush=True)


def main() -> None:
    from resolver.conf import DEFAULTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", help="path of an ical.py to measure instead of the current one")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--titles", action="store_true", help="three ~1 MB titles, resolved (issue 38)")
    parser.add_argument("--tree", help="with --titles or --worst: the checkout to measure (default: this one)")
    parser.add_argument("--title-mb", type=float, default=1.0)
    parser.add_argument("--worst", action="store_true", help="a full response of titles at the bound")
    parser.add_argument("--title-chars", type=int, default=500)
    parser.add_argument("--response-mib", type=float, default=DEFAULTS["MAX_RESPONSE_BYTES"] / 1024 / 1024)
    parser.add_argument("--child", choices=["titles", "worst"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "titles":
        return _titles_child(args.title_mb)
    if args.child == "worst":
        return _worst_child(args.title_chars, args.response_mib)
    if args.titles:
        return _in_child(["--child", "titles", "--title-mb", str(args.title_mb)], args.tree, max(args.timeout, 600))
    if args.worst:
        return _in_child(["--child", "worst", "--title-chars", str(args.title_chars), "--response-mib",
                          str(args.response_mib)], args.tree, max(args.timeout, 600))
    rows = {}
    for name in HOSTILE:
        queue = multiprocessing.get_context("fork").Queue()
        child = multiprocessing.get_context("fork").Process(target=_child, args=(args.reader, name, queue))
        child.start()
        child.join(args.timeout)
        if child.is_alive():
            child.kill()
            child.join()
            rows[name] = {"cpu_ms": None, "outcome": f"did not finish in {args.timeout:.0f} s"}
        else:
            cpu_ms, outcome = queue.get(timeout=10)
            rows[name] = {"cpu_ms": cpu_ms, "outcome": outcome}
        print(f"{name:28} {rows[name]['cpu_ms']!s:>10} ms  {rows[name]['outcome']}", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()

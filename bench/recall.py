"""Retrieval quality on the labelled set: the project's pipeline against simple baselines.

    .venv/bin/python bench/recall.py                       # memory calendars, train, calibrate and test tables
    .venv/bin/python bench/recall.py --split train --show-misses
    .venv/bin/python bench/recall.py --calendar b --category absent
    .venv/bin/python bench/recall.py --live --json bench/out/recall.json
    .venv/bin/python bench/recall.py --fitting-splits --split calibrate --model retrained.json

Every reference of every bench/data/retrieval/references*.jsonl and
bench/data/retrieval/b/references*.jsonl (bench/retrieval.py) is resolved against
its own calendar (`calendar`: "a" or "b"; one memory calendar per calendar,
reused across its references) through
`resolver.domain.pipeline.resolve` with that calendar's fixed clock and time zone,
the judge off (DisabledJudge) and no approved threshold (NoThresholds): the
order a person sees when the judge is off. The project's rank list is the
resolved item alone (status ok) or the clarification's candidates in order.
`--live` adds one more pass through a real Radicale on loopback per calendar, seeded from
the same data as iCalendar (closed items with their STATUS, which the reader
must drop) and read with CalDAVCalendar.

The same pipeline runs again with the semantic signal off ("project-lexical",
RESOLVER["SEMANTIC"] = False: the resolver before issue 29), and with the
signal on but no glosses ("project-no-glosses": the encoder reads every title
as it is, as on a host without FreeDict's dictionaries); "project" has it on
(resolver/domain/semantic.py) with the glosses of the dictionaries in
RESOLVER["GLOSSARY_DIR"] (resolver/domain/glossary.py), when installed. In the same run "semantic-alone" ranks the
items of the reference's kind by the encoder's cosine alone (top 19), and
the baselines rank the same items of the reference's kind,
top 19, ties by title: shared-word count (items sharing no word are not
listed), rapidfuzz WRatio, token_set_ratio and partial_ratio (rapidfuzz's
default processor: lower case, punctuation off).

Metrics per category and overall (overall recall leaves out
synonym_paraphrase, which shares no word with its target, and cross_language
(issue 29), both reported on their own lines, and absent, which has no rank;
overall `wrong` counts every reference):

- rank: position of the expected item; for `duplicates` and `date_alone`
  (several expected items) the position of the last of them minus (their
  number - 1), so that listing exactly them first, in any order, is rank 1; a
  missing one is no rank; `absent` (nothing expected) has no rank and no
  recall, only `wrong`.
- recall@1/@5/@19 and MRR (1/rank, 0 without one) over those ranks;
- wrong: status ok with an item not expected (any ok where the reference
  expects several items or none); baselines never resolve: n/a;
- occ@1 (references naming an event's occurrence: time_expression,
  time_form, sentence): the project's first
  item is expected and `Outcome.occurrences[item_id].start` equals
  `expected_occurrence_start`; baselines know no occurrences: n/a;
- median milliseconds per reference.

For `absent`, one more line per `absent_type` (unrelated, similar,
other_kind, completed), for the project with the fusion rule and with the
relevance model: how many were answered with no candidates at all
(needs_clarification, empty list), how many resolved (wrong), and the
number of candidates offered (median, max).

Splits: train (rules are chosen there), calibrate (a model's probabilities
are fitted there), test (read once); the tables keep the splits apart.
`--holdout` runs only bench/data/retrieval/holdout/references.jsonl (split
"holdout", both calendars): a set written after the model, by someone who did
not read the matcher, the model or its misses (its README). No other run,
training or check reads it: it is read once, for a session's closing figures.

`--fitting-splits` relabels train and calibrate as bench/relevance.py fits
them (halves by the parity of the ID's SHA-256), so that a retrained model
(`--model`, the shipped one by default) is compared with the shipped one on
references neither's weights were fitted on.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rapidfuzz import fuzz, process, utils  # noqa: E402

from bench import retrieval  # noqa: E402
from bench.harness import render_table  # noqa: E402

TOP = 19
OVERALL = "overall"
SEPARATE = "synonym_paraphrase"
# Reported on their own lines too, and left out of `overall` so that it stays comparable with earlier runs.
NEW_SEPARATE = ("cross_language",)
# The baseline's own small stopword list: what a person writing the one-line rule would drop.
BASELINE_STOPWORDS = frozenset("a an the to of for on in at by and or with from my our your is".split())
_WORD = re.compile(r"\w+")


@dataclass
class Result:
    ref_id: str
    category: str
    split: str
    rank: int | None
    wrong: bool | None
    occurrence_ok: bool | None  # None: not an event time expression, or a baseline
    ms: float
    top: list[str] = field(default_factory=list)  # uids, best first
    status: str = ""
    first_occurrence: str | None = None
    method: str | None = None
    calendar: str = retrieval.DEFAULT_CALENDAR
    absent_type: str | None = None
    candidates: int | None = None  # how many candidates the clarification offered (the project only)


def rank_of(expected: Sequence[str], ranked: Sequence[str]) -> int | None:
    if not expected:
        return None  # an absent item has no rank: only a wrong resolution counts
    positions = {uid: n for n, uid in reversed(list(enumerate(ranked, start=1)))}
    if any(uid not in positions for uid in expected):
        return None
    return max(positions[uid] for uid in expected) - (len(expected) - 1)


# Baselines ------------------------------------------------------------------------------------------


def _baseline_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in BASELINE_STOPWORDS}


def shared_words(text: str, items: Sequence[Any]) -> list[str]:
    query = _baseline_words(text)
    scored = [(len(query & _baseline_words(i.title)), i) for i in items]
    scored = [(s, i) for s, i in scored if s > 0]
    scored.sort(key=lambda pair: (-pair[0], pair[1].title.casefold(), pair[1].uid))
    return [i.uid for _s, i in scored[:TOP]]


def fuzz_baseline(scorer: Callable[..., float]) -> Callable[[str, Sequence[Any]], list[str]]:
    def rank(text: str, items: Sequence[Any]) -> list[str]:
        scores = process.cdist([text], [i.title for i in items], scorer=scorer,
                               processor=utils.default_process)[0].tolist()
        order = sorted(range(len(items)), key=lambda k: (-scores[k], items[k].title.casefold(), items[k].uid))
        return [items[k].uid for k in order[:TOP]]
    return rank


def semantic_alone(encoder: Any) -> Callable[[str, Sequence[Any]], list[str]]:
    """The signal on its own: the 19 titles nearest the reference (cosine), no floor, no words."""
    import numpy as np

    vectors: dict[tuple[str, ...], Any] = {}

    def rank(text: str, items: Sequence[Any]) -> list[str]:
        key = tuple(i.uid for i in items)
        if key not in vectors:
            vectors[key] = encoder.encode([i.title for i in items])
        scores = vectors[key] @ encoder.encode([text])[0]
        order = sorted(range(len(items)), key=lambda k: (-float(scores[k]), items[k].title.casefold(), items[k].uid))
        return [items[k].uid for k in order[:TOP]]
    return rank


BASELINES = {
    "shared-words": shared_words,
    "WRatio": fuzz_baseline(fuzz.WRatio),
    "token_set_ratio": fuzz_baseline(fuzz.token_set_ratio),
    "partial_ratio": fuzz_baseline(fuzz.partial_ratio),
}


def _of_calendar(value: Any, ref: dict[str, Any]) -> Any:
    """`value` itself, or its entry for the reference's calendar when it is a dict keyed by calendar."""
    if isinstance(value, dict) and set(value) <= set(retrieval.CALENDARS):
        return value[retrieval.calendar_of(ref)]
    return value


def run_baseline(name: str, refs: list[dict[str, Any]], by_kind: dict[str, Any]) -> list[Result]:
    """`by_kind`: the items per kind, or one such dict per calendar name."""
    rank = BASELINES[name]
    out = []
    for ref in refs:
        kinds = by_kind[retrieval.calendar_of(ref)] if set(by_kind) <= set(retrieval.CALENDARS) else by_kind
        started = time.perf_counter()
        top = rank(ref["text"], kinds[ref["kind"]])
        ms = (time.perf_counter() - started) * 1000
        out.append(Result(ref["id"], ref["category"], ref["split"], rank_of(ref["expected"], top),
                          wrong=None, occurrence_ok=None, ms=ms, top=top, calendar=retrieval.calendar_of(ref),
                          absent_type=ref.get("absent_type")))
    return out


# The project ----------------------------------------------------------------------------------------


class _Certified:
    """An approved threshold for the relevance model (with this encoder) only, at THETA, with the deployed margin."""

    def __init__(self, model: Any, encoder: Any, threshold: float) -> None:
        from resolver.conf import resolver_settings
        from resolver.domain.judgment import ThresholdRule

        self.key = (model.scorer_name(encoder.name), model.fingerprint(encoder.name))
        self.rule = ThresholdRule(threshold=threshold, margin=float(resolver_settings.THRESHOLD_MARGIN))

    def find(self, *, question: str, model: str, fingerprint: str) -> Any:
        return self.rule if (model, fingerprint) == self.key else None


def run_project(refs: list[dict[str, Any]], calendar: Any, meta: Any,
                semantic: Any = None, ranker: Any = None, policy: Any = None) -> list[Result]:
    """`calendar` and `meta`: one of each, or one per calendar name (each reference runs against its own).
    `ranker`: the relevance model; `policy`: the thresholds (none approved by default)."""
    from resolver.domain.items import Kind
    from resolver.domain.pipeline import Status, resolve
    from resolver.domain.ports import NoThresholds
    from resolver.domain.requests import ResolveRequest
    from resolver.judges.disabled import DisabledJudge

    judge, policy = DisabledJudge(), policy or NoThresholds()
    out = []
    for ref in refs:
        ref_meta, ref_calendar = _of_calendar(meta, ref), _of_calendar(calendar, ref)
        request = ResolveRequest(text=ref["text"], kind=Kind(ref["kind"]), time_zone=ref_meta.zone)
        started = time.perf_counter()
        outcome = resolve(request=request, calendar=ref_calendar, judge=judge, policy=policy,
                          request_id=f"bench-{ref['id']}", now=ref_meta.now, semantic=semantic, ranker=ranker)
        ms = (time.perf_counter() - started) * 1000
        ok = outcome.status is Status.OK
        ranked_items = [outcome.item] if ok and outcome.item is not None else list(outcome.candidates)
        top = [i.uid for i in ranked_items]
        rank = rank_of(ref["expected"], top)
        # Several expected items (duplicates, a date's list) or none (absent): any resolution is wrong.
        wrong = ok and (len(ref["expected"]) != 1 or top[0] not in ref["expected"])
        first_occ = None
        occurrence_ok = None
        if ranked_items:
            occ = outcome.occurrences.get(ranked_items[0].item_id)
            first_occ = occ.start.isoformat() if occ is not None else None
        if ref.get("expected_occurrence_start"):
            expected = datetime.fromisoformat(ref["expected_occurrence_start"])
            occurrence_ok = bool(rank == 1 and first_occ is not None
                                 and datetime.fromisoformat(first_occ) == expected)
            # Resolved to the right item but another occurrence of it: as wrong as another item.
            wrong = wrong or (ok and not occurrence_ok)
        out.append(Result(ref["id"], ref["category"], ref["split"], rank, wrong, occurrence_ok, ms, top,
                          status=outcome.status.value, first_occurrence=first_occ,
                          calendar=retrieval.calendar_of(ref), absent_type=ref.get("absent_type"),
                          candidates=0 if ok else len(outcome.candidates),
                          method=outcome.method.value if outcome.method is not None else None))
    return out


# Live Radicale ---------------------------------------------------------------------------------------


class LiveRadicale:
    """A Radicale in a temporary directory, seeded with the set's iCalendar."""

    def __init__(self, items: list[dict[str, Any]], meta: retrieval.Meta) -> None:
        from lifeproject import embedded_radicale

        self.root = Path(tempfile.mkdtemp(prefix="recall-radicale-"))
        self.instance, self.process = embedded_radicale.launch(self.root)
        try:
            retrieval.upload(self.instance.url, self.instance.username, self.instance.password,
                             retrieval.ics_calendars(items, meta))
        except BaseException:
            self.stop()
            raise

    def calendar(self, meta: retrieval.Meta) -> Any:
        from resolver.calendars.caldav import CalDAVCalendar

        return CalDAVCalendar(url=self.instance.url, username=self.instance.username,
                              password=self.instance.password, timeout=60.0, horizon_days=meta.horizon_days,
                              now=lambda: meta.now)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except Exception:
                self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


# Figures ---------------------------------------------------------------------------------------------


def metrics(results: list[Result], *, wrong_over: list[Result] | None = None) -> dict[str, Any]:
    """Recall over `results`; wrong resolutions over `wrong_over` (default the same results).

    References to absent items have no rank: their recall is n/a, only `wrong` counts.
    """
    wrong_over = results if wrong_over is None else wrong_over
    if not wrong_over:
        return {"n": 0}
    ranked = [r for r in results if r.category != retrieval.ABSENT]
    n = len(ranked)
    ranks = [r.rank for r in ranked]

    def at(k: int) -> float | None:
        return round(sum(1 for x in ranks if x is not None and x <= k) / n, 3) if n else None

    wrongs = [r.wrong for r in wrong_over if r.wrong is not None]
    occs = [r.occurrence_ok for r in results if r.occurrence_ok is not None]
    return {
        "n": len(wrong_over) if n == 0 else n, "recall@1": at(1), "recall@5": at(5), "recall@19": at(19),
        "mrr": round(sum(1 / x for x in ranks if x) / n, 3) if n else None,
        "wrong": sum(wrongs) if len(wrongs) == len(wrong_over) else None,
        "occurrence@1": round(sum(occs) / len(occs), 3) if occs else None,
        "occurrence_n": len(occs),
        "median_ms": round(statistics.median(r.ms for r in wrong_over), 3),
        # Clarifications: how many candidates they offer; references to nothing: how many are offered nothing.
        "offered_median": _median([len(r.top) for r in wrong_over if r.status == "needs_clarification"]),
        "absent_nothing": _share([not r.top for r in wrong_over if r.category == retrieval.ABSENT and r.status]),
        "absent_offered_max": max((len(r.top) for r in wrong_over if r.category == retrieval.ABSENT and r.status),
                                  default=None),
        # Resolved on confidence (method semantic): the share of the references not resolved deterministically.
        "resolved_semantic": _share([r.method == "semantic" for r in wrong_over if r.method != "deterministic"]),
        "semantic_resolved_n": sum(1 for r in wrong_over if r.method == "semantic" and r.status == "ok"),
        "semantic_wrong_n": sum(1 for r in wrong_over if r.method == "semantic" and r.status == "ok" and r.wrong),
    }


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def summarise(runs: dict[str, list[Result]], split: str, categories: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for method, results in runs.items():
        chosen = [r for r in results if r.split == split]
        per = {cat: metrics([r for r in chosen if r.category == cat]) for cat in categories}
        # Overall recall leaves out synonyms (no shared word) and absent items (no rank); wrong counts all.
        per[OVERALL] = metrics([r for r in chosen if r.category != SEPARATE and r.category not in NEW_SEPARATE],
                               wrong_over=chosen)
        out[method] = per
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render(figures: dict[str, dict[str, Any]], categories: list[str], *, has_time: bool) -> str:
    headers = ["category", "method", "n", "r@1", "r@5", "r@19", "MRR", "wrong", "occ@1", "offered", "none",
               "resolved", "median ms"]
    rows = []
    for cat in [OVERALL] + [c for c in categories if c != SEPARATE] + ([SEPARATE] if SEPARATE in categories else []):
        for method, per in figures.items():
            m = per.get(cat, {"n": 0})
            if not m.get("n"):
                continue
            occ = m["occurrence@1"] if m.get("occurrence_n") else None
            show_occ = has_time and (cat in (OVERALL,) + retrieval.TIMED)
            rows.append([cat, method, m["n"], _cell(m["recall@1"]), _cell(m["recall@5"]), _cell(m["recall@19"]),
                         _cell(m["mrr"]), _cell(m["wrong"]),
                         (f"{_cell(occ)} ({m['occurrence_n']})" if occ is not None else "n/a") if show_occ else "",
                         _cell(m.get("offered_median")),
                         (f"{_cell(m['absent_nothing'])} (max {m['absent_offered_max']})"
                          if m.get("absent_nothing") is not None else ""),
                         _cell(m.get("resolved_semantic")) if method == "project-certified" else "",
                         f"{m['median_ms']:.2f}"])
    return render_table(headers, rows)


def absent_breakdown(results: list[Result], split: str) -> dict[str, dict[str, Any]]:
    """Per absent_type of the split's `absent` references: answered with no candidates, resolved, offered."""
    out: dict[str, dict[str, Any]] = {}
    chosen = [r for r in results if r.split == split and r.category == retrieval.ABSENT]
    for absent_type in retrieval.ABSENT_TYPES + (None,):
        group = [r for r in chosen if r.absent_type == absent_type]
        if not group:
            continue
        offered = [r.candidates for r in group if r.candidates is not None]
        out[absent_type or "untyped"] = {
            "n": len(group),
            "no_candidates": sum(1 for r in group if r.status == "needs_clarification" and r.candidates == 0),
            "wrong": sum(1 for r in group if r.wrong),
            "candidates_median": statistics.median(offered) if offered else None,
            "candidates_max": max(offered) if offered else None,
        }
    return out


def render_absent(breakdown: dict[str, dict[str, Any]], method: str) -> str:
    parts = [f"{name} {b['n']}: {b['no_candidates']} no candidates, {b['wrong']} wrong, "
             f"candidates median {_cell(b['candidates_median'])} max {_cell(b['candidates_max'])}"
             for name, b in breakdown.items()]
    return f"absent by type ({method}): " + "; ".join(parts)


def show_misses(results: list[Result], refs: dict[str, dict[str, Any]], titles: dict[str, str], label: str,
                write: Callable[[str], None]) -> None:
    for r in results:
        missed = (r.rank != 1 and r.category != retrieval.ABSENT) or r.wrong or r.occurrence_ok is False
        if not missed:
            continue
        ref = refs[r.ref_id]
        expected = ", ".join(titles[u] for u in ref["expected"]) or "(nothing: a clarification)"
        extra = f" want occurrence {ref['expected_occurrence_start']} got {r.first_occurrence}" \
            if ref.get("expected_occurrence_start") else ""
        write(f"[{label}] {r.ref_id} {r.category}/{r.split} {ref['text']!r} -> expected {expected!r}; "
              f"status {r.status}, rank {r.rank}{', WRONG' if r.wrong else ''}{extra}")
        for n, uid in enumerate(r.top[:5], start=1):
            write(f"      {n}. {titles.get(uid, uid)}")


def run_live(runs: dict[str, list[Result]], refs: list[dict[str, Any]], raw_items: dict[str, list[dict[str, Any]]],
             by_kind: dict[str, dict[str, list[Any]]], metas: dict[str, retrieval.Meta], encoder: Any,
             write: Callable[[str], None]) -> dict[str, dict[str, int]]:
    """The project's pass through a real Radicale per calendar seeded from its set; items differing per kind.

    The server holds the closed items too (COMPLETED, CANCELLED): the reader must drop them.
    """
    from resolver.domain.items import Kind

    results: dict[str, Result] = {}
    notes: dict[str, dict[str, int]] = {}
    for name in raw_items:
        mine = [r for r in refs if retrieval.calendar_of(r) == name]
        if not mine:
            continue
        meta = metas[name]
        server = LiveRadicale(raw_items[name], meta)
        try:
            calendar = server.calendar(meta)
            live_uids = {kind: {i.uid for i in calendar.fetch(kind=Kind(kind), collection_ids=None,
                                                              time_zone=meta.zone).items}
                         for kind in ("task", "event")}
            mismatch = {kind: sorted(live_uids[kind] ^ {i.uid for i in by_kind[name][kind]})
                        for kind in by_kind[name]}
            if any(mismatch.values()):
                write(f"note: calendar {name}: the live server's items differ from the memory set: {mismatch}")
            results.update((r.ref_id, r) for r in run_project(mine, calendar, meta, semantic=encoder))
        finally:
            server.stop()
        notes[name] = {kind: len(v) for kind, v in mismatch.items()}
    runs["project-live"] = [results[r["id"]] for r in refs if r["id"] in results]
    return notes


def write_report(args: argparse.Namespace, runs: dict[str, list[Result]], refs: list[dict[str, Any]],
                 titles: dict[str, str], report: dict[str, Any], write: Callable[[str], None]) -> None:
    """The misses (--show-misses) and the JSON figures (--json)."""
    if args.show_misses:
        by_id = {r["id"]: r for r in refs}
        for method in ("project", "project-ranker", "project-live", "project-certified"):
            if method in runs:
                write(f"\n-- misses: {method} --")
                show_misses(runs[method], by_id, titles, method, write)
    if args.json:
        report["ranks"] = {method: {r.ref_id: r.rank for r in results} for method, results in runs.items()}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        write(f"figures written to {args.json}")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=retrieval.SPLITS + (retrieval.HOLDOUT, "all"), default="all",
                        help="which references to run (default all; tables per split either way)")
    parser.add_argument("--calendar", choices=tuple(retrieval.CALENDARS),
                        help="run only this calendar's references (default every calendar's)")
    parser.add_argument("--live", action="store_true", help="also resolve through a real Radicale on loopback")
    parser.add_argument("--no-ranker", action="store_true", help="leave out the relevance model's runs")
    parser.add_argument("--certified", type=float, metavar="THETA",
                        help="also run the relevance model with its threshold THETA approved (project-certified): "
                             "what it resolves on its own, and how often wrongly")
    parser.add_argument("--model", type=Path, metavar="PATH",
                        help="the relevance model file to run (default the shipped one): a retrained one, compared")
    parser.add_argument("--fitting-splits", action="store_true",
                        help="train and calibrate as bench/relevance.py fits them (the halves by the parity of "
                             "the ID's SHA-256), not the files' labels; test stays test")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON to PATH")
    parser.add_argument("--category", choices=retrieval.CATEGORIES, help="run only this category")
    parser.add_argument("--holdout", action="store_true",
                        help="run only the blind holdout set (bench/data/retrieval/holdout/), every calendar's: "
                             "read once per closing measurement, never to choose anything")
    parser.add_argument("--show-misses", action="store_true",
                        help="print each project miss with its first 5 candidates")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    # The CalDAV backend reads its bounds from the app's settings.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    import django

    django.setup()
    write = print  # a script, not a Django command: stdout is its output

    from resolver.calendars.memory import MemoryCalendar

    if args.holdout:
        refs = [r for r in retrieval.load_references(files=[retrieval.HOLDOUT_FILE])
                if args.calendar is None or r["calendar"] == args.calendar]
    else:
        refs = retrieval.load_references(args.calendar)
    if args.fitting_splits and not args.holdout:
        from bench.relevance import fitting_split

        refs = [{**r, "split": fitting_split(r)} for r in refs]
    if args.split != "all":
        refs = [r for r in refs if r["split"] == args.split]
    if args.category:
        refs = [r for r in refs if r["category"] == args.category]
    # One memory calendar per calendar the references name, its items built once.
    names = [n for n in retrieval.CALENDARS if any(retrieval.calendar_of(r) == n for r in refs)]
    metas = {n: retrieval.load_meta(retrieval.CALENDARS[n]) for n in names}
    raw_items = {n: retrieval.load_items(retrieval.CALENDARS[n]) for n in names}
    items = {n: retrieval.memory_items(raw_items[n], metas[n]) for n in names}
    closed = {n: retrieval.memory_closed(raw_items[n], metas[n]) for n in names}
    by_kind = {n: {kind: [i for i in items[n] if i.kind.value == kind] for kind in ("task", "event")}
               for n in names}
    titles = {i.uid: i.title for n in names for i in items[n]}  # the calendars' uids do not overlap

    def calendars() -> dict[str, Any]:
        return {n: MemoryCalendar(items=list(items[n]), closed=list(closed[n])) for n in names}

    from resolver.conf import resolver_settings
    from resolver.domain.glossary import find_freedict
    from resolver.domain.semantic import MultilingualUSE

    glossary = find_freedict(resolver_settings.GLOSSARY_DIR)
    write(f"glosses: {glossary.name if glossary else 'none (no FreeDict dictionaries in GLOSSARY_DIR)'}")
    encoder = MultilingualUSE(glossary=glossary)
    encoder.encode(["warm up"])  # the model's load is docs/performance.md's, not a reference's
    started = time.perf_counter()
    runs: dict[str, list[Result]] = {"project": run_project(refs, calendars(), metas, semantic=encoder)}
    memory_seconds = time.perf_counter() - started
    if glossary is not None:
        runs["project-no-glosses"] = run_project(refs, calendars(), metas, semantic=MultilingualUSE())
    if not args.no_ranker:
        from resolver.domain.relevance import RelevanceModel

        model = RelevanceModel.load(args.model) if args.model else RelevanceModel.load()
        runs["project-ranker"] = run_project(refs, calendars(), metas, semantic=encoder, ranker=model)
        if args.certified is not None:
            runs["project-certified"] = run_project(refs, calendars(), metas, semantic=encoder, ranker=model,
                                                    policy=_Certified(model, encoder, args.certified))
        runs["project-ranker-words"] = run_project(refs, calendars(), metas, ranker=model)
    # The same pipeline with the signal off (RESOLVER["SEMANTIC"] = False): the lexical pool alone.
    runs["project-lexical"] = run_project(refs, calendars(), metas)
    live_note = run_live(runs, refs, raw_items, by_kind, metas, encoder, write) if args.live else None
    BASELINES["semantic-alone"] = semantic_alone(encoder)
    for name in BASELINES:
        runs[name] = run_baseline(name, refs, by_kind)

    categories = [c for c in retrieval.CATEGORIES if any(r["category"] == c for r in refs)]
    has_time = any(r.get("expected_occurrence_start") for r in refs)
    report: dict[str, Any] = {
        "calendars": {n: {"now": metas[n].now.isoformat(), "time_zone": metas[n].time_zone,
                          "items": len(items[n]),
                          "references": sum(1 for r in refs if retrieval.calendar_of(r) == n)} for n in names},
        "references": len(refs), "memory_pass_seconds": round(memory_seconds, 2),
        "live_item_mismatch": live_note, "splits": {}, "absent_types": {},
    }
    where = "; ".join(f"calendar {n}: {len(items[n])} live items, now {metas[n].now.isoformat()} "
                      f"{metas[n].time_zone}" for n in names)
    for split in retrieval.SPLITS + (retrieval.HOLDOUT,):
        if not any(r["split"] == split for r in refs):
            continue
        figures = summarise(runs, split, categories)
        report["splits"][split] = figures
        write(f"\n== {split} ({sum(1 for r in refs if r['split'] == split)} references; {where}) ==")
        write(render(figures, categories, has_time=has_time))
        for method in ("project", "project-ranker", "project-live"):
            breakdown = absent_breakdown(runs.get(method, []), split)
            if breakdown:
                report["absent_types"].setdefault(split, {})[method] = breakdown
                write(render_absent(breakdown, method))
    for split, figures in report["splits"].items():
        certified = figures.get("project-certified", {}).get(OVERALL)
        if certified and certified.get("semantic_resolved_n"):
            write(f"{split}: resolved on confidence {certified['semantic_resolved_n']} "
                  f"({certified['resolved_semantic']:.3f} of those not answered deterministically), wrong "
                  f"{certified['semantic_wrong_n']} (realised risk "
                  f"{certified['semantic_wrong_n'] / certified['semantic_resolved_n']:.3f})")
    write(f"\nmemory pass: {memory_seconds:.1f} s for {len(refs)} references")
    write_report(args, runs, refs, titles, report, write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Real-world calendars: the corpus of 127 iCalendar files, served by a real Radicale.

Every file is loaded into a collection of its own (tests/corpus/loader.py),
then every collection is read through the resolver and every well-formed
title is resolved, by its exact text and by a partial reference.

The window: corpus events are mostly in the past, so the calendar here is
told that now is 1900-01-01 and looks 73,000 days (to late 2099) ahead.
Every dated event in the corpus falls inside that window; what the event
assertions check is therefore cancellation, series with overrides (one item
under the master's title) and titles, not the 90-day horizon, which
tests/test_cross_server.py covers.

Run with `-s` to print the figures (files loaded through the server or via
storage, items resolved, items skipped by reason).
"""
from __future__ import annotations

import logging
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Sequence

import pytest
import requests
from lxml import etree

from resolver import services
from resolver.domain.ports import FetchResult
from resolver.calendars.caldav import CalDAVCalendar
from resolver.domain.errors import ResolverError
from resolver.domain.items import Item, Kind, cut_title, normalise
from resolver.domain.pipeline import Outcome, Status
from resolver.domain.ports import NoThresholds
from resolver.judges.disabled import DisabledJudge
from tests.corpus.expect import Expected, expected_items, partial_reference, well_formed
from tests.corpus.loader import LoadedCorpus, LoadedFile, corpus_root, load
from tests.support.resolving import resolve_outcome

pytestmark = pytest.mark.slow

WINDOW_START = datetime(1900, 1, 1, tzinfo=timezone.utc)
WINDOW_DAYS = 73_000  # to late 2099
# Radicale's own line for an item it cannot read from its storage.
_RADICALE_SKIP = re.compile(r"Skip broken item '([^']+)\.ics' in '[^/]+/([^']+)': (.*)")
DAV = "{DAV:}"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclass
class Surveyed:
    """One corpus file as the server serves it and as the resolver reads it."""

    loaded: LoadedFile
    served: set[str]  # piece names the server serves
    expected: dict[str, list[Expected] | None]  # per served piece; None: not readable as UTF-8 iCalendar
    fetched: dict[Kind, FetchResult] = field(default_factory=dict)
    failures: dict[Kind, str] = field(default_factory=dict)

    @property
    def collection_id(self) -> str:
        return self.loaded.collection_id

    def expected_of(self, kind: Kind) -> list[Expected]:
        return [e for items in self.expected.values() if items for e in items if e.kind is kind]

    def live(self, kind: Kind) -> list[Item]:
        return list(self.fetched[kind].items)


@dataclass
class Survey:
    corpus: LoadedCorpus
    files: list[Surveyed]
    resolver_log: list[str]
    radicale_skips: dict[tuple[str, str], str]  # (collection, piece) -> Radicale's reason
    calendar: CalDAVCalendar


def _served(corpus: LoadedCorpus, collection_id: str) -> set[str]:
    """Names of the resources the server serves in the collection (an unfiltered REPORT)."""
    url = f"{corpus.instance.url}{corpus.instance.username}/{collection_id}/"
    body = (b'<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
            b'<D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR"/></C:filter>'
            b"</C:calendar-query>")
    response = requests.request("REPORT", url, data=body, auth=(corpus.instance.username, corpus.instance.password),
                                headers={"Depth": "1", "Content-Type": "application/xml"}, timeout=60)
    assert response.status_code == 207
    names = set()
    for element in etree.fromstring(response.content).iter(f"{DAV}response"):
        href = element.findtext(f"{DAV}href") or ""
        if href.endswith(".ics"):
            names.add(href.rsplit("/", 1)[-1][: -len(".ics")])
    return names


def corpus_calendar(corpus: LoadedCorpus) -> CalDAVCalendar:
    return CalDAVCalendar(url=corpus.instance.url, username=corpus.instance.username,
                          password=corpus.instance.password, timeout=60.0, horizon_days=WINDOW_DAYS,
                          now=lambda: WINDOW_START)


@pytest.fixture(scope="module")
def survey() -> Iterator[Survey]:
    root_dir = corpus_root()
    if root_dir is None:
        pytest.skip("no iCalendar corpus next to the repository (set LIFEPROJECT_ICAL_CORPUS)")
    workdir = Path(tempfile.mkdtemp(prefix="corpus-radicale-"))
    corpus = load(workdir, root_dir)
    records = _Records()
    logger = logging.getLogger("resolver.calendars")
    logger.addHandler(records)
    try:
        calendar = corpus_calendar(corpus)
        files = []
        for loaded in corpus.files:
            served = _served(corpus, loaded.collection_id)
            pieces = {piece.name: piece for piece in loaded.pieces}
            surveyed = Surveyed(loaded, served, {name: expected_items(pieces[name].data) for name in served})
            for kind in Kind:
                try:
                    surveyed.fetched[kind] = calendar.fetch(kind=kind, collection_ids=[loaded.collection_id])
                except ResolverError as err:
                    surveyed.failures[kind] = f"{err.code}: {err.details}"
            files.append(surveyed)
        skips = {}
        for line in corpus.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            match = _RADICALE_SKIP.search(line)
            if match:
                skips[(match.group(2), match.group(1))] = match.group(3)
        yield Survey(corpus, files, records.messages, skips, calendar)
    finally:
        logger.removeHandler(records)
        corpus.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Snapshot:
    """The collections exactly as the live calendar read them during the survey.

    Resolving hundreds of titles against a 186-item collection would re-read
    and re-parse it from Radicale every time (minutes); the corpus does not
    change, so titles are resolved against what the live read returned, and
    `test_corpus__snapshot_answers_equal_live_answers` checks that this gives
    the same answers as the live path.
    """

    fetched: dict[tuple[Kind, str], FetchResult]

    def collections(self) -> list:
        return []

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None, time_zone: str | None = None) -> FetchResult:
        assert collection_ids and len(collection_ids) == 1
        return self.fetched[(kind, collection_ids[0])]


def resolve(survey: Survey, text: str, kind: Kind, collection_id: str, *, live: bool = False) -> Outcome:
    """Resolve through the service, against the snapshot (or the live server)."""
    calendar = survey.calendar if live else Snapshot(
        {(k, f.collection_id): r for f in survey.files for k, r in f.fetched.items()}
    )
    return resolve_outcome(
        text=text, kind=kind.value, collection_ids=[collection_id], door="test",
        calendar=calendar, judge=DisabledJudge(), policy=NoThresholds(),
    )


# --- loading and reading -------------------------------------------------------


def test_corpus__every_file_is_loaded(survey: Survey) -> None:
    assert len(survey.files) == 127
    assert sum(1 for f in survey.files if f.loaded.relative.endswith(".txt")) == 15
    for surveyed in survey.files:
        assert surveyed.loaded.through_server or surveyed.loaded.through_storage


def test_corpus__every_resource_is_served_or_refused_with_a_logged_reason(survey: Survey) -> None:
    """Nothing vanishes silently: what Radicale does not serve, its log names, with a reason."""
    for surveyed in survey.files:
        for piece in surveyed.loaded.pieces:
            if piece.name in surveyed.served:
                continue
            assert piece.name in surveyed.loaded.through_storage, (surveyed.loaded.relative, piece.name)
            assert (surveyed.collection_id, piece.name) in survey.radicale_skips, (surveyed.loaded.relative, piece.name)


def test_corpus__nothing_crashes(survey: Survey) -> None:
    """Every collection is read: no crash, no calendar_unavailable, whatever the files hold."""
    assert {f.loaded.relative: f.failures for f in survey.files if f.failures} == {}


def test_corpus__every_skip_is_logged_with_its_reason(survey: Survey) -> None:
    skipped = [(s.href, s.reason) for f in survey.files for r in f.fetched.values() for s in r.skipped]
    assert skipped, "the corpus holds resources the resolver cannot read"
    for href, reason in skipped:
        assert f"skipped resource {href}: {reason}" in survey.resolver_log


def test_corpus__skips_reach_the_envelope(survey: Survey, caplog) -> None:
    """Resolving in a collection with an unreadable resource warns `items_skipped`, and logs it."""
    checked = 0
    for surveyed in survey.files:
        for kind, fetched in surveyed.fetched.items():
            if not fetched.skipped:
                continue
            with caplog.at_level(logging.WARNING, logger="resolver.calendars"):
                outcome = resolve(survey, "anything at all", kind, surveyed.collection_id, live=True)
            reasons = Counter(s.reason for s in fetched.skipped)
            assert [(w.code, w.details) for w in outcome.warnings if w.code == "items_skipped"] == [
                ("items_skipped", {"count": len(fetched.skipped), "reasons": dict(sorted(reasons.items()))})
            ]
            for skipped in fetched.skipped:
                assert f"skipped resource {skipped.href}: {skipped.reason}" in caplog.messages
            checked += 1
    assert checked > 0


# --- what counts ---------------------------------------------------------------


def _live_by_uid(surveyed: Surveyed, kind: Kind) -> dict[str, Item]:
    return {item.uid: item for item in surveyed.live(kind)}


def _readable(surveyed: Surveyed) -> bool:
    """Every served resource reads as UTF-8 iCalendar and the resolver skipped none."""
    return all(v is not None for v in surveyed.expected.values()) and not any(
        r.skipped for r in surveyed.fetched.values()
    )


def test_corpus__tasks_open_exactly_as_expected(survey: Survey) -> None:
    """Tasks with no STATUS are open; COMPLETED or CANCELLED ones (or with a COMPLETED date) are not."""
    wrong = {}
    for surveyed in survey.files:
        if not _readable(surveyed):
            continue
        expected = {e.uid for e in surveyed.expected_of(Kind.TASK) if e.counts}
        found = set(_live_by_uid(surveyed, Kind.TASK))
        if expected != found:
            wrong[surveyed.loaded.relative] = (sorted(expected - found), sorted(found - expected))
    assert wrong == {}


# Where the server's copy and the author's file rightly differ, and why.
EVENT_DIFFERENCES: dict[str, set[str]] = {
    # `DTSTART;;VALUE=DATE-TIME:...`: icalendar drops the line, so the file has
    # no start; Radicale repairs it on PUT and serves an event that has one.
    "icalendar/calendars/broken_ical.ics": {"abc"},
}


def test_corpus__events_count_exactly_as_expected(survey: Survey) -> None:
    """Events and series count unless cancelled; a series with overrides is one item."""
    wrong = {}
    for surveyed in survey.files:
        if not _readable(surveyed):
            continue
        expected = {e.uid for e in surveyed.expected_of(Kind.EVENT) if e.counts}
        expected |= EVENT_DIFFERENCES.get(surveyed.loaded.relative, set())
        found = [item.uid for item in surveyed.live(Kind.EVENT)]
        if expected != set(found) or len(found) != len(set(found)):
            wrong[surveyed.loaded.relative] = (sorted(expected - set(found)), sorted(set(found) - expected), found)
    assert wrong == {}


# Titles Radicale rewrites on PUT (it stores what vobject re-serialises): the
# resolver reads the server's copy, so these differ from the author's file.
TITLE_REWRITES: dict[str, tuple[str, Callable[[str, str], bool]]] = {
    "icalendar/calendars/issue_722_timezone_transition_ambiguity.ics": (
        "vobject cuts a SUMMARY at an unescaped comma",
        lambda original, served: served == original.split(",")[0],
    ),
    "ical4j/valid/sunbird_sample.ics": (
        'vobject drops the backslash of \\", which is not an iCalendar escape',
        lambda original, served: served == original.replace('\\"', '"'),
    ),
    "ical4j/valid/Session6.ics": (
        "vobject keeps fewer of the trailing spaces",
        lambda original, served: served.rstrip() == original.rstrip(),
    ),
}


def test_corpus__titles_survive_the_server_and_the_parser(survey: Survey) -> None:
    """The resolver reads each title exactly as its author wrote it (unescaped, unfolded)."""
    wrong, rewritten = {}, set()
    for surveyed in survey.files:
        if not _readable(surveyed):
            continue
        for kind in Kind:
            live = _live_by_uid(surveyed, kind)
            for expected in surveyed.expected_of(kind):
                # A title over MAX_TITLE_CHARS is read cut, with its marker (docs/security.md): the rest is as written.
                if expected.uid not in live or live[expected.uid].title == cut_title(expected.title)[0]:
                    continue
                served = live[expected.uid].title
                rewrite = TITLE_REWRITES.get(surveyed.loaded.relative)
                if rewrite is not None and rewrite[1](expected.title, served):
                    rewritten.add(surveyed.loaded.relative)
                    continue
                wrong[(surveyed.loaded.relative, expected.uid)] = (expected.title, served)
    assert wrong == {}
    assert rewritten == set(TITLE_REWRITES)


# --- resolving -----------------------------------------------------------------


@dataclass
class Resolutions:
    exact_ok: int = 0
    exact_clarified: int = 0
    partial_found: int = 0
    partial_resolved: int = 0
    not_well_formed: Counter[str] = field(default_factory=Counter)
    features: Counter[str] = field(default_factory=Counter)
    failures: list[tuple] = field(default_factory=list)


def _not_eligible(item: Item, known: Expected | None) -> str | None:
    """Why a live item's title is not a reference a person would type, if it is not."""
    if not item.title.strip():
        return "no title"
    if known is None:
        return "file not UTF-8 (or unreadable by the test's own reading)"
    if not well_formed(item.title):
        return "control characters or too long"
    return None


@pytest.fixture(scope="module")
def resolutions(survey: Survey) -> Resolutions:
    """Every well-formed title of every live item, resolved by exact text and by a partial reference."""
    result = Resolutions()
    for surveyed in survey.files:
        for kind in Kind:
            if kind not in surveyed.fetched:
                continue
            live = surveyed.live(kind)
            by_key: dict[str, set[str]] = {}
            for item in live:
                by_key.setdefault(item.title_key, set()).add(item.uid)
            expected = {e.uid: e for e in surveyed.expected_of(kind)}
            for item in live:
                known = expected.get(item.uid)
                reason = _not_eligible(item, known)
                if reason is not None:
                    result.not_well_formed[reason] += 1
                    continue
                assert known is not None
                same_title = by_key[item.title_key]
                outcome = resolve(survey, item.title, kind, surveyed.collection_id)
                if len(same_title) == 1:
                    ok = outcome.status is Status.OK and outcome.item is not None and outcome.item.uid == item.uid \
                        and outcome.item.etag == item.etag
                    result.exact_ok += ok
                else:
                    ok = outcome.status is Status.NEEDS_CLARIFICATION and {
                        c.uid for c in outcome.candidates} == same_title
                    result.exact_clarified += ok
                if not ok:
                    result.failures.append(("exact", surveyed.loaded.relative, item.uid, item.title,
                                            outcome.status.value, [c.uid for c in outcome.candidates]))
                    continue
                for feature in known.features:
                    result.features[feature] += 1
                partial = partial_reference(item.title)
                if partial is None or normalise(partial) in by_key:
                    continue
                outcome = resolve(survey, partial, kind, surveyed.collection_id)
                if outcome.item is not None and outcome.item.uid == item.uid:
                    result.partial_resolved += 1
                elif item.uid in {c.uid for c in outcome.candidates}:
                    result.partial_found += 1
                else:
                    result.failures.append(("partial", surveyed.loaded.relative, item.uid, item.title, partial,
                                            outcome.status.value, len(outcome.candidates),
                                            [w.code for w in outcome.warnings]))
    return result


def test_corpus__snapshot_answers_equal_live_answers(survey: Survey) -> None:
    """One title per collection and kind through the live server: the same answer as the snapshot."""
    compared = 0
    for surveyed in survey.files:
        for kind in Kind:
            titled = [item for item in surveyed.live(kind) if well_formed(item.title)]
            if not titled:
                continue
            for text in (titled[0].title, partial_reference(titled[0].title) or titled[0].title):
                live = resolve(survey, text, kind, surveyed.collection_id, live=True)
                snapshot = resolve(survey, text, kind, surveyed.collection_id)
                assert (live.status, live.item, live.candidates, [w.code for w in live.warnings]) == (
                    snapshot.status, snapshot.item, snapshot.candidates, [w.code for w in snapshot.warnings]
                ), (surveyed.loaded.relative, text)
                compared += 1
    assert compared > 150


def test_corpus__every_well_formed_title_resolves(resolutions: Resolutions) -> None:
    """By its exact text: the item, or a clarification listing exactly the items sharing the title.

    By a partial reference (all but the last word, or a prefix of a single
    word): the item is among the candidates of the clarification.
    """
    assert resolutions.failures == []
    assert resolutions.exact_ok > 300 and resolutions.partial_found > 200


def test_corpus__hard_titles_match(resolutions: Resolutions) -> None:
    """Non-ASCII, escaped, folded and LANGUAGE-tagged titles all resolved above; each kind occurs."""
    for feature in ("non-ascii", "escaped", "folded", "language-tagged", "task-without-status",
                    "series-with-overrides"):
        assert resolutions.features[feature] > 0, feature


def test_corpus__closed_tasks_and_cancelled_events_never_resolve(survey: Survey) -> None:
    checked = 0
    for surveyed in survey.files:
        if not _readable(surveyed):
            continue
        repaired = EVENT_DIFFERENCES.get(surveyed.loaded.relative, set())
        for kind in Kind:
            live = _live_by_uid(surveyed, kind)
            for expected in surveyed.expected_of(kind):
                if expected.counts or expected.uid in repaired or not well_formed(expected.title):
                    continue
                outcome = resolve(survey, expected.title, kind, surveyed.collection_id)
                returned = ([outcome.item] if outcome.item else []) + list(outcome.candidates)
                assert expected.uid not in {item.uid for item in returned}, (surveyed.loaded.relative, expected)
                assert expected.uid not in live
                checked += 1
    assert checked >= 10


def test_corpus__series_with_overrides_resolve_to_the_series(survey: Survey) -> None:
    found = 0
    for surveyed in survey.files:
        if not _readable(surveyed):
            continue
        live = _live_by_uid(surveyed, Kind.EVENT)
        for expected in surveyed.expected_of(Kind.EVENT):
            if "series-with-overrides" not in expected.features or not expected.counts:
                continue
            assert [i.uid for i in surveyed.live(Kind.EVENT)].count(expected.uid) == 1
            assert live[expected.uid].title == expected.title
            if well_formed(expected.title):
                outcome = resolve(survey, expected.title, Kind.EVENT, surveyed.collection_id)
                resolved = [outcome.item] if outcome.item else list(outcome.candidates)
                assert expected.uid in {item.uid for item in resolved}
            found += 1
    assert found >= 5


# --- the figures ---------------------------------------------------------------


def test_corpus__figures(survey: Survey, resolutions: Resolutions) -> None:
    """Print the figures (run with -s)."""
    routes = survey.corpus.routes()
    pieces_put = sum(len(f.loaded.through_server) for f in survey.files)
    pieces_stored = sum(len(f.loaded.through_storage) for f in survey.files)
    served = sum(len(f.served) for f in survey.files)
    radicale_reasons = Counter(_short(reason) for reason in survey.radicale_skips.values())
    resolver_skips = Counter(s.reason for f in survey.files for r in f.fetched.values() for s in r.skipped)
    live = Counter(kind.value for f in survey.files for kind in Kind for _ in f.live(kind))
    lines = [
        "",
        "iCalendar corpus figures",
        f"  files: {len(survey.files)} (through the server {routes['server']}, via storage {routes['storage']},"
        f" split and mixed {routes['server+storage']})",
        f"  resources: {pieces_put + pieces_stored} ({pieces_put} PUT, {pieces_stored} written to storage);"
        f" served by Radicale {served}",
        f"  skipped by Radicale (its log): {sum(radicale_reasons.values())}",
        *[f"    {count:3d}  {reason}" for reason, count in radicale_reasons.most_common()],
        f"  skipped by the resolver (warning items_skipped, logged): {sum(resolver_skips.values())}",
        *[f"    {count:3d}  {reason}" for reason, count in resolver_skips.most_common()],
        f"  live items read: {live['task']} tasks, {live['event']} events",
        f"  resolved by exact title: {resolutions.exact_ok} (and {resolutions.exact_clarified} shared titles"
        " clarified to exactly their items)",
        f"  found by a partial reference: {resolutions.partial_found} among candidates,"
        f" {resolutions.partial_resolved} resolved",
        f"  live items not resolved by title: {sum(resolutions.not_well_formed.values())}",
        *[f"    {count:3d}  {reason}" for reason, count in resolutions.not_well_formed.most_common()],
        "  titles by feature (all resolved): " + ", ".join(
            f"{name} {count}" for name, count in sorted(resolutions.features.items())),
    ]
    print("\n".join(lines))
    assert routes["server"] + routes["storage"] + routes["server+storage"] == len(survey.files)


def _short(reason: str) -> str:
    """Radicale's reason without positions, names and values, to count alike ones together."""
    reason = re.sub(r"At line \d+: ", "", reason)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"position \d+", "position …", reason)
    reason = re.sub(r"\s+", " ", reason)
    return reason[:90]

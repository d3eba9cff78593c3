"""Titles of a megabyte (issue 38): cut when read, shown cut and marked, resolved within the bounds.

Anyone who can send an invitation can write a SUMMARY of about a megabyte (a
resource may be RESOLVER_MAX_RESOURCE_BYTES). Three such to-dos once took one
resolution past its deadline by a factor of three and to 4.2 GB: the sentence
encoder read each title whole. Here, on the memory calendar and on a real
Radicale: the titles are cut to MAX_TITLE_CHARS with the marker and the flag,
a non-exact reference still gets its outcome, the item still resolves by its
ID and UID (never by its cut text), an envelope of 20 such items stays within
a bound computed from the documented limits, and a deadline that passes while
titles are encoded or matched ends as documented. Nothing here measures time:
the wall time and the memory are bench/hostile.py's (`--titles`).
"""
from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from html import unescape
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from lifeproject import embedded_radicale
from lifeproject.seeding import Spec, seed
from resolver.calendars import ical
from resolver.calendars.memory import MemoryCalendar
from resolver.domain import deadline, semantic, title_vectors
from resolver.domain.errors import CalendarUnavailable
from resolver.domain.items import MAX_TITLE_CHARS, TITLE_CUT_MARKER, Item, Kind, make_item
from resolver.domain.matching import MatchingMemo, build_pool, exact_matches, title_index
from resolver.domain.pipeline import Outcome, Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.requests import parse_request
from resolver.envelope import outcome_envelope
from resolver.judges.disabled import DisabledJudge
from tests.support.resolving import resolve_outcome

NOW = datetime.now(timezone.utc).replace(microsecond=0)
# About a megabyte, and the resource still within RESOLVER_MAX_RESOURCE_BYTES once folded at 75 octets.
HUGE = 990_000
REFERENCE = "budget review for the quarter"
# What names the three huge titles alike (the relevance model offers only what may be meant).
HUGE_REFERENCE = "the huge title agenda notes"
ORDINARY = {"plain-budget": "Quarterly budget review", "plain-passport": "Renew passport",
            "plain-groceries": "Buy groceries"}


def huge_title(n: int, chars: int = HUGE, filler: str = "agenda budget notes quarterly ") -> str:
    return (f"Huge title {n} " + filler * (chars // len(filler) + 1))[:chars]


def task(uid: str, title: str) -> Item:
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK)


def huge_items(count: int = 3, **kwargs: Any) -> list[Item]:
    return [task(f"huge-{n}", huge_title(n, **kwargs)) for n in range(count)]


def assert_cut(item: Item, whole: str) -> None:
    assert len(whole) > MAX_TITLE_CHARS
    assert item.title_truncated
    assert len(item.title) == MAX_TITLE_CHARS + 1 and item.title.endswith(TITLE_CUT_MARKER)
    assert item.title == whole[:MAX_TITLE_CHARS] + TITLE_CUT_MARKER


@pytest.fixture(scope="module")
def model() -> semantic.MultilingualUSE:
    return semantic.MultilingualUSE()


def _resolve(calendar: MemoryCalendar, text: str, encoder: Any) -> Outcome:
    return resolve(request=parse_request(text=text, kind="task"), calendar=calendar, judge=DisabledJudge(),
                   policy=NoThresholds(), request_id="t", semantic=encoder)


# -- the memory calendar -------------------------------------------------------------------


def test_memory__three_megabyte_titles_are_cut_and_a_non_exact_reference_gets_its_outcome(model):
    items = huge_items()
    calendar = MemoryCalendar(items=items + [task(uid, title) for uid, title in ORDINARY.items()])
    for n, item in enumerate(items):
        assert_cut(item, huge_title(n))
    outcome = _resolve(calendar, REFERENCE, model)
    assert outcome.status is Status.NEEDS_CLARIFICATION
    listed = {item.uid: item for item in outcome.candidates}
    assert "plain-budget" in listed and {"huge-0", "huge-1", "huge-2"} <= set(listed)
    assert all(listed[f"huge-{n}"].title_truncated for n in range(3))
    # The encoder read the cut titles: what it memoised is keyed by them, nothing longer.
    assert len(calendar.memo.vectors) == len(calendar.items)
    assert all(calendar.memo.vectors.row(item.title, model.name) is not None for item in calendar.items)


def test_memory__a_cut_item_resolves_by_its_id_and_uid_never_by_its_cut_text(model):
    items = huge_items()
    calendar = MemoryCalendar(items=items + [task(uid, title) for uid, title in ORDINARY.items()])
    for key in (items[1].uid, items[1].item_id):
        outcome = _resolve(calendar, key, model)
        assert outcome.status is Status.OK and outcome.item == items[1] and outcome.item.title_truncated
    # The cut text as shown, or the first MAX_TITLE_CHARS characters, is no exact title.
    for text in (items[1].title[:MAX_TITLE_CHARS], items[1].title[:MAX_TITLE_CHARS - 3] + "..."):
        assert exact_matches(text, calendar.items) == []
        outcome = _resolve(calendar, text, model)
        assert not (outcome.status is Status.OK and outcome.item is not None and outcome.item.uid == "huge-1")


# -- the deadline, on a fake clock ---------------------------------------------------------


class FakeClock:
    """The deadline's clock (resolver/domain/deadline.py reads time.monotonic): moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class Advancing:
    """The real encoder; each call to encode moves the fake clock on by `step` seconds."""

    def __init__(self, inner: semantic.MultilingualUSE, clock: FakeClock, step: float) -> None:
        self.inner, self.clock, self.step = inner, clock, step
        self.batches: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts: Sequence[str]) -> Any:
        self.batches.append(list(texts))
        rows = self.inner.encode(texts)
        self.clock.now += self.step
        return rows


def test_encoding__long_titles_are_encoded_in_batches_of_bounded_characters(model, monkeypatch):
    """The deadline is looked at between batches of at most ENCODE_BATCH_CHARS characters: 40 cut
    titles are several batches, not one of 20,000 characters after which the deadline is seen."""
    items = huge_items(40, chars=2_000)
    clock = FakeClock()  # standing still: neither the deadline nor encoding's share of it passes
    monkeypatch.setattr(deadline, "time", clock)
    monkeypatch.setattr(semantic, "time", clock)
    encoder = Advancing(model, clock, step=0.0)
    memo = MatchingMemo()
    found = semantic.nearest(REFERENCE, title_index(items, memo=memo), memo, encoder, limit=19)
    assert found is not None
    title_batches = encoder.batches[:-1]  # the last call is the reference
    assert sum(map(len, title_batches)) == 40 and len(title_batches) > 1
    assert all(sum(map(len, batch)) <= title_vectors.ENCODE_BATCH_CHARS for batch in title_batches)


def test_encoding__a_deadline_passing_while_titles_are_encoded_ends_as_documented(model, monkeypatch):
    """The deadline passes during the first batch: encoding stops at the next look (the words'
    candidates stand), the judge is not asked, and the clarification says `judgment_unavailable`
    with reason `timeout` (README, docs/calendars.md "Hostile calendars")."""
    clock = FakeClock()
    monkeypatch.setattr(deadline, "time", clock)
    # The share of the deadline encoding may take is measured on the same clock.
    monkeypatch.setattr(semantic, "time", clock)
    encoder = Advancing(model, clock, step=deadline.DEFAULT_SECONDS + 1)
    calendar = MemoryCalendar(items=huge_items(40, chars=2_000) + [task(u, t) for u, t in ORDINARY.items()])
    # Words find one title, weakly: the signal is asked to widen the pool.
    outcome = _resolve(calendar, "passport for the trip", encoder)
    assert len(encoder.batches) == 1  # one batch, then the deadline was seen
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert [item.uid for item in outcome.candidates] == ["plain-passport"]
    [warning] = [w for w in outcome.warnings if str(w.code) == "judgment_unavailable"]
    assert warning.details == {"reason": "timeout"}


def test_matching__an_expired_deadline_raises_calendar_unavailable_timeout():
    items = huge_items(3) + [task(uid, title) for uid, title in ORDINARY.items()]
    with deadline.running(0.0):
        with pytest.raises(CalendarUnavailable) as raised:
            build_pool(REFERENCE, items, limit=19)
        assert raised.value.details == {"reason": "timeout"}
        with pytest.raises(CalendarUnavailable):
            exact_matches("Renew passport", items)
    # Outside any deadline the same work answers.
    assert build_pool(REFERENCE, items, limit=19).candidates


def test_encoder__reads_a_bounded_number_of_tokens_of_any_text(model):
    """NFKC makes U+FDFA eighteen characters: 500 of them were 2,502 tokens. Cut after NFKC, any text is at
    most MAX_ENCODED_CHARS characters and three more tokens (the two ends, the leading space); an ordinary
    text is read as it is."""
    model.encode(["load"])
    tokenizer = model._model._tokenizer
    for text in ("\ufdfa" * 500, "\ufdfa" * 100_000, "漢" * 100_000, "x" * 1_000_000, huge_title(0)):
        read = semantic.encoder_text(text)
        assert len(read) <= semantic.MAX_ENCODED_CHARS
        assert len(tokenizer.encode(read, out_type=int, add_bos=True, add_eos=True)) <= semantic.MAX_ENCODED_CHARS + 3
    for text in ("Führerschein verlängern", huge_items(1)[0].title, "x" * semantic.MAX_ENCODED_CHARS):
        assert semantic.encoder_text(text) is text


# -- a real Radicale -----------------------------------------------------------------------

USER, PASSWORD = "huge-titles", "huge-titles-pw-1"


@pytest.fixture(scope="module")
def huge_radicale() -> Iterator[embedded_radicale.RadicaleInstance]:
    root = Path(tempfile.mkdtemp(prefix="radicale-huge-titles-"))
    instance, process = embedded_radicale.launch(root, username=USER, password=PASSWORD)
    try:
        specs = [Spec(f"huge-{n}", huge_title(n), when=NOW + timedelta(days=n + 1)) for n in range(3)]
        specs += [Spec(uid, title) for uid, title in ORDINARY.items()]
        seed(instance.url, USER, PASSWORD, {"big": ("Big", specs)})
        yield instance
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except Exception:
            process.kill()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def on_huge(huge_radicale, settings) -> embedded_radicale.RadicaleInstance:
    settings.RESOLVER = {"CALDAV_URL": huge_radicale.url, "CALDAV_USERNAME": USER, "CALDAV_PASSWORD": PASSWORD,
                         "CALDAV_TIMEOUT": 10.0, "EVENT_HORIZON_DAYS": 90}
    return huge_radicale


@pytest.mark.django_db  # the approved thresholds are read for a ranked reference
def test_radicale__three_megabyte_titles_are_read_cut_and_resolve(on_huge):
    outcome = resolve_outcome(text=HUGE_REFERENCE, kind="task", collection_ids=["big"], door="test")
    assert all(str(w.code) != "items_skipped" for w in outcome.warnings)
    listed = {item.uid: item for item in outcome.candidates}
    assert outcome.status is Status.NEEDS_CLARIFICATION
    assert {"huge-0", "huge-1", "huge-2"} <= set(listed)
    for n in range(3):
        assert_cut(listed[f"huge-{n}"], huge_title(n))
    data = outcome_envelope(outcome)["data"]
    marked = [c for c in data["candidates"] if c.get("title_truncated")]
    assert {c["uid"] for c in marked} == {"huge-0", "huge-1", "huge-2"}
    assert all(len(c["title"]) == MAX_TITLE_CHARS + 1 for c in marked)
    labels = {o["value"]: o["label"] for o in data["questions"][0]["options"]}
    assert all(labels[c["item_id"]] == c["title"] for c in marked)


def test_radicale__a_cut_item_resolves_by_its_uid_and_id(on_huge):
    by_uid = resolve_outcome(text="huge-2", kind="task", collection_ids=["big"], door="test")
    assert by_uid.status is Status.OK and by_uid.item is not None and by_uid.item.uid == "huge-2"
    assert_cut(by_uid.item, huge_title(2))
    by_id = resolve_outcome(text=by_uid.item.item_id, kind="task", collection_ids=["big"], door="test")
    assert by_id.status is Status.OK and by_id.item == by_uid.item
    envelope = outcome_envelope(by_id)
    assert envelope["data"]["title_truncated"] is True and envelope["data"]["title"] == by_uid.item.title


@pytest.mark.django_db
def test_radicale__the_cut_title_as_shown_is_no_exact_match(on_huge):
    shown = huge_title(0)[:MAX_TITLE_CHARS]
    outcome = resolve_outcome(text=shown, kind="task", collection_ids=["big"], door="test")
    assert outcome.status is not Status.OK or outcome.method is None or outcome.method.value != "deterministic"


def test_parse__the_read_keeps_only_the_cut_title():
    text = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:t\r\nBEGIN:VTODO\r\nUID:huge\r\n"
            f"SUMMARY:{huge_title(0)}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")
    [component] = ical.read_resource(text).components
    assert component.title == huge_title(0)[:MAX_TITLE_CHARS] + TITLE_CUT_MARKER
    [item] = ical.live_items(text, kind=Kind.TASK, collection_path="/u/c/", etag='"e"',
                             window=ical.window_from(NOW, 90))
    assert_cut(item, huge_title(0))


def test_radicale__a_deadline_passing_while_resources_are_parsed_ends_in_calendar_unavailable(on_huge, settings,
                                                                                              monkeypatch):
    """The reader looks at the deadline while it parses what it read: a clock that passes the deadline
    during the first resource's parse ends the request in `calendar_unavailable` / `timeout`."""
    from resolver.calendars.caldav import building

    settings.RESOLVER = {**settings.RESOLVER, "PARSE_CACHE_ITEMS": 0}  # the full read: each resource parsed now
    clock = FakeClock()
    monkeypatch.setattr(deadline, "time", clock)
    parsed: list[str] = []
    real = building.live_items

    def parse_then_pass_the_deadline(text: str, **kwargs: Any) -> list[Item]:
        parsed.append(kwargs["href"])
        clock.now += deadline.DEFAULT_SECONDS + 1
        return real(text, **kwargs)

    monkeypatch.setattr(building, "live_items", parse_then_pass_the_deadline)
    with pytest.raises(CalendarUnavailable) as raised:
        resolve_outcome(text=REFERENCE, kind="task", collection_ids=["big"], door="test")
    assert raised.value.details["reason"] == "timeout"
    assert len(parsed) == 1


@pytest.mark.django_db
def test_page__the_clarification_page_shows_the_cut_titles_with_the_marker(on_huge, client, django_user_model):
    client.force_login(django_user_model.objects.create_user("huge-page", password="huge-page-pw-1"))
    response = client.post("/resolve/", {"text": HUGE_REFERENCE, "kind": "task", "collections": "big"})
    assert response.status_code == 303, response.content.decode()[:500]
    page = unescape(client.get(response["Location"]).content.decode())
    for n in range(3):
        assert huge_title(n)[:MAX_TITLE_CHARS] + TITLE_CUT_MARKER in page
        assert huge_title(n)[:MAX_TITLE_CHARS + 1] not in page
    assert len(page) < 3 * 20 * (MAX_TITLE_CHARS + 1) + 100_000


def test_mcp__the_elicitation_labels_the_cut_title_with_the_marker():
    from resolver.mcp import elicitation

    [cut] = huge_items(1)
    outcome = Outcome(request_id="r", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=None,
                      candidates=(cut, task("plain-passport", "Renew passport")), prompt="Which item do you mean?")
    envelope = outcome_envelope(outcome)
    [first, _second, _none] = elicitation.requested_schema(envelope)["properties"]["item_id"]["oneOf"]
    assert first["title"].startswith(huge_title(0)[:MAX_TITLE_CHARS] + TITLE_CUT_MARKER)
    assert len(first["title"]) < MAX_TITLE_CHARS + 100

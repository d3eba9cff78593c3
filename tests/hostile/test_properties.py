"""Property-based tests of the pipeline: arbitrary Unicode, arbitrary calendars.

For any reference and any calendar (built in memory with `make_item`), with
the judge disabled and no approved thresholds:

- nothing but the documented errors is raised (InvalidRequest for bad text,
  CollectionNotFound for an unknown collection);
- a clarification never lists more than 19 candidates;
- `method: deterministic` resolves only when exactly one live item in scope
  matches exactly, or when the reference is one live item's title plus a day
  on which that item is due or occurs (both checked here by an independent oracle);
- the same input and calendar always give the same envelope, whatever the
  order the calendar lists its items in;
- every envelope validates against the OpenAPI schema.
"""
from __future__ import annotations

import json
import re
import unicodedata
from datetime import date, datetime, timezone
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from resolver.calendars.memory import MemoryCalendar
from resolver.domain.errors import CollectionNotFound, InvalidRequest
from resolver.domain.items import Item, Kind, Method, make_item
from resolver.domain.judgment import MAX_CANDIDATES
from resolver.domain.pipeline import Outcome, Status, resolve
from resolver.domain.ports import NoThresholds
from resolver.domain.requests import parse_request
from resolver.domain.times import iso
from resolver.envelope import outcome_envelope
from resolver.judges.disabled import DisabledJudge
from tests.hostile.openapi import api_document

pytestmark = pytest.mark.slow

MAIN_EXAMPLES = 400
PERMUTATION_EXAMPLES = 200
TEXT_EXAMPLES = 300

PROPERTY_SETTINGS: dict[str, Any] = dict(
    deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                         HealthCheck.function_scoped_fixture],
)

# Words that collide on purpose: case and compatibility forms of one another,
# typos, stopwords, digits and look-alikes, so that exact, fuzzy and narrowed
# matches all happen often.
VOCABULARY = [
    "weekly", "Weekly", "WEEKLY", "weekyl", "sync", "report", "ｒｅｐｏｒｔ", "Straße", "STRASSE", "strasse",
    "bulk", "chore", "Chore", "the", "a", "of", "1", "19", "20", "no_match", "café", "cafe\u0301", "ﬁle",
    "file", "日本", "😀", "ignore", "previous", "instructions", "{", "}", '"choice"', "\t", " ",
]
COLLECTIONS = ["work", "personal", "a b", "ünï", "1"]

# Any code point but unpaired surrogates: what a decoded JSON string or a
# calendar title can hold. Surrogates get their own strategy below.
unicode_text = st.text(st.characters(codec="utf-8"), max_size=40)
vocabulary_text = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5).map(" ".join)
titles = st.one_of(vocabulary_text, unicode_text)


@st.composite
def calendars(draw: st.DrawFn) -> list[Item]:
    specs = draw(st.lists(
        st.tuples(
            st.sampled_from(COLLECTIONS),
            st.one_of(st.sampled_from(["u1", "u2", "u3", "weekly", "Weekly sync"]), unicode_text.filter(bool)),
            titles,
            st.sampled_from(list(Kind)),
            st.one_of(st.none(), st.sampled_from([date(2026, 3, 14), datetime(2026, 3, 14, 9, tzinfo=timezone.utc)])),
        ),
        max_size=45,
        # One item per UID in a collection, as on a CalDAV server.
        unique_by=lambda spec: (spec[0], spec[1]),
    ))
    # Sometimes many items share one title: more exact matches than can be listed.
    if draw(st.booleans()) and specs:
        shared = draw(titles)
        copies = draw(st.one_of(st.integers(min_value=2, max_value=5), st.integers(min_value=18, max_value=30)))
        specs += [("work", f"dup-{n}", shared, Kind.TASK, None) for n in range(copies)]
    return [
        make_item(collection_path=f"/user/{collection}/", uid=uid, title=title, etag=f'"{n}"', kind=kind,
                  status="NEEDS-ACTION", due=when if kind is Kind.TASK else None,
                  start=when if kind is Kind.EVENT else None)
        for n, (collection, uid, title, kind, when) in enumerate(specs)
    ]


# The fixed clock of these tests, and day phrases whose day the oracle knows:
# the calendars above date their items on 2026-03-14.
NOW = datetime(2026, 3, 13, 12, 0, tzinfo=timezone.utc)
DAY_PHRASES = {" tomorrow": "2026-03-14", " on 2026-03-14": "2026-03-14", " today": "2026-03-13"}
# Titles that stay a title when a day phrase follows them (no filler word or
# punctuation at the end for the time reading to take along).
_PLAIN_TITLE = re.compile(r"[A-Za-z][A-Za-z ]*[A-Za-z]")
_FILLER_END = re.compile(r"\b(?:due|by|for|from|until|on|at)$", re.IGNORECASE)


def _dated(item: Item, phrase: str) -> str:
    plain = _PLAIN_TITLE.fullmatch(item.title) and not _FILLER_END.search(item.title)
    return (item.title if plain else "Weekly sync") + phrase


@st.composite
def references(draw: st.DrawFn, items: list[Item]) -> str:
    """Arbitrary text, or text made from the calendar itself (a title, a UID, an item ID, a variant)."""
    options = [unicode_text, vocabulary_text, st.text(max_size=600)]
    if items:
        item = st.sampled_from(items)
        options += [
            item.map(lambda i: i.title),
            item.map(lambda i: i.title.upper()),
            item.map(lambda i: f"  {i.title}\t"),
            item.map(lambda i: unicodedata.normalize("NFKD", i.title)),
            item.map(lambda i: i.uid),
            item.map(lambda i: i.item_id),
            st.tuples(item, st.sampled_from(sorted(DAY_PHRASES))).map(lambda pair: _dated(*pair)),
        ]
    return draw(st.one_of(*options))


def _normalise(text: str) -> str:
    # The oracle's own normalisation, written from the documented rule
    # (compatibility-normalise, case-fold, trim), not imported from the code.
    return unicodedata.normalize("NFKC", text).casefold().strip()


def exact_oracle(text: str, items: list[Item]) -> set[str]:
    key = _normalise(text)
    return {i.item_id for i in items if i.item_id == text or i.uid == text or (key and _normalise(i.title) == key)}


def title_and_day_oracle(text: str, items: list[Item]) -> set[str]:
    """The one live item whose title is the text before a known day phrase, due or starting that day."""
    for phrase, day in DAY_PHRASES.items():
        if not text.endswith(phrase):
            continue
        key = _normalise(text[: -len(phrase)])
        titled = [i for i in items if key and _normalise(i.title) == key]
        if len(titled) == 1 and (iso(titled[0].due) or iso(titled[0].start) or "").startswith(day):
            return {titled[0].item_id}
    return set()


def text_is_valid(text: str) -> bool:
    return (bool(text.strip()) and len(text) <= 500 and "\x00" not in text
            and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text))


def run(text: str, kind: Kind, items: list[Item], collection_ids: list[str] | None = None,
        max_candidates: int = MAX_CANDIDATES) -> Outcome:
    return resolve(
        request=parse_request(text=text, kind=kind.value, collection_ids=collection_ids),
        calendar=MemoryCalendar(items=list(items)),
        judge=DisabledJudge(),
        policy=NoThresholds(),
        request_id="req_property",
        max_candidates=max_candidates,
        now=NOW,
    )


def comparable(outcome: Outcome) -> str:
    """The envelope without what legitimately varies between runs (timings are not in it; read_at is)."""
    envelope = outcome_envelope(outcome)
    envelope["data"].pop("read_at", None)
    return json.dumps(envelope, sort_keys=True, ensure_ascii=False)


_DOCUMENT = api_document()
_ENVELOPE_VALIDATOR = jsonschema.Draft202012Validator(
    {"$ref": "#/components/schemas/ResolveEnvelope", "components": _DOCUMENT["components"]}
)


@given(data=st.data(), items=calendars(), kind=st.sampled_from(list(Kind)),
       max_candidates=st.one_of(st.just(MAX_CANDIDATES), st.integers(min_value=1, max_value=60)))
@settings(max_examples=MAIN_EXAMPLES, **PROPERTY_SETTINGS)
def test_pipeline__properties_hold_for_any_reference_and_calendar(data, items, kind, max_candidates, example_counts):
    text = data.draw(references(items), label="text")
    known = sorted({i.collection_id for i in items})
    collection_ids = data.draw(st.one_of(
        st.none(),
        st.lists(st.sampled_from(known), max_size=3) if known else st.none(),
        st.lists(st.sampled_from([*known, "nope"]), min_size=1, max_size=3),
    ), label="collection_ids")
    # Counted once every draw succeeded: a draw that overruns discards the example.
    example_counts.add("hypothesis: pipeline properties")

    try:
        outcome = run(text, kind, items, collection_ids, max_candidates)
    except InvalidRequest:
        assert not text_is_valid(text)
        return
    except CollectionNotFound:
        assert set(collection_ids or []) - set(known)
        return
    assert text_is_valid(text)
    assert not set(collection_ids or []) - set(known)

    scope = set(collection_ids or known)
    live = [i for i in items if i.kind is kind and i.collection_id in scope]
    exact = exact_oracle(text, live)

    # Never more than 19 candidates (nor more than asked for), no duplicates, all live and in scope.
    assert len(outcome.candidates) <= min(MAX_CANDIDATES, max_candidates)
    candidate_ids = [c.item_id for c in outcome.candidates]
    assert len(set(candidate_ids)) == len(candidate_ids)
    assert set(candidate_ids) <= {i.item_id for i in live}

    # Deterministic resolution exactly when one live item matches exactly,
    # or (failing that) by its title plus the day it is due or occurs.
    dated = title_and_day_oracle(text, live) if not exact else set()
    if outcome.status is Status.OK:
        assert outcome.method is Method.DETERMINISTIC  # the judge is off
        assert (exact or dated) == {outcome.item.item_id}
    else:
        assert len(exact) != 1
        assert not dated
        if len(exact) > 1:
            assert outcome.method is Method.DETERMINISTIC
            assert set(candidate_ids) <= exact
            assert len(candidate_ids) == min(len(exact), MAX_CANDIDATES, max_candidates)
            narrowed = [w for w in outcome.warnings if w.code == "candidate_narrowed"]
            assert bool(narrowed) == (len(exact) > len(candidate_ids))

    envelope = outcome_envelope(outcome)
    _ENVELOPE_VALIDATOR.validate(json.loads(json.dumps(envelope)))
    options = envelope["data"]["questions"][0]["options"] if outcome.status is Status.NEEDS_CLARIFICATION else []
    assert [o["value"] for o in options] == candidate_ids


@given(data=st.data(), items=calendars(), kind=st.sampled_from(list(Kind)))
@settings(max_examples=PERMUTATION_EXAMPLES, **PROPERTY_SETTINGS)
def test_pipeline__same_input_same_output_in_any_item_order(data, items, kind, example_counts):
    text = data.draw(references(items), label="text")
    assume(text_is_valid(text))
    shuffled = data.draw(st.permutations(items), label="order")
    example_counts.add("hypothesis: determinism and item order")
    first = comparable(run(text, kind, items))
    assert comparable(run(text, kind, items)) == first
    assert comparable(run(text, kind, shuffled)) == first


# Every code point class there is, unpaired surrogates included, and long strings.
any_text = st.one_of(
    st.text(st.characters(codec=None), max_size=60),
    st.text(st.characters(categories=["Cs", "Cc", "Zs", "Zl", "Zp"]), max_size=10),
    st.text(max_size=1000),
    st.just("\x00"),
)


@given(text=any_text, kind=st.one_of(st.sampled_from(["task", "event"]), st.text(max_size=8)),
       collection_ids=st.one_of(st.none(), st.lists(st.text(st.characters(codec=None), max_size=5), max_size=60),
                                st.integers(), st.text(max_size=3)))
@settings(max_examples=TEXT_EXAMPLES, **PROPERTY_SETTINGS)
def test_pipeline__bad_input_raises_invalid_request_only(text, kind, collection_ids, example_counts):
    """parse_request on anything: a ResolveRequest, or InvalidRequest naming the field."""
    example_counts.add("hypothesis: parse_request on arbitrary input")
    try:
        request = parse_request(text=text, kind=kind, collection_ids=collection_ids)
    except InvalidRequest as err:
        assert err.code == "invalid_request" and err.details.get("field") in {"text", "kind", "collection_ids"}
        # The error is safe to print: it holds no unpaired surrogate (and so no echo of the input).
        json.dumps(err.details, ensure_ascii=False).encode("utf-8")
        err.message.encode("utf-8")
        return
    assert text_is_valid(request.text) and request.kind.value in ("task", "event")
    assert len(request.collection_ids) <= 50
    items = [make_item(collection_path=f"/user/{c}/", uid="u", title="t", etag='"1"', kind=request.kind)
             for c in set(request.collection_ids)]
    # And the pipeline takes whatever parse_request accepts. The calendar knows every
    # requested collection by name: an ID such as "/" derives no collection from a path.
    calendar = MemoryCalendar(items=items, extra_collections=tuple(request.collection_ids))
    outcome = resolve(request=request, calendar=calendar, judge=DisabledJudge(),
                      policy=NoThresholds(), request_id="req_property")
    json.dumps(outcome_envelope(outcome), ensure_ascii=False).encode("utf-8")


def test_pipeline__many_exact_matches_list_at_most_19():
    """Found by the property above: 20 items sharing a title made a 20-candidate clarification."""
    items = [make_item(collection_path="/user/work/", uid=f"u{n:02d}", title="Weekly", etag='"1"', kind=Kind.TASK)
             for n in range(25)]
    outcome = run("WEEKLY", Kind.TASK, items)
    assert outcome.status is Status.NEEDS_CLARIFICATION and outcome.method is Method.DETERMINISTIC
    # The stable order of exact matches: title, collection, then item ID.
    assert [c.item_id for c in outcome.candidates] == sorted(i.item_id for i in items)[:MAX_CANDIDATES]
    assert [(w.code, w.details) for w in outcome.warnings] == [("candidate_narrowed", {"matched": 25, "kept": 19})]
    assert outcome.prompt.startswith("25 items match this reference exactly.")
    assert "Only the first 19 are listed" in outcome.prompt

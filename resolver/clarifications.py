"""Clarifications: what a question offered, carried in a signed token, and the pick read back live.

Application layer, below every door: the page, the API, the command and the
MCP door all reach this through resolver.services, and nothing here imports a
door.

A token is Django's signing format (a timestamped HMAC over compressed JSON)
with its own salt, so no other signed value of the project can be replayed as
one. It is signed, not encrypted: anyone holding it can decode it. That is why
it carries only opaque identifiers and facts the caller was already shown (the
request ID, kind, collection IDs, item IDs, per offered event the occurrence it
showed, the request's time zone, the judge's suggestion and probabilities, the
user's primary key) and never the reference or an item's title; titles are
read live when the page loads.

What a person picks is what they were shown (the item and the occurrence):
`pick` re-reads the item live and answers the occurrence the token offered, or
raises OccurrenceGone when that occurrence is no longer live.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Sequence

from django.core import signing

from resolver.domain.codes import WarningCode
from resolver.domain.errors import (
    CandidateGone, ClarificationExpired, ClarificationNotFound, CollectionNotFound, NotACandidate, OccurrenceGone,
)
from resolver.domain.items import Item, Kind, Method, Occurrence
from resolver.domain.pipeline import Outcome, Status
from resolver.domain.ports import CalendarSource

SALT = "resolver.clarification"
# 2: per-candidate occurrences and the request's time zone.
VERSION = 2

# The page answers 404 and 410 for these; the API and the command their envelopes.
TokenInvalid = ClarificationNotFound
TokenExpired = ClarificationExpired


def occurrence_key(occurrence: Occurrence) -> str:
    """What identifies an occurrence across reads: its RECURRENCE-ID, or (a single
    event) its start as an instant. `r:` and `s:` keep the two apart."""
    if occurrence.recurrence_id is not None:
        rid = occurrence.recurrence_id
        return "r:" + (rid if isinstance(rid, str) else rid.isoformat())
    return "s:" + _utc(occurrence.start)


def _utc(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat()


def zone_name(zone: Any) -> str | None:
    """The IANA name of a request's zone, whether the request holds a name or a tzinfo."""
    if zone is None or isinstance(zone, str):
        return zone
    key = getattr(zone, "key", None)
    if isinstance(key, str):
        return key
    return "UTC" if zone is timezone.utc else str(zone)


@dataclass(frozen=True)
class ClarificationClaims:
    request_id: str
    kind: Kind
    collection_ids: tuple[str, ...]
    candidate_ids: tuple[str, ...]
    user_id: str
    suggested_item_id: str | None = None
    # Aligned with candidate_ids; empty when the judge gave no probabilities.
    probabilities: tuple[float, ...] = field(default=())
    # Why the clarification was needed (Outcome.reason): the page's heading follows it.
    reason: str | None = None
    # Aligned with candidate_ids: the occurrence each offered event showed
    # (occurrence_key), None for a task or an event without one. Empty: none.
    occurrences: tuple[str | None, ...] = field(default=())
    # The request's IANA zone: the pick re-reads in it, so all-day and
    # floating times land where they were shown. None: UTC.
    time_zone: str | None = None
    # Offered events none of whose occurrences falls in the time the reference
    # named: the nearest was offered, and the page says so.
    outside_range: tuple[str, ...] = field(default=())
    # The item IDs of the done items, or the items of the other kind, the reference names
    # (`closed_item_matched`, `other_kind_matched`), at most CLOSED_IN_TOKEN: the page reads them again to
    # say which they are (IDs only, as for candidates).
    closed: tuple[str, ...] = field(default=())

    def probability_of(self, item_id: str) -> float | None:
        if not self.probabilities or item_id not in self.candidate_ids:
            return None
        return self.probabilities[self.candidate_ids.index(item_id)]

    def occurrence_of(self, item_id: str) -> str | None:
        if not self.occurrences or item_id not in self.candidate_ids:
            return None
        return self.occurrences[self.candidate_ids.index(item_id)]


def claims_for(outcome: Outcome, *, user_id: object, time_zone: Any = None) -> ClarificationClaims:
    candidate_ids = tuple(item.item_id for item in outcome.candidates)
    probabilities: tuple[float, ...] = ()
    if outcome.probabilities:
        probabilities = tuple(float(outcome.probabilities.get(i, 0.0)) for i in candidate_ids)
    suggested = outcome.suggested_item_id if outcome.suggested_item_id in candidate_ids else None
    shown = tuple(occurrence_key(outcome.occurrences[i]) if i in outcome.occurrences else None
                  for i in candidate_ids)
    return ClarificationClaims(
        request_id=outcome.request_id,
        kind=outcome.kind,
        collection_ids=tuple(outcome.collection_ids),
        candidate_ids=candidate_ids,
        user_id="" if user_id is None else str(user_id),
        suggested_item_id=suggested,
        probabilities=probabilities,
        reason=outcome.reason,
        occurrences=shown if any(k is not None for k in shown) else (),
        time_zone=zone_name(time_zone),
        outside_range=tuple(i for w in outcome.warnings if w.code == WarningCode.OCCURRENCE_OUTSIDE_RANGE
                            for i in w.details.get("item_ids", []) if i in candidate_ids),
        closed=tuple(str(shown["item_id"]) for w in outcome.warnings
                     if w.code in (WarningCode.CLOSED_ITEM_MATCHED, WarningCode.OTHER_KIND_MATCHED)
                     for shown in w.details.get("items", []))[:CLOSED_IN_TOKEN],
    )


# A token names at most this many done items (the warning names at most as many).
CLOSED_IN_TOKEN = 3


def issue(claims: ClarificationClaims) -> str:
    # Short keys and a suggestion by position keep the URL short: up to 19
    # item IDs already make a token of several hundred characters.
    payload: dict[str, Any] = {
        "v": VERSION,
        "r": claims.request_id,
        "k": claims.kind.value,
        "c": list(claims.collection_ids),
        "i": list(claims.candidate_ids),
        "u": claims.user_id,
    }
    if claims.suggested_item_id is not None:
        payload["s"] = claims.candidate_ids.index(claims.suggested_item_id)
    if claims.probabilities:
        payload["p"] = [round(p, 4) for p in claims.probabilities]
    if claims.reason is not None:
        payload["w"] = claims.reason
    if claims.occurrences:
        payload["o"] = list(claims.occurrences)
    if claims.time_zone is not None:
        payload["z"] = claims.time_zone
    if claims.outside_range:
        payload["x"] = [claims.candidate_ids.index(i) for i in claims.outside_range]
    if claims.closed:
        payload["d"] = list(claims.closed)
    return signing.dumps(payload, salt=SALT, compress=True)


def read(token: str, *, user_id: object, max_age: int) -> ClarificationClaims:
    """The claims of a genuine, unexpired token issued to `user_id`.

    The user is checked before the age, so an expired token held by someone
    else is a plain 404 too and says nothing about being genuine.
    """
    if not isinstance(token, str):
        raise TokenInvalid()
    try:
        payload = signing.loads(token, salt=SALT, max_age=max_age)
        expired = False
    except signing.SignatureExpired:
        payload = _loads_ignoring_age(token)
        expired = True
    except signing.BadSignature:
        raise TokenInvalid() from None
    claims = _claims(payload)
    if claims.user_id != ("" if user_id is None else str(user_id)):
        raise TokenInvalid()
    if expired:
        raise TokenExpired()
    return claims


def _loads_ignoring_age(token: str) -> Any:
    try:
        return signing.loads(token, salt=SALT, max_age=None)
    except signing.BadSignature:  # cannot happen after SignatureExpired; be safe anyway
        raise TokenInvalid() from None


def _claims(payload: Any) -> ClarificationClaims:
    """Check the shape even though the signature is good: a token from a
    future version, or one signed with a leaked key, must not become a 500."""
    try:
        if not isinstance(payload, dict) or payload.get("v") != VERSION:
            raise ValueError("version")
        candidate_ids = _strings(payload["i"])
        probabilities = tuple(float(p) for p in payload.get("p", []))
        if probabilities and len(probabilities) != len(candidate_ids):
            raise ValueError("probabilities")
        suggested_index = payload.get("s")
        suggested = None
        if suggested_index is not None:
            if not isinstance(suggested_index, int) or not 0 <= suggested_index < len(candidate_ids):
                raise ValueError("suggestion")
            suggested = candidate_ids[suggested_index]
        request_id, user_id = payload["r"], payload["u"]
        if not isinstance(request_id, str) or not isinstance(user_id, str):
            raise ValueError("ids")
        reason = payload.get("w")
        if reason is not None and not isinstance(reason, str):
            raise ValueError("reason")
        occurrences = payload.get("o", [])
        if (not isinstance(occurrences, list) or (occurrences and len(occurrences) != len(candidate_ids))
                or not all(o is None or isinstance(o, str) for o in occurrences)):
            raise ValueError("occurrences")
        zone = payload.get("z")
        if zone is not None and not isinstance(zone, str):
            raise ValueError("time zone")
        outside = payload.get("x", [])
        if not isinstance(outside, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and 0 <= n < len(candidate_ids) for n in outside):
            raise ValueError("outside range")
        closed = _strings(payload.get("d", []))
        if len(closed) > CLOSED_IN_TOKEN:
            raise ValueError("closed")
        return ClarificationClaims(
            request_id=request_id,
            kind=Kind(payload["k"]),
            collection_ids=_strings(payload["c"]),
            candidate_ids=candidate_ids,
            user_id=user_id,
            suggested_item_id=suggested,
            probabilities=probabilities,
            reason=reason,
            occurrences=tuple(occurrences),
            time_zone=zone,
            outside_range=tuple(candidate_ids[n] for n in outside),
            closed=closed,
        )
    except (KeyError, TypeError, ValueError):
        raise TokenInvalid() from None


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("list of strings")
    return tuple(value)


# --- the live re-read ----------------------------------------------------------------


def is_next(item: Item, occurrence: Occurrence | None) -> bool:
    """Whether `occurrence` is the item's next live one (the first in the horizon)."""
    if occurrence is None or not item.occurrences:
        return occurrence is not None  # a single event's one occurrence is its next
    return occurrence_key(item.occurrences[0]) == occurrence_key(occurrence)


def find_occurrence(item: Item, key: str | None) -> Occurrence | None:
    """The live occurrence of `item` the key names, or None when it is no longer live."""
    if key is None:
        return None
    for occurrence in _live_occurrences(item):
        if occurrence_key(occurrence) == key:
            return occurrence
    return None


def _live_occurrences(item: Item) -> tuple[Occurrence, ...]:
    if item.occurrences:
        return item.occurrences
    # A single event whose calendar layer listed no occurrence: its own start.
    start = item.start
    if item.kind is Kind.EVENT and isinstance(start, datetime) and start.tzinfo is not None:
        return (Occurrence(start=start, end=start, recurrence_id=None),)
    return ()


@dataclass(frozen=True)
class LiveCandidate:
    number: int
    item_id: str
    # None when the item is no longer live: deleted, completed, or moved.
    item: Item | None
    suggested: bool
    probability: float | None
    # The occurrence the question offered, as the server has it now; None for a
    # task, or when that occurrence is no longer live (see occurrence_gone).
    occurrence: Occurrence | None = None
    occurrence_gone: bool = False
    # The offered occurrence is the item's next live one.
    next: bool = False
    # None of the item's occurrences fell in the time named: this is the nearest.
    nearest: bool = False

    @property
    def gone(self) -> bool:
        return self.item is None

    @property
    def choosable(self) -> bool:
        return self.item is not None and not self.occurrence_gone

    @property
    def percent(self) -> int | None:
        return None if self.probability is None else round(self.probability * 100)


@dataclass(frozen=True)
class LiveRead:
    items: dict[str, Item]
    read_at: datetime | None
    requests: int


def live_candidates(claims: ClarificationClaims, *, calendar: CalendarSource,
                    time_zone: Any = None) -> list[LiveCandidate]:
    """The token's candidates in its order, each with its item (and offered occurrence) as the server has it now.

    Raises CalendarUnavailable when the server cannot be read.
    """
    read = live_items(kind=claims.kind, collection_ids=claims.collection_ids, wanted=claims.candidate_ids,
                      calendar=calendar, time_zone=time_zone)
    found = []
    for number, item_id in enumerate(claims.candidate_ids, start=1):
        item = read.items.get(item_id)
        key = claims.occurrence_of(item_id)
        occurrence = find_occurrence(item, key) if item is not None else None
        found.append(LiveCandidate(
            number=number, item_id=item_id, item=item,
            suggested=item_id == claims.suggested_item_id, probability=claims.probability_of(item_id),
            occurrence=occurrence, occurrence_gone=item is not None and key is not None and occurrence is None,
            next=item is not None and occurrence is not None and is_next(item, occurrence),
            nearest=item_id in claims.outside_range,
        ))
    return found


def closed_named(claims: ClarificationClaims, *, calendar: CalendarSource, time_zone: Any = None) -> list[Item]:
    """The done items, or the other kind's live ones, the clarification names (claims.closed), as the server
    has them now, in the token's order; those no longer done (or live) or gone are left out. Raises
    CalendarUnavailable when the server cannot be read."""
    if not claims.closed:
        return []
    by_id: dict[str, Item] = {}
    for kind in (claims.kind, claims.kind.other):
        if all(i in by_id for i in claims.closed):
            break
        try:
            fetched = calendar.fetch(kind=kind, collection_ids=claims.collection_ids or None, time_zone=time_zone)
        except CollectionNotFound:
            return []
        by_id.update((item.item_id, item) for item in (fetched.closed if kind is claims.kind else fetched.items))
    return [by_id[i] for i in claims.closed if i in by_id]


def live_items(*, kind: Kind, collection_ids: Sequence[str], wanted: Sequence[str], calendar: CalendarSource,
               time_zone: Any = None) -> LiveRead:
    """The wanted items that are live now, by item ID, when the calendar was read, and how many requests it took."""
    if not wanted:
        return LiveRead({}, None, 0)
    scope: Sequence[str] = collection_ids
    requests = 0
    try:
        fetched = calendar.fetch(kind=kind, collection_ids=scope or None, time_zone=time_zone)
    except CollectionNotFound as err:
        # A collection deleted since the question was asked: its items are gone,
        # the others may still be there.
        missing = set(err.details.get("collection_ids", []))
        if not missing:
            raise
        scope = [cid for cid in scope if cid not in missing]
        if not scope:
            return LiveRead({}, None, 0)
        fetched = calendar.fetch(kind=kind, collection_ids=scope, time_zone=time_zone)
    requests += fetched.requests
    wanted_ids = set(wanted)
    found: dict[str, Item] = {}
    for item in fetched.items:
        if item.item_id in wanted_ids:
            found.setdefault(item.item_id, item)
    return LiveRead(found, fetched.read_at, requests)


def pick(claims: ClarificationClaims, *, item_id: str, calendar: CalendarSource, time_zone: Any = None,
         request_id: str | None = None) -> Outcome:
    """The person picked `item_id` from the question `claims` describe: re-read it
    live and return the `user_selected` outcome with the occurrence they were shown.

    The ETag, href and occurrence are the server's now, so a write conditional on
    them is safe. Raises NotACandidate when the question did not offer `item_id`,
    CandidateGone when the item is no longer live, OccurrenceGone when the
    offered occurrence is no longer live, CalendarUnavailable when the server
    cannot be read.
    """
    if item_id not in claims.candidate_ids:
        raise NotACandidate()
    started = time.perf_counter()
    read = live_items(kind=claims.kind, collection_ids=claims.collection_ids, wanted=(item_id,),
                      calendar=calendar, time_zone=time_zone)
    calendar_ms = round((time.perf_counter() - started) * 1000, 3)
    item = read.items.get(item_id)
    if item is None:
        raise CandidateGone()
    occurrences: dict[str, Occurrence] = {}
    key = claims.occurrence_of(item_id)
    if key is not None:
        occurrence = find_occurrence(item, key)
        if occurrence is None:
            raise OccurrenceGone(details={"item_id": item_id})
        occurrences[item_id] = occurrence
    elif item.kind is Kind.EVENT and item.occurrences:
        # Offered without an occurrence (none was live then): the next one now.
        occurrences[item_id] = item.occurrences[0]
    return Outcome(request_id=request_id or claims.request_id, status=Status.OK, kind=claims.kind,
                   method=Method.USER_SELECTED, item=item, collection_ids=tuple(claims.collection_ids),
                   occurrences=occurrences, read_at=read.read_at, calendar_requests=read.requests,
                   timings={"calendar_ms": calendar_ms})

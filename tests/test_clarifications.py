"""resolver/clarifications.py: clarification tokens, signed, expiring, bound to a user, and free of private text."""
from __future__ import annotations

import base64
import json
import zlib

import pytest
from django.core import signing

from resolver.domain.items import Kind, Method, make_item
from resolver.domain.pipeline import Outcome, Status
from resolver import clarifications as tokens
from tests.web.conftest import issued_seconds_ago

REFERENCE = "the secret offsite thing"


def _outcome(*, suggested: bool = True) -> Outcome:
    items = tuple(
        make_item(collection_path=f"/demo/{cid}/", uid=uid, title=title, etag='"e1"', kind=Kind.TASK)
        for cid, uid, title in [("work", "u1", "Team offsite planning"), ("personal", "u2", "Team offsite plans")]
    )
    probabilities = {items[0].item_id: 0.71, items[1].item_id: 0.2} if suggested else {}
    return Outcome(
        request_id="req_0123", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=Method.SEMANTIC,
        candidates=items, probabilities=probabilities,
        suggested_item_id=items[0].item_id if suggested else None,
        prompt="Which item do you mean?", collection_ids=("personal", "work"),
    )


def _payload(token: str) -> dict:
    """What anyone holding the token can read, without the key."""
    body = token.split(":")[0]
    compressed = body.startswith(".")
    raw = base64.urlsafe_b64decode(body.lstrip(".") + "=" * (-len(body.lstrip(".")) % 4))
    return json.loads(zlib.decompress(raw) if compressed else raw)


def test_tokens__round_trip_keeps_every_claim() -> None:
    outcome = _outcome()
    token = tokens.issue(tokens.claims_for(outcome, user_id=7))
    claims = tokens.read(token, user_id=7, max_age=900)
    assert claims.request_id == "req_0123"
    assert claims.kind is Kind.TASK
    assert claims.collection_ids == ("personal", "work")
    assert claims.candidate_ids == tuple(item.item_id for item in outcome.candidates)
    assert claims.suggested_item_id == outcome.candidates[0].item_id
    assert claims.probabilities == (0.71, 0.2)
    assert claims.user_id == "7"


def test_tokens__without_judgment_has_no_suggestion() -> None:
    claims = tokens.read(tokens.issue(tokens.claims_for(_outcome(suggested=False), user_id=1)),
                         user_id=1, max_age=900)
    assert claims.suggested_item_id is None
    assert claims.probabilities == ()
    assert claims.probability_of(claims.candidate_ids[0]) is None


def test_tokens__carry_ids_only_never_reference_or_titles() -> None:
    """Signed is not encrypted: the readable payload holds opaque IDs and nothing else."""
    outcome = _outcome()
    token = tokens.issue(tokens.claims_for(outcome, user_id=7))
    payload = _payload(token)
    assert set(payload) == {"v", "r", "k", "c", "i", "u", "s", "p"}
    text = json.dumps(payload)
    for secret in (REFERENCE, "Team offsite", "offsite", '"e1"'):
        assert secret not in text


def test_tokens__carry_the_done_items_ids_never_their_titles() -> None:
    """A reference to a done item: the token names it by ID, as a candidate is named."""
    from resolver.domain.codes import Reason, WarningCode
    from resolver.domain.pipeline import OutcomeWarning

    done = make_item(collection_path="/demo/home/", uid="rice", title="Buy rice", etag='"e"', kind=Kind.TASK,
                     status="COMPLETED")
    warning = OutcomeWarning.of(WarningCode.CLOSED_ITEM_MATCHED, items=[{
        "item_id": done.item_id, "title": done.title, "status": "COMPLETED", "collection_id": "home"}])
    outcome = Outcome(request_id="req_d", status=Status.NEEDS_CLARIFICATION, kind=Kind.TASK, method=None,
                      reason=Reason.NO_CANDIDATES, warnings=(warning,), collection_ids=("home",))
    token = tokens.issue(tokens.claims_for(outcome, user_id=7))
    assert tokens.read(token, user_id=7, max_age=900).closed == (done.item_id,)
    assert _payload(token)["d"] == [done.item_id] and "rice" not in json.dumps(_payload(token)).lower()


def test_tokens__tampered_is_invalid() -> None:
    token = tokens.issue(tokens.claims_for(_outcome(), user_id=7))
    body, rest = token.split(":", 1)
    forged = signing.dumps({**_payload(token), "u": "8"}, salt="another.salt", compress=True)
    for bad in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), body + "x:" + rest, forged, "", "x"):
        with pytest.raises(tokens.TokenInvalid):
            tokens.read(bad, user_id=7, max_age=900)


def test_tokens__other_salt_is_invalid() -> None:
    """A value signed for another purpose with the same key is not a token."""
    payload = _payload(tokens.issue(tokens.claims_for(_outcome(), user_id=7)))
    with pytest.raises(tokens.TokenInvalid):
        tokens.read(signing.dumps(payload, compress=True), user_id=7, max_age=900)


def test_tokens__foreign_user_is_invalid() -> None:
    token = tokens.issue(tokens.claims_for(_outcome(), user_id=7))
    with pytest.raises(tokens.TokenInvalid):
        tokens.read(token, user_id=8, max_age=900)


def test_tokens__expired() -> None:
    with issued_seconds_ago(901):
        token = tokens.issue(tokens.claims_for(_outcome(), user_id=7))
    with pytest.raises(tokens.TokenExpired):
        tokens.read(token, user_id=7, max_age=900)


def test_tokens__expired_and_foreign_is_invalid_not_expired() -> None:
    """An expired token held by someone else says nothing about being genuine."""
    with issued_seconds_ago(901):
        token = tokens.issue(tokens.claims_for(_outcome(), user_id=7))
    with pytest.raises(tokens.TokenInvalid):
        tokens.read(token, user_id=8, max_age=900)


@pytest.mark.parametrize("payload", [
    {"v": 1, "r": "req", "k": "task", "c": [], "i": [], "u": "7"},
    {"v": 3, "r": "req", "k": "task", "c": [], "i": [], "u": "7"},
    {"v": 2, "r": "req", "k": "note", "c": [], "i": [], "u": "7"},
    {"v": 2, "r": "req", "k": "task", "c": [], "i": ["a"], "u": "7", "s": 3},
    {"v": 2, "r": "req", "k": "task", "c": [], "i": ["a"], "u": "7", "p": [0.1, 0.2]},
    {"v": 2, "r": "req", "k": "task", "c": "work", "i": [], "u": "7"},
    {"v": 2, "k": "task", "c": [], "i": [], "u": "7"},
    {"v": 2, "r": "req", "k": "event", "c": [], "i": ["a"], "u": "7", "o": ["r:x", "r:y"]},
    {"v": 2, "r": "req", "k": "event", "c": [], "i": ["a"], "u": "7", "o": [7]},
    {"v": 2, "r": "req", "k": "event", "c": [], "i": ["a"], "u": "7", "z": ["Europe/Berlin"]},
    {"v": 2, "r": "req", "k": "task", "c": [], "i": [], "u": "7", "d": "itm_a"},
    {"v": 2, "r": "req", "k": "task", "c": [], "i": [], "u": "7", "d": ["a", "b", "c", "d"]},
    ["not", "a", "dict"],
])
def test_tokens__malformed_payload_is_invalid(payload: object) -> None:
    """Even correctly signed, a payload of the wrong shape is a 404, not a 500."""
    with pytest.raises(tokens.TokenInvalid):
        tokens.read(signing.dumps(payload, salt=tokens.SALT, compress=True), user_id=7, max_age=900)


def test_tokens__carry_each_offered_occurrence_and_the_zone() -> None:
    """What a pick must answer: per offered event its occurrence (RECURRENCE-ID, or start), and the zone."""
    from datetime import datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    from resolver.domain.items import Occurrence

    start = datetime(2030, 3, 16, 10, tzinfo=timezone.utc)
    series = Occurrence(start=start, end=start + timedelta(hours=1), recurrence_id="20300316T100000Z")
    single = Occurrence(start=start, end=start + timedelta(hours=1), recurrence_id=None)
    events = tuple(make_item(collection_path="/demo/work/", uid=uid, title="Weekly sync", etag='"e"', kind=Kind.EVENT)
                   for uid in ("e1", "e2", "e3"))
    outcome = Outcome(request_id="req_e", status=Status.NEEDS_CLARIFICATION, kind=Kind.EVENT, method=None,
                      candidates=events, occurrences={events[0].item_id: series, events[1].item_id: single})
    claims = tokens.read(tokens.issue(tokens.claims_for(outcome, user_id=7, time_zone=ZoneInfo("Europe/Berlin"))),
                         user_id=7, max_age=900)
    assert claims.occurrences == ("r:20300316T100000Z", "s:2030-03-16T10:00:00+00:00", None)
    assert claims.time_zone == "Europe/Berlin"
    assert claims.occurrence_of(events[2].item_id) is None

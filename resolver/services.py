"""The one application layer every door calls: settings and models in, outcomes and envelopes out.

A door (the API views, `manage.py resolve`, the page, the MCP door) parses its
input into a JSON document, names its `Caller` (door, user, base URL), calls
one function here and renders the `Answer` it returns:

    answer(document, caller=) -> Answer                 # resolve; a clarification carries its token and link
    pick(claims_or_token, item_id=, caller=) -> Answer  # user_selected: the item and occurrence shown, re-read live
    read_clarification(token, caller=) -> ClarificationClaims
    clarification_candidates(claims, caller=) -> list[LiveCandidate]   # the page's cards, read live
    collections_envelope(request_id=, caller=) -> dict
    error_envelope_for(error, request_id=) -> dict      # any exception; internals never leak
    user_for_username(username) -> user                  # the local doors' --user
    calendar_for(caller) -> CalendarSource               # the one place a caller's calendar is chosen

Tests and benchmarks resolve through `answer` too (its `.outcome` is the pipeline's
Outcome; they may pass their own calendar, judge or policy). Backends are chosen by
dotted path in `RESOLVER` (`CALENDAR_BACKEND`, `JUDGE_BACKEND`, `SEMANTIC_ENCODER`)
and built by resolver.conf.build_backend, the one place any backend is built; nothing here
writes to the calendar. Tokens and the live re-read are resolver.clarifications';
nothing here imports a door.

Every call that reads a calendar runs under one deadline for the request
(RESOLVER_RESOLUTION_BUDGET_SECONDS, resolver/domain/deadline.py): resolving
(with the unknown-collection message's listing), picking, the clarification
page's live re-read and listing collections. Past it, the reader ends with
`calendar_unavailable` / `timeout`. A door opens that deadline once around
all its steps (`request(caller)`: a page that picks and then shows the
question again spends one budget), and takes one of the person's places in
flight (RESOLVER["MAX_IN_FLIGHT_PER_PERSON"]); a door that counts its own rate
outside DRF (the pages) calls `check_rate(caller)` first (resolver/throttling.py).
"""
from __future__ import annotations

import logging
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, ContextManager, Iterator, Sequence

from django.apps import apps
from django.urls import NoReverseMatch, reverse

from resolver import clarifications, deadline, envelope
from resolver.conf import build_backend, resolver_settings
from resolver.domain import judgment as jdg
from resolver.domain.errors import CollectionNotFound, InvalidRequest, ResolverError
from resolver.domain.escaping import for_terminal, quoted
from resolver.domain.items import Collection, Item
from resolver.domain.pipeline import Outcome, Status, resolve
from resolver.domain.ports import CalendarSource, Judge, ThresholdPolicy
from resolver.domain.requests import RequestLimits, ResolveRequest, parse_document, parse_request, parse_time_zone
# The process's backends, each built once and kept by the app's registries, handed to the pipeline.
from resolver.encoders import semantic_encoder
from resolver.judges.registry import judge_from_settings
from resolver.rankers import relevance_model
from resolver.request_ids import new_request_id

logger = logging.getLogger("resolver.requests")
error_logger = logging.getLogger("resolver.errors")


# --- backends ------------------------------------------------------------------


def calendar_from_settings() -> CalendarSource:
    """The calendar backend `RESOLVER["CALENDAR_BACKEND"]` names, configured from the settings."""
    return build_backend("CALENDAR_BACKEND")


def policy_from_settings() -> ThresholdPolicy:
    from resolver.thresholds import DatabaseThresholdPolicy

    return DatabaseThresholdPolicy()


# --- requests --------------------------------------------------------------------


def request_limits() -> RequestLimits:
    """The request rules' limits, as the settings give them (read on every call)."""
    return RequestLimits(
        max_text_length=int(resolver_settings.MAX_TEXT_LENGTH),
        max_collection_ids=int(resolver_settings.MAX_COLLECTION_IDS),
        max_candidates=min(int(resolver_settings.MAX_CANDIDATES), jdg.MAX_CANDIDATES),
    )


def max_body_bytes() -> int:
    """The largest request document a door reads (RESOLVER["MAX_BODY_BYTES"]): the API's body, `--input -`."""
    return int(resolver_settings.MAX_BODY_BYTES)


def body_too_large(limit: int) -> InvalidRequest:
    return InvalidRequest(f"The request body must be at most {limit} bytes.",
                          details={"field": "body", "max_bytes": limit})


def default_time_zone() -> str:
    return str(resolver_settings.TIME_ZONE)


def parse(*, text: Any, kind: Any, collection_ids: Any = None, time_zone: Any = None) -> ResolveRequest:
    return parse_request(text=text, kind=kind, collection_ids=collection_ids, time_zone=time_zone,
                         limits=request_limits(), default_time_zone=default_time_zone())


# --- resolving -------------------------------------------------------------------


@deadline.bounded  # one deadline for the whole request (RESOLVER_RESOLUTION_BUDGET_SECONDS)
def _resolve(request: ResolveRequest, *, request_id: str | None, door: str, calendar: CalendarSource,
             judge: Judge | None, policy: ThresholdPolicy | None) -> Outcome:
    """Validate, resolve, and log provenance. Raises ResolverError subclasses."""
    try:
        outcome = _resolved(request, request_id=request_id, calendar=calendar, judge=judge, policy=policy)
    except CollectionNotFound as err:
        raise _naming_collections(err, calendar) from None
    _record_provenance(outcome)
    log_outcome(outcome, door=door)
    return outcome


# A message lists at most this many known collections; details hold them all.
_KNOWN_LISTED = 10


def _naming_collections(err: CollectionNotFound, calendar: CalendarSource) -> CollectionNotFound:
    """The error again, naming the unknown IDs and the known ones ("known: personal, work")."""
    unknown = [str(cid) for cid in err.details.get("collection_ids", [])]
    try:
        known = sorted(c.collection_id for c in calendar.collections())
    except ResolverError:
        return err
    listed = ", ".join(for_terminal(cid) for cid in known[:_KNOWN_LISTED]) + (", ..." if len(known) > _KNOWN_LISTED else "")
    named = ", ".join(quoted(cid) for cid in unknown)  # untrusted: escaped (resolver/domain/escaping.py)
    plural = "s" if len(unknown) > 1 else ""
    return CollectionNotFound(f"Unknown collection ID{plural} {named}; known: {listed or 'none'}.",
                              details={**err.details, "known_collection_ids": known})


def _resolved(request: ResolveRequest, *, request_id: str | None, calendar: CalendarSource,
              judge: Judge | None, policy: ThresholdPolicy | None) -> Outcome:
    return resolve(
        request=request,
        calendar=calendar,
        judge=judge or judge_from_settings(),
        policy=policy or policy_from_settings(),
        request_id=request_id or new_request_id(),
        max_candidates=request_limits().max_candidates,
        language=str(resolver_settings.LANGUAGE),
        semantic=semantic_encoder(),
        ranker=relevance_model(),
        other_kind=bool(resolver_settings.OTHER_KIND),
    )


def provenance_of(outcome: Outcome) -> dict[str, Any] | None:
    if outcome.question is None or not isinstance(outcome.judgment, jdg.Judgment):
        return None
    from resolver.provenance import provenance_dict

    return provenance_dict(outcome.question, outcome.judgment, rule=outcome.rule)


def _record_provenance(outcome: Outcome) -> None:
    provenance = provenance_of(outcome)
    if provenance is None or outcome.decision is None:
        return
    from resolver.provenance import record

    assert isinstance(outcome.judgment, jdg.Judgment)
    record(
        request_id=outcome.request_id,
        provenance=provenance,
        probabilities_by_number=outcome.judgment.number_probabilities(),
        number_to_item_id=outcome.numbering,
        decision=outcome.status.value,
        reason=outcome.decision.reason,
    )


# --- envelopes -------------------------------------------------------------------


def envelope_for(outcome: Outcome, *, clarification_url: str | None = None) -> dict[str, Any]:
    return envelope.outcome_envelope(outcome, provenance=provenance_of(outcome),
                                     clarification_url=clarification_url)


def error_envelope_for(error: BaseException, *, request_id: str) -> dict[str, Any]:
    """The envelope for any failure: a ResolverError as it is, anything else as internal_error.

    Only ResolverErrors say what went wrong; an unexpected exception is logged
    here with its traceback and the caller learns nothing about internals.
    """
    if isinstance(error, ResolverError):
        return envelope.resolver_error_envelope(error, request_id=request_id)
    error_logger.error("unexpected error", exc_info=error, extra={"request_id": request_id})
    return envelope.internal_error_envelope(request_id=request_id)


@deadline.bounded  # one deadline for the whole request (RESOLVER_RESOLUTION_BUDGET_SECONDS)
def list_collections(*, caller: Caller | None = None, calendar: CalendarSource | None = None) -> Sequence[Collection]:
    return (calendar or calendar_for(caller)).collections()


def collections_envelope(*, request_id: str, caller: Caller | None = None,
                         calendar: CalendarSource | None = None) -> dict[str, Any]:
    return envelope.collections_envelope(list_collections(caller=caller, calendar=calendar), request_id=request_id)


# --- callers and the door contract --------------------------------------------------


@dataclass(frozen=True)
class Caller:
    """Who asks, through which door: every door builds one and passes it on.

    `user` is the authenticated user (a Django user), or None for a local door
    run without one (the command and the stdio MCP server without `--user`):
    then no page link is made, and tokens are bound to nobody who can sign in.
    `base_url` is where the page is served (scheme, host, any prefix; "" for a
    host-relative path); None: no page link. The calendar is chosen for the
    caller (`calendar_for`), so a per-user account needs no change in a door.
    """

    door: str
    user: Any = field(default=None, repr=False)
    base_url: str | None = None

    @property
    def user_id(self) -> object:
        return None if self.user is None else self.user.pk


@dataclass(frozen=True)
class Answer:
    """What a door renders: the outcome, its envelope, and for a clarification what it offered."""

    outcome: Outcome
    envelope: dict[str, Any]
    # For a clarification: the offered candidates and occurrences, and their signed form.
    claims: clarifications.ClarificationClaims | None = None
    token: str | None = None
    # The page's URL for the clarification (absolute unless base_url is ""), or None.
    clarification_url: str | None = None

    @property
    def status(self) -> Status:
        return self.outcome.status


def in_flight(caller: Caller) -> ContextManager[None]:
    """One of the caller's places in flight for the block (Throttled, reason in_flight, when all are taken).

    Nobody (a local door run without a user) has no places to count.
    """
    if caller.user_id is None:
        return nullcontext()
    from resolver.throttling import InFlight

    return InFlight(int(resolver_settings.MAX_IN_FLIGHT_PER_PERSON),
                    budget_seconds=deadline.configured_seconds()).held(f"user:{caller.user_id}")


@contextmanager
def request(caller: Caller) -> Iterator[deadline.Deadline]:
    """A door's whole request: one of the person's places in flight, and one deadline every step joins."""
    with in_flight(caller), deadline.budget() as opened:
        yield opened


def check_rate(caller: Caller) -> None:
    """Count one request that reads CalDAV against the person's rate (the API's bucket); Throttled over it."""
    if caller.user_id is not None:
        from resolver.throttling import check_rate

        check_rate(caller.user_id)


def calendar_for(caller: Caller | None) -> CalendarSource:
    """The calendar source this caller's requests read: the one place it is chosen.

    RESOLVER["ACCOUNT_BACKEND"] decides (resolver/accounts.py): the settings' one
    account for everyone, or only the caller's own accounts (no_calendar_account
    for a caller with none, or with no user).
    """
    from resolver import accounts

    return accounts.calendar_for(None if caller is None else caller.user)


def user_for_username(username: str) -> Any:
    """The active user a local door (`manage.py resolve`/`mcp --user`) acts for; InvalidRequest otherwise.

    Page links are built from RESOLVER["SITE_URL"], so it is required too: a
    typo fails before resolving instead of producing a link nobody can open.
    """
    from resolver import accounts

    # With per-user accounts --user also names whose calendars to read, which
    # needs no site: without SITE_URL the answer then carries no link.
    if not resolver_settings.SITE_URL and not accounts.per_user():
        raise InvalidRequest("--user needs RESOLVER['SITE_URL'] (the RESOLVER_SITE_URL environment variable).",
                             details={"field": "user"})
    from django.contrib.auth import get_user_model

    user_model = get_user_model()
    try:
        user = user_model._default_manager.get_by_natural_key(username)
    except user_model.DoesNotExist:
        user = None
    if user is None or not user.is_active:
        raise InvalidRequest(f"No such user: {username!r}.", details={"field": "user", "value": username})
    return user


@deadline.bounded  # one deadline for the whole request (RESOLVER_RESOLUTION_BUDGET_SECONDS)
def answer(document: Any, *, caller: Caller, request_id: str | None = None, calendar: CalendarSource | None = None,
           judge: Judge | None = None, policy: ThresholdPolicy | None = None) -> Answer:
    """The door contract: a parsed JSON document (`{"text", "kind", "collection_ids"?, "time_zone"?}`)
    and the caller in, what the door renders out. Raises ResolverError subclasses.

    `calendar`, `judge`, `policy`: the caller's and the settings' unless given (tests, benchmarks).
    """
    request = parse_document(document, limits=request_limits(), default_time_zone=default_time_zone())
    outcome = _resolve(request, request_id=request_id, door=caller.door, calendar=calendar or calendar_for(caller),
                       judge=judge, policy=policy)
    if outcome.status is not Status.NEEDS_CLARIFICATION:
        return Answer(outcome=outcome, envelope=envelope_for(outcome))
    claims = clarifications.claims_for(outcome, user_id=caller.user_id, time_zone=request.time_zone)
    token = clarifications.issue(claims)
    url = _page_url(token, caller)
    return Answer(outcome=outcome, envelope=envelope_for(outcome, clarification_url=url), claims=claims,
                  token=token, clarification_url=url)


def read_clarification(token: str, *, caller: Caller) -> clarifications.ClarificationClaims:
    """The claims of a token this caller was given. Raises ClarificationNotFound or ClarificationExpired."""
    return clarifications.read(token, user_id=caller.user_id,
                               max_age=int(resolver_settings.CLARIFICATION_MAX_AGE_SECONDS))


@deadline.bounded  # one deadline for the whole request (RESOLVER_RESOLUTION_BUDGET_SECONDS)
def clarification_candidates(claims: clarifications.ClarificationClaims, *,
                             caller: Caller) -> list[clarifications.LiveCandidate]:
    """The token's candidates in its order, each (and its offered occurrence) as the server has it now."""
    return clarifications.live_candidates(claims, calendar=calendar_for(caller), time_zone=_zone_of(claims))


def clarification_closed(claims: clarifications.ClarificationClaims, *, caller: Caller) -> list[Item]:
    """The done items the clarification names, as the server has them now (clarifications.closed_named)."""
    return clarifications.closed_named(claims, calendar=calendar_for(caller), time_zone=_zone_of(claims))


@deadline.bounded  # one deadline for the whole request (RESOLVER_RESOLUTION_BUDGET_SECONDS)
def pick(claims: clarifications.ClarificationClaims | str, *, item_id: str, caller: Caller) -> Answer:
    """The person picked `item_id` from a clarification (its claims, or its token):
    the `user_selected` answer with the item and the occurrence they were shown, re-read live.

    Raises NotACandidate, CandidateGone, OccurrenceGone, CalendarUnavailable,
    and for a token ClarificationNotFound or ClarificationExpired.
    """
    if isinstance(claims, str):
        claims = read_clarification(claims, caller=caller)
    outcome = clarifications.pick(claims, item_id=item_id, calendar=calendar_for(caller),
                                  time_zone=_zone_of(claims))
    log_outcome(outcome, door=caller.door)
    return Answer(outcome=outcome, envelope=envelope_for(outcome))


def next_occurrence_ids(outcome: Outcome) -> frozenset[str]:
    """The candidates whose offered occurrence is their next live one: only these are labelled "next"."""
    return frozenset(item.item_id for item in outcome.candidates
                     if clarifications.is_next(item, outcome.occurrences.get(item.item_id)))


def _zone_of(claims: clarifications.ClarificationClaims) -> Any:
    """The token's zone as the request held it; an old token without one: the default."""
    return parse_time_zone(claims.time_zone if claims.time_zone is not None else default_time_zone())


def _page_url(token: str, caller: Caller) -> str | None:
    """The page for the token, when the caller can open it and the project mounted the page.

    The app is reusable and the page is optional: without its URLs, no link.
    """
    if caller.user is None or caller.base_url is None:
        return None
    try:
        path = reverse("resolver_web:clarify", kwargs={"token": token})
    except NoReverseMatch:
        return None
    return caller.base_url.rstrip("/") + path if caller.base_url else path


# --- logging ---------------------------------------------------------------------


def log_outcome(outcome: Outcome, *, door: str) -> None:
    """One structured line per resolution: no user text, no titles, no secrets."""
    logger.info(
        "resolution",
        extra={
            "request_id": outcome.request_id,
            "door": door,
            "status": outcome.status.value,
            "method": outcome.method.value if outcome.method else None,
            "calendar_ms": outcome.timings.get("calendar_ms"),
            "matching_ms": outcome.timings.get("matching_ms"),
            "judgment_ms": outcome.timings.get("judgment_ms"),
            "candidates": len(outcome.candidates),
            "calendar_requests": outcome.calendar_requests,
        },
    )


# --- accounts: what the accounts page and `manage.py calendar_accounts` call --------------
# resolver/accounts.py does the work (the live check, the limits, sealing); the doors call
# these, never it, as they call `answer` and never the pipeline.


def accounts_per_user() -> bool:
    """True when each person connects their own accounts (RESOLVER["ACCOUNT_BACKEND"] is PerUserAccounts)."""
    from resolver import accounts

    return accounts.per_user()


def add_account(*, user: Any, url: str, username: str, password: str, label: str = "",
                client_address: str | None = None) -> tuple[Any, list[Collection]]:
    """Check the account live against its server, then save it for `user`: the row and its collections.

    AccountRejected (with `details.reason`) or Throttled, and nothing saved,
    when it fails; `client_address` (a page's) is throttled as well as the person.
    """
    from resolver import accounts

    return accounts.add_account(user=user, url=url, username=username, password=password, label=label,
                                client_address=client_address)


def account_overview(*, user: Any) -> list[Any]:
    """Each of `user`'s accounts read live (`accounts.AccountState`: collections, or the error), one deadline."""
    from resolver import accounts

    return accounts.overview(user)


def remove_account(*, user: Any, account_id: Any) -> bool:
    """Delete `user`'s account `account_id`; False when they have none by that ID (another person's included)."""
    from resolver import accounts

    return accounts.remove_account(user=user, account_id=account_id)


@dataclass(frozen=True)
class Resealed:
    """What `reseal_account_passwords` did: how many it re-encrypted, and the IDs no key decrypts."""

    count: int
    unreadable: tuple[Any, ...]


def reseal_account_passwords() -> Resealed:
    """Re-encrypt every stored account password with the current SECRET_KEY (after a key rotation).

    A password no key decrypts is left as it is and named: its owner must connect the account again.
    """
    from resolver.models import CalendarAccount
    from resolver.sealing import Unsealable, reseal

    count, unreadable = 0, []
    for account in CalendarAccount.objects.all().iterator():
        try:
            account.password_sealed = reseal(account.password_sealed)
        except Unsealable:
            unreadable.append(account.pk)
            continue
        account.save(update_fields=["password_sealed"])
        count += 1
    return Resealed(count=count, unreadable=tuple(unreadable))

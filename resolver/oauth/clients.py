"""Which clients a Client ID Metadata Document may create, and when: a signed-in person, bounded, by last use.

django-oauth-toolkit fetches a client's metadata document the first time it
meets a `client_id` URL, wherever that is: the authorize page, but also the
unauthenticated token and revoke endpoints, where anyone could make the site
fetch URLs and store one Application row each. Here a document is fetched
only while a signed-in person is on the authorize page (`consenting()`, which
the app's authorize view enters), and then only within these bounds, checked
before any fetch (the rates first, so a refused request deletes nothing):

1. One fetch in flight per person (the default cache, across workers): a
   second one at the same time is `throttled`.
2. RESOLVER["OAUTH_CIMD_FETCH_RATE"] fetches per person and per client
   address (resolver/throttling.py's sliding window): `throttled`.
3. Room (new clients only). The rows made from documents are at most
   RESOLVER["OAUTH_CIMD_MAX_CLIENTS"], and the person on the page may have
   been the last to use at most RESOLVER["OAUTH_CIMD_MAX_CLIENTS_PER_PERSON"]
   of them. When either is full, the least recently used row nobody uses
   (no live grant, access token or refresh token) makes room; it costs its
   client one more fetch on its next visit, nothing else. Only when every
   such row is in use is the new client refused: so one person can fill only
   their own share, never lock out another person's new client.
4. At most RESOLVER["OAUTH_CIMD_FETCHES_IN_FLIGHT"] fetches at once in a
   process. A fetch finding them all taken waits for one, up to twice the
   fetch's own bound (CIMD_FETCH_TIMEOUT_SECONDS): each fetch is cut at that
   bound and gives its slot back then (documents.py), and nobody holds more
   than one, so a well-behaved client waits at most about one bound behind
   other people's slow documents, however slow; only when the slots are
   taken again and again for the whole wait is it `temporarily_unavailable`.

A refusal of a new client is said on the authorize page (views.py) with its
status and code; a refused refresh of a stale row keeps its last good
document. Rows nobody has used for RESOLVER["OAUTH_CIMD_UNUSED_SECONDS"]
are deleted whenever room is made. Who used a row last, and when, is
`resolver.models.DocumentClient` (updated by the authorize page and by each
token issued).
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from resolver.client_address import client_address
from resolver.conf import resolver_settings
from resolver.domain.errors import Throttled
from resolver.throttling import AttemptLimiter

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refusal:
    """Why a new document client was not fetched, as the authorize page says it."""

    status: int
    code: str
    description: str
    retry_after: int | None = None


@dataclass
class Consent:
    """A signed-in person's request on the authorize page: who, from where, and what it holds."""

    user_id: Any
    address: str
    refusal: Refusal | None = None
    _keys: list[str] = field(default_factory=list)
    _slot: bool = False

    def may_fetch(self, client_id: str) -> bool:
        new = not _documents().filter(client_id=client_id).exists()
        if self._slot:
            return True  # this request already holds its fetch slot
        seconds = _fetch_seconds()
        # One at a time per person (not per address: people behind one NAT would queue for each other;
        # the address's rate below bounds how many one address starts).
        key = f"user:{self.user_id}"
        if not _in_flight.take(key, seconds):
            return self._refuse(Refusal(429, "throttled", "A client description is being fetched for you "
                                                           "already; try again in a moment.",
                                        max(1, round(seconds))), new)
        self._keys.append(key)
        try:
            _limiter().attempt([f"user:{self.user_id}", f"address:{self.address}"])
        except Throttled as err:
            wait = int(err.details.get("retry_after_seconds", 60))
            return self._refuse(Refusal(429, "throttled", f"Too many new applications; try again in {wait} "
                                                          "seconds.", wait), new)
        if new:  # after the rates: a refused request deletes nothing to make room
            refusal = _make_room(self.user_id)
            if refusal is not None:
                return self._refuse(refusal, new)
        # Every holder's fetch is cut at `seconds` and gives its slot back then (`fetched`).
        if not _slots.acquire(2 * seconds):
            return self._refuse(Refusal(503, "temporarily_unavailable", "The site is fetching many client "
                                                                        "descriptions; try again shortly.",
                                        max(1, round(seconds))), new)
        self._slot = True
        return True

    def _refuse(self, refusal: Refusal, new: bool) -> bool:
        logger.info("Client ID Metadata Document not fetched: %s.", refusal.code)
        if new:  # a stale row keeps its last good document, and the page works with it
            self.refusal = refusal
        self.release()
        return False

    def release(self) -> None:
        for key in self._keys:
            _in_flight.give(key)
        self._keys.clear()
        if self._slot:
            _slots.release()
            self._slot = False


_consent: ContextVar[Consent | None] = ContextVar("resolver_oauth_consent", default=None)


@contextlib.contextmanager
def consenting(request: Any) -> Iterator[Consent]:
    """While the app's authorize view handles a signed-in person's `request` (Django's)."""
    # The connection's address, or a named proxy's forwarded one (resolver/client_address.py).
    consent = Consent(user_id=request.user.pk, address=client_address(request))
    token = _consent.set(consent)
    try:
        yield consent
    finally:
        _consent.reset(token)
        consent.release()


def fetched() -> None:
    """The fetch this request held a slot for is over (documents.py): its slots go back at once."""
    consent = _consent.get()
    if consent is not None:
        consent.release()


class SignedInPersonOnly:
    """django-oauth-toolkit's CIMD_REGISTRATION_PERMISSION_CLASSES: fetch only on the authorize page, within bounds.

    Asked before every fetch, a first one or the refresh of a stale row. Off
    the authorize page the answer is no, so an unknown URL client is an
    unknown client there (`invalid_client`) and a stale row keeps its last
    good document.
    """

    def has_permission(self, request: Any, client_id: str) -> bool:
        consent = _consent.get()
        if consent is None:
            logger.info("Client ID Metadata Document not fetched: no signed-in person on the authorize page.")
            return False
        return consent.may_fetch(client_id)


# --- the bounds' state ------------------------------------------------------------------------------


class _InFlight:
    """One fetch at a time per key, across workers: a key in the default cache, expiring on its own."""

    PREFIX = "resolver:oauth:cimd:in-flight:"

    def take(self, key: str, seconds: float) -> bool:
        from django.core.cache import cache

        # Expires by itself should a worker die holding it: twice the fetch's bound.
        return bool(cache.add(self.PREFIX + key, 1, int(2 * seconds) + 1))

    def give(self, key: str) -> None:
        from django.core.cache import cache

        cache.delete(self.PREFIX + key)


class _Slots:
    """At most RESOLVER["OAUTH_CIMD_FETCHES_IN_FLIGHT"] fetches at once in this process; waiting is bounded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._semaphore: threading.BoundedSemaphore | None = None
        self._size = 0

    def _current(self) -> threading.BoundedSemaphore:
        size = max(1, int(resolver_settings.OAUTH_CIMD_FETCHES_IN_FLIGHT))
        with self._lock:
            if self._semaphore is None or self._size != size:
                self._semaphore, self._size = threading.BoundedSemaphore(size), size
            return self._semaphore

    def acquire(self, seconds: float) -> bool:
        return self._current().acquire(timeout=max(0.0, seconds))

    def release(self) -> None:
        try:
            self._current().release()
        except ValueError:  # resized while held (settings changed in a test): nothing to give back
            pass


_in_flight = _InFlight()
_slots = _Slots()


def _limiter() -> AttemptLimiter:
    return AttemptLimiter("oauth-cimd", resolver_settings.OAUTH_CIMD_FETCH_RATE)


def _fetch_seconds() -> float:
    from oauth2_provider.settings import oauth2_settings

    return float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)


# --- rows: room, use, purge ---------------------------------------------------------------------------


def _documents() -> Any:
    from oauth2_provider.models import get_application_model

    application_model = get_application_model()
    return application_model.objects.filter(registration_source=application_model.RegistrationSource.CIMD)


def used(client_id: str | None, user: Any = None) -> None:
    """Record a use of the document client `client_id` now (by `user`, when a person is known)."""
    from django.utils import timezone

    from resolver.models import DocumentClient

    if not client_id or not _documents().filter(client_id=client_id).exists():
        return
    values: dict[str, Any] = {"last_used": timezone.now()}
    if user is not None and getattr(user, "is_authenticated", False):
        values["used_by"] = user
    DocumentClient.objects.update_or_create(client_id=client_id, defaults=values)


def _in_use(now: Any) -> set[Any]:
    """The application IDs with a live grant, access token or unrevoked refresh token."""
    from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model
    from oauth2_provider.settings import oauth2_settings

    in_use = set(get_access_token_model().objects.filter(expires__gt=now).values_list("application_id", flat=True))
    in_use |= set(get_grant_model().objects.filter(expires__gt=now).values_list("application_id", flat=True))
    refresh_after = now - timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or 0)
    in_use |= set(get_refresh_token_model().objects.filter(revoked__isnull=True, created__gt=refresh_after)
                  .values_list("application_id", flat=True))
    return in_use


def _idle_by_last_use(now: Any, *, user_id: Any = None) -> list[tuple[Any, Any, str]]:
    """(last use, pk, client_id) of the document rows nobody uses, least recently used first.

    With `user_id`, only the rows that person used last. A row with no record
    of use (made before uses were recorded) counts as used when last updated.
    """
    from resolver.models import DocumentClient

    records = {r.client_id: r for r in DocumentClient.objects.all()}
    busy = _in_use(now)
    rows = []
    for pk, client_id, updated in _documents().values_list("pk", "client_id", "updated"):
        record = records.get(client_id)
        if user_id is not None and (record is None or record.used_by_id != user_id):
            continue
        if pk not in busy:
            rows.append((record.last_used if record else updated, pk, client_id))
    return sorted(rows)


def _delete(pks: list[Any], client_ids: list[str]) -> int:
    from resolver.models import DocumentClient

    deleted = _documents().filter(pk__in=pks).delete()[0] if pks else 0
    DocumentClient.objects.filter(client_id__in=client_ids).delete()
    return deleted


def _make_room(user_id: Any) -> Refusal | None:
    """Room for one more row from a document, for this person; or why there is none."""
    from django.utils import timezone

    from resolver.models import DocumentClient

    now = timezone.now()
    purge_unused(now=now)
    per_person = int(resolver_settings.OAUTH_CIMD_MAX_CLIENTS_PER_PERSON)
    existing = set(_documents().values_list("client_id", flat=True))
    mine = DocumentClient.objects.filter(used_by_id=user_id, client_id__in=existing).count()
    if mine >= per_person:
        idle = _idle_by_last_use(now, user_id=user_id)[: mine - per_person + 1]
        if len(idle) < mine - per_person + 1:
            return Refusal(403, "too_many_clients", f"You use {mine} applications that describe themselves "
                                                    "(the most one person may); revoke one to add another.")
        _delete([pk for _, pk, _ in idle], [c for _, _, c in idle])
    total = _documents().count()
    bound = int(resolver_settings.OAUTH_CIMD_MAX_CLIENTS)
    if total >= bound:
        idle = _idle_by_last_use(now)[: total - bound + 1]
        if len(idle) < total - bound + 1:
            logger.warning("Client ID Metadata Document not fetched: %s clients from documents, all in use.", bound)
            return Refusal(503, "temporarily_unavailable", "The site holds as many applications as it may, "
                                                          "all in use; try again later.", 3600)
        _delete([pk for _, pk, _ in idle], [c for _, _, c in idle])
    return None


def purge_unused(*, now: Any = None) -> int:
    """Delete the rows made from documents that nobody uses and nobody used lately; their number."""
    from django.utils import timezone

    from resolver.models import DocumentClient

    now = now or timezone.now()
    cutoff = now - timedelta(seconds=int(resolver_settings.OAUTH_CIMD_UNUSED_SECONDS))
    stale = [(pk, client_id) for last, pk, client_id in _idle_by_last_use(now) if last < cutoff]
    deleted = _delete([pk for pk, _ in stale], [c for _, c in stale])
    # Records of rows deleted elsewhere (the admin): gone too.
    DocumentClient.objects.exclude(client_id__in=_documents().values_list("client_id", flat=True)).delete()
    return deleted
